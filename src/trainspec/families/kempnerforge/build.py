"""Every parameter tensor KempnerForge builds for a config, with where the trainer places it.

Written from how KempnerForge builds its model (kempnerforge-build reference §1–§2: module by module
shapes; §3.5: what tensor parallelism shards; §2.4: what is frozen). Counts are exact for every text
model, MoE and VLM arch and adapter; a vision encoder whose weights come from a hub cannot be counted
offline, and is named in `Model.not_counted` instead. `memory.py` turns the tensors into bytes per rank.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from .layout import expert_ffn_hidden, ffn_hidden
from .rules import HF_ENCODERS, RANDOM_ENCODER_TOKENS, RANDOM_ENCODER_WIDTH
from .rules_5666d0d import tokens_per_frame

GROUPS = (
    "embedding",
    "attention",
    "mlp",
    "experts",
    "shared_expert",
    "router",
    "norms",
    "head",
    "cross_attention",
    "adapter",
    "vision_encoder",
)
"""Module groups parameters are counted by, in the order `show` lists them."""


@dataclass(frozen=True)
class Tensor:
    """`count` identical parameters named like `name` (the first of them).

    - `shape`: global shape; FSDP shards dim 0 into equal (padded) chunks.
    - `tp`: "column" (dim 0 split by tp), "row" (dim 1 split) or "replicated".
    - `ep`: "count" (routed experts: each expert-parallel rank keeps count / ep of them), "rows"
      (packed experts: dim 0 is the expert index), or "" (not split by ep).
    - `layer`: the text block it belongs to (-1: before the blocks, n_layers: after them), for
      pipeline stages.
    """

    name: str
    group: str
    shape: tuple[int, ...]
    count: int = 1
    tp: str = "replicated"
    ep: str = ""
    layer: int = -1
    trainable: bool = True

    @property
    def numel(self) -> int:
        n = self.count
        for size in self.shape:
            n *= size
        return n


@dataclass
class Model:
    """The built model: its tensors, the freeze state, and what could not be counted (with why)."""

    tensors: list[Tensor] = field(default_factory=list)
    not_counted: dict[str, str] = field(default_factory=dict)
    sequence_parallel: bool = False

    def total(self, trainable: bool | None = None) -> int:
        return sum(t.numel for t in self.tensors if trainable is None or t.trainable == trainable)

    def by_group(self) -> dict[str, int]:
        found = {g: 0 for g in GROUPS}
        for t in self.tensors:
            found[t.group] += t.numel
        return {g: n for g, n in found.items() if n}


def norm(name: str, width: int, norm_type: str, layer: int, group: str = "norms") -> Iterator[Tensor]:
    """RMSNorm has a weight; LayerNorm a weight and a bias."""
    yield Tensor(f"{name}.weight", group, (width,), layer=layer)
    if norm_type == "layernorm":
        yield Tensor(f"{name}.bias", group, (width,), layer=layer)


def mlp(name: str, d: int, f: int, activation: str, layer: int, group: str = "mlp", **kw: Any) -> Iterator[Tensor]:
    """SwiGLU (silu) has gate, up and down; gelu and relu MLPs up and down. Bias-free."""
    column = kw.pop("tp", "column")
    row = "row" if column == "column" else column
    names = ("gate_proj", "up_proj") if activation == "silu" else ("up_proj",)
    for part in names:
        yield Tensor(f"{name}.{part}.weight", group, (f, d), tp=column, layer=layer, **kw)
    yield Tensor(f"{name}.down_proj.weight", group, (d, f), tp=row, layer=layer, **kw)


def attention(
    name: str, d: int, heads: int, kv: int, layer: int, group: str = "attention", tp: bool = True
) -> Iterator[Tensor]:
    """q, k, v column-parallel and o row-parallel under tensor parallelism (§3.5)."""
    hd = d // heads
    column, row = ("column", "row") if tp else ("replicated", "replicated")
    yield Tensor(f"{name}.q_proj.weight", group, (heads * hd, d), tp=column, layer=layer)
    yield Tensor(f"{name}.k_proj.weight", group, (kv * hd, d), tp=column, layer=layer)
    yield Tensor(f"{name}.v_proj.weight", group, (kv * hd, d), tp=column, layer=layer)
    yield Tensor(f"{name}.o_proj.weight", group, (d, heads * hd), tp=row, layer=layer)


def moe(name: str, model: Mapping[str, Any], layer: int) -> Iterator[Tensor]:
    """Routed experts, the router and one shared expert whatever `moe_shared_experts` says (§1.3).

    Under tensor parallelism all of it stays replicated; expert parallelism splits the routed experts.
    """
    d, e, act = model["dim"], model["num_experts"], model["activation"]
    fe = expert_ffn_hidden(model)
    if model.get("moe_packed_experts"):
        parts = ("gate_w", "up_w") if act == "silu" else ("up_w",)
        for part in parts:
            yield Tensor(f"{name}.{part}", "experts", (e, d, fe), ep="rows", layer=layer)
        yield Tensor(f"{name}.down_w", "experts", (e, fe, d), ep="rows", layer=layer)
    else:
        yield from mlp(f"{name}.experts.0", d, fe, act, layer, "experts", tp="replicated", count=e, ep="count")
    yield Tensor(f"{name}.router.gate.weight", "router", (e, d), layer=layer)
    if model["moe_router"] == "sigmoid_topk":
        yield Tensor(f"{name}.router.expert_bias", "router", (e,), layer=layer)
    if model["moe_shared_experts"] > 0:
        yield from mlp(f"{name}.shared_expert", d, fe, act, layer, "shared_expert", tp="replicated")


def text_block(prefix: str, model: Mapping[str, Any], i: int, tp: bool = True) -> Iterator[Tensor]:
    """One `TransformerBlock` (or one modality's copy of a MoT block, `tp` False: never sharded)."""
    d, heads, nt = model["dim"], model["n_heads"], model["norm_type"]
    kv = model["n_kv_heads"] or heads
    yield from norm(f"{prefix}.attention_norm", d, nt, i)
    yield from attention(f"{prefix}.attention", d, heads, kv, i, tp=tp)
    if model["qk_norm"]:
        yield Tensor(f"{prefix}.attention.q_norm.weight", "norms", (d // heads,), layer=i)
        yield Tensor(f"{prefix}.attention.k_norm.weight", "norms", (d // heads,), layer=i)
    yield from norm(f"{prefix}.mlp_norm", d, nt, i)
    if model["num_experts"] > 0 and (i + 1) % model["moe_frequency"] == 0:
        yield from moe(f"{prefix}.mlp", model, i)
    else:
        yield from mlp(
            f"{prefix}.mlp", d, ffn_hidden(model), model["activation"], i, tp="column" if tp else "replicated"
        )


def moma_block(prefix: str, model: Mapping[str, Any], vlm: Mapping[str, Any], i: int) -> Iterator[Tensor]:
    """Shared norms and attention, then per modality an expert-choice group of experts and its gate (§2.1)."""
    d, fe, act = model["dim"], expert_ffn_hidden(model), model["activation"]
    dense = {**model, "num_experts": 0}
    for t in text_block(prefix, dense, i):
        if t.group != "mlp":
            yield t
    for modality in vlm["moma_modalities"]:
        e = vlm["moma_experts_per_modality"].get(modality, 0)
        name = f"{prefix}.mlp.{modality}"
        yield from mlp(f"{name}.experts.0", d, fe, act, i, "experts", tp="replicated", count=e)
        yield Tensor(f"{name}.gate.weight", "router", (e, d), layer=i)


def transformer(model: Mapping[str, Any], vlm: Mapping[str, Any] | None, prefix: str = "") -> Iterator[Tensor]:
    """The text model, or a VLM's transformer with its arch's blocks (§1.2, §2.1)."""
    d, n_layers, v, nt = model["dim"], model["n_layers"], model["vocab_size"], model["norm_type"]
    arch = vlm["arch"] if vlm is not None else None
    yield Tensor(f"{prefix}token_embedding.embedding.weight", "embedding", (v, d))
    for i in range(n_layers):
        block = f"{prefix}layers.{i}"
        if arch == "mot":
            for modality in vlm["mot_modalities"]:  # type: ignore[index]
                for t in text_block(block, model, i, tp=False):
                    yield replace(t, name=t.name.replace(f"{block}.", f"{block}.{modality}.", 1))
        elif arch == "moma":
            yield from moma_block(block, model, vlm, i)  # type: ignore[arg-type]
        else:
            yield from text_block(block, model, i)
    if arch == "cross_attention":
        yield from cross_attention_blocks(f"{prefix}cross_attention_layers", model, vlm)  # type: ignore[arg-type]
    if arch == "mot":
        for modality in vlm["mot_modalities"]:  # type: ignore[index]
            yield from norm(f"{prefix}mot_norms.{modality}", d, nt, n_layers)
    final = list(norm(f"{prefix}norm", d, nt, n_layers))
    yield from (replace(t, trainable=False) for t in final) if arch == "mot" else final  # MoT freezes it
    if not model["tie_embeddings"]:
        yield Tensor(f"{prefix}output_head.proj.weight", "head", (v, d), layer=n_layers)


def cross_attention_blocks(name: str, model: Mapping[str, Any], vlm: Mapping[str, Any]) -> Iterator[Tensor]:
    """floor(n_layers / every) blocks: norms, attention (own head counts, no qk-norm), dense MLP; never
    sharded by tensor parallelism."""
    d = model["dim"]
    heads = vlm["cross_attention_n_heads"] or model["n_heads"]
    kv = vlm["cross_attention_n_kv_heads"] or heads
    group = "cross_attention"
    for j in range(model["n_layers"] // vlm["cross_attention_every_n_layers"]):
        block, layer = f"{name}.{j}", (j + 1) * vlm["cross_attention_every_n_layers"] - 1
        yield from norm(f"{block}.attention_norm", d, model["norm_type"], layer, group)
        yield from attention(f"{block}.attention", d, heads, kv, layer, group, tp=False)
        yield from norm(f"{block}.mlp_norm", d, model["norm_type"], layer, group)
        yield from mlp(f"{block}.mlp", d, ffn_hidden(model), model["activation"], layer, group, tp="replicated")


def encoder_width(encoder: Mapping[str, Any]) -> int | None:
    """The width the adapter reads: `feature_dim`, else what the encoder reports (None: a hub model's)."""
    if encoder["feature_dim"] > 0:
        return int(encoder["feature_dim"])
    return None if encoder["type"] in HF_ENCODERS else RANDOM_ENCODER_WIDTH


def adapter(config: Mapping[str, Any], f_in: int) -> Iterator[Tensor]:
    """The adapter's Linears, every one with a bias (§2.2)."""
    spec, d = config["adapter"], config["model"]["dim"]

    def linear(name: str, out: int, inp: int) -> Iterator[Tensor]:
        yield Tensor(f"adapter.{name}.weight", "adapter", (out, inp))
        yield Tensor(f"adapter.{name}.bias", "adapter", (out,))

    if spec["type"] == "mlp_2layer":
        hidden = spec["hidden_dim"] or d
        yield from linear("fc1", hidden, f_in)
        yield from linear("fc2", d, hidden)
        return
    if spec["type"] == "attentional_pool":
        for part in ("q_proj", "k_proj", "v_proj", "o_proj"):
            yield from linear(part, f_in, f_in)
    yield from linear("proj" if spec["type"] != "attentional_pool" else "out_proj", d, f_in)


def freeze_specs(vlm: Mapping[str, Any]) -> Iterator[tuple[tuple[str, ...], bool]]:
    """(fnmatch patterns, frozen) of each `vlm.freeze` spec, in order: an alias of `module_patterns`, or
    the module written as a pattern of its own."""
    aliases = vlm.get("module_patterns") or {}
    for spec in vlm.get("freeze") or []:
        if isinstance(spec, dict) and isinstance(spec.get("module"), str):
            module = spec["module"]
            yield tuple(aliases.get(module) or (module, f"{module}.*")), bool(spec.get("frozen", True))


def apply_freeze(tensors: list[Tensor], vlm: Mapping[str, Any]) -> list[Tensor]:
    """`requires_grad` as the build leaves it: each spec sets it on the parameters its patterns match."""
    for patterns, frozen in freeze_specs(vlm):
        tensors = [
            replace(t, trainable=not frozen) if any(fnmatch.fnmatchcase(t.name, p) for p in patterns) else t
            for t in tensors
        ]
    return tensors


def sequence_parallel(config: Mapping[str, Any]) -> bool:
    """Whether tensor parallelism runs with sequence parallelism: not on a pipeline stage, untied, not MoE."""
    model, dist = config["model"], config["distributed"]
    return dist["pp"] <= 1 and not model["tie_embeddings"] and model["num_experts"] <= 0


def build(config: Mapping[str, Any]) -> Model:
    """The model KempnerForge builds for a resolved config."""
    model, vlm = config["model"], config.get("vlm")
    built = Model(sequence_parallel=sequence_parallel(config))
    prefix = "transformer." if vlm is not None else ""
    tensors = list(transformer(model, vlm, prefix))
    head_sharded = built.sequence_parallel
    tensors = [replace(t, tp="column") if t.group == "head" and head_sharded else t for t in tensors]
    if vlm is not None:
        encoder = config["vision_encoder"]
        width = encoder_width(encoder)
        if encoder["type"] in HF_ENCODERS:
            source = encoder.get("path") or "an empty vision_encoder.path"
            built.not_counted["vision_encoder"] = (
                f'vision_encoder.type = "{encoder["type"]}" loads its weights from the hub ({source}): its size is '
                "that model's, which trainspec cannot read offline"
            )
        if width is None:
            built.not_counted["adapter"] = (
                "its input width is the hub encoder's hidden size (vision_encoder.feature_dim = 0): set "
                "vision_encoder.feature_dim to count it"
            )
        else:
            tensors += adapter(config, width)
        tensors = apply_freeze(tensors, vlm)
    built.tensors = tensors
    return built


def visual_tokens(config: Mapping[str, Any]) -> int | None:
    """Visual tokens entering the language model per sample: frames × tokens per frame after the adapter;
    None when the encoder's own (hub) token count decides it."""
    encoder, adapter_spec = config["vision_encoder"], config.get("adapter") or {}
    n = encoder["num_tokens"] or (RANDOM_ENCODER_TOKENS if encoder["type"] == "random" else 0)
    if n <= 0:
        return None
    per_frame = tokens_per_frame(adapter_spec.get("type"), adapter_spec.get("pool_window"), n)
    frames = (config.get("video") or {}).get("max_frames") or 1
    return None if per_frame is None else frames * per_frame
