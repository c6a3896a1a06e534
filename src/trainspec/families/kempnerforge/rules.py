"""KempnerForge rules: what its JobConfig checks beyond single fields.

Ids follow the reference's names. World-size rules take `world_size`;
`dp_shard = -1` means "all remaining ranks" and is resolved from it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

from trainspec.spec.paths import Path, format_path
from trainspec.spec.rules import ABSENT, Violation, passing_divisors, rule
from trainspec.spec.wording import show

HF_ENCODERS = ("siglip2", "clip")
RANDOM_ENCODER_WIDTH = 768
"""The random encoder's feature width when `vision_encoder.feature_dim` is 0."""
RANDOM_ENCODER_TOKENS = 16
"""The random encoder's token count when `vision_encoder.num_tokens` is 0."""
REGISTRIES: dict[Path, tuple[str, ...]] = {
    ("model", "model_type"): ("transformer",),
    ("optimizer", "name"): ("adamw", "lion", "muon", "schedule_free_adamw"),
    ("train", "loss_fn"): ("chunked_cross_entropy", "cross_entropy"),
    ("model", "moe_router"): ("sigmoid_topk", "softmax_topk"),
}


def residual_image_tokens(arch: str, num_tokens: int) -> int:
    """Image tokens that sit in the residual stream: none for cross-attention."""
    return 0 if arch == "cross_attention" else num_tokens


# -- §5: inside one section ---------------------------------------------------------


@rule("model-heads-divide-dim", "error", "model.dim", "model.n_heads")
def heads_divide_dim(dim: int, n_heads: int) -> Iterator[str]:
    """Each attention head gets dim / n_heads channels, so n_heads must divide dim."""
    if dim % n_heads:
        yield (
            f"model.dim = {dim} is not divisible by model.n_heads = {n_heads} "
            f"(head_dim would be {_ratio(dim, n_heads)})"
        )


def _ratio(a: int, b: int) -> str:
    """a / b as `:g` writes it; past a float's range (1e308), its whole part and a fraction."""
    try:
        return f"{a / b:g}"
    except OverflowError:
        return f"{show(a // b)} and a fraction"


@rule("model-kv-heads-divide-heads", "error", "model.n_kv_heads", "model.n_heads")
def kv_heads_divide_heads(n_kv_heads: int, n_heads: int) -> Iterator[str]:
    """Grouped-query attention shares each kv head among n_heads / n_kv_heads query heads."""
    if n_heads % n_kv_heads:
        implicit = (
            " (model.n_kv_heads is 32 when it is not written: KempnerForge keeps its built-in value, not n_heads; "
            f"write model.n_kv_heads = {n_heads} for one kv head per query head, or a divisor of {n_heads})"
            if n_kv_heads == 32
            else ""
        )
        fits = "" if implicit else f"; model.n_kv_heads values that pass: {passing_divisors(n_heads)}"
        yield f"model.n_heads = {show(n_heads)} is not divisible by model.n_kv_heads = {n_kv_heads}{implicit}{fits}"


@rule("model-moe-top-k-le-experts", "error", "model.moe_top_k", "model.num_experts")
def top_k_le_experts(top_k: int, num_experts: int) -> Iterator[str]:
    """A token cannot be routed to more experts than the model has."""
    if num_experts > 0 and top_k > num_experts:
        yield f"model.moe_top_k = {top_k} exceeds model.num_experts = {num_experts}"


def _increasing(items: list[dict[str, Any]], where: Path) -> Iterator[Violation]:
    for i in range(1, len(items)):
        before, after = items[i - 1].get("start_step"), items[i].get("start_step")
        if isinstance(before, int) and isinstance(after, int) and after <= before:
            at, previous = format_path((*where, i, "start_step")), format_path((*where, i - 1, "start_step"))
            yield Violation(
                f"{at} = {after} must be greater than {previous} = {before} (start steps must strictly increase)",
                at=(*where, i, "start_step"),
            )


@rule("data-phases-increasing", "error", "data.phases")
def phases_increasing(phases: list[dict[str, Any]]) -> Iterator[Violation]:
    """Training phases take effect in order, so their start steps must strictly increase."""
    yield from _increasing(phases, ("data", "phases"))


@rule("profiling-window", "error", "profiling.end_step", "profiling.start_step")
def profiling_window(end: int, start: int) -> Iterator[str]:
    """The profiler window must be non-empty; KempnerForge checks it even when profiling is off."""
    if end <= start:
        yield f"profiling.end_step = {end} must be greater than profiling.start_step = {start}"


@rule("vlm-freeze-schedule-increasing", "error", "vlm.freeze_schedule")
def freeze_schedule_increasing(stages: list[dict[str, Any]] | None) -> Iterator[Violation]:
    """Freeze stages apply in order, so their start steps must strictly increase."""
    yield from _increasing(stages or [], ("vlm", "freeze_schedule"))


# -- §6: cross-section, VLM -----------------------------------------------------------


@rule(
    "vlm-hf-encoder-override",
    "warning",
    "vision_encoder.type",
    "vision_encoder.feature_dim",
    "vision_encoder.num_tokens",
    "vlm",
)
def hf_encoder_override(kind: str | None, feature_dim: int, num_tokens: int, vlm: Any) -> Iterator[Violation]:
    """SigLIP2 and CLIP encoders report their own width and token count; setting them overrides that."""
    if vlm is None or kind not in HF_ENCODERS:
        return
    set_ = [(n, v) for n, v in (("feature_dim", feature_dim), ("num_tokens", num_tokens)) if v > 0]
    if set_:
        named = " and ".join(f"vision_encoder.{n} = {v}" for n, v in set_)
        yield Violation(
            f'vision_encoder.type = "{kind}" reports its own dimensions, but {named} '
            "overrides them and may not match the loaded model; leave them at 0 to use the reported values",
            related=(("vision_encoder", "type"), *(("vision_encoder", n) for n, _ in set_)),
        )


_TEXT_BUDGET = (("vlm", "max_text_len"), ("vlm", "arch"))
"""What a sequence-budget finding names besides the length it is about."""


def _budget(arch: str, num_tokens: int, max_text_len: int) -> tuple[int, int]:
    r = residual_image_tokens(arch, num_tokens)
    return r, r + max_text_len


@rule(
    "vlm-max-seq-len-budget", "error", "model.max_seq_len", "vision_encoder.num_tokens", "vlm.max_text_len", "vlm.arch"
)
def max_seq_len_budget(
    max_seq_len: int, num_tokens: int | None, max_text_len: int | None, arch: str | None
) -> Iterator[Violation]:
    """The model's positions must hold the image tokens in the residual stream plus the text."""
    if arch is None or not num_tokens or max_text_len is None:
        return
    r, need = _budget(arch, num_tokens, max_text_len)
    if max_seq_len < need:
        yield Violation(
            f"model.max_seq_len = {max_seq_len} is too small for this VLM: {r} image tokens in the residual "
            f'stream (vlm.arch = "{arch}") + vlm.max_text_len = {max_text_len} = {show(need)}',
            related=(("model", "max_seq_len"), *_TEXT_BUDGET),
        )


# -- §7: launch-time rules ---------------------------------------------------------------

_DEGREES = (
    "distributed.dp_replicate",
    "distributed.dp_shard",
    "distributed.tp",
    "distributed.pp",
    "distributed.cp",
    "distributed.ep",
)


@rule("world-size-auto-shard-divisible", "error", *_DEGREES)
def auto_shard_divisible(
    dp_replicate: int, dp_shard: int, tp: int, pp: int, cp: int, ep: int, *, world_size: int
) -> Iterator[Violation]:
    """With dp_shard = -1 the remaining ranks become FSDP shards, so the other degrees must divide the world size."""
    other = dp_replicate * tp * pp * cp * ep
    if dp_shard == -1 and world_size % other:
        yield Violation(
            f"world size {world_size} is not divisible by dp_replicate·tp·pp·cp·ep = "
            f"{dp_replicate}·{tp}·{pp}·{cp}·{ep} = {show(other)}, so distributed.dp_shard = -1 cannot be resolved; "
            f"products of these degrees that pass: {passing_divisors(world_size)}",
            at=("distributed", "dp_shard"),
        )


@rule("world-size-product", "error", *_DEGREES)
def world_size_product(
    dp_replicate: int, dp_shard: int, tp: int, pp: int, cp: int, ep: int, *, world_size: int
) -> Iterator[Violation]:
    """The six parallel degrees must multiply to the number of ranks."""
    other = dp_replicate * tp * pp * cp * ep
    if dp_shard == -1:
        if world_size % other:
            return  # reported by world-size-auto-shard-divisible
        shard, note = world_size // other, " (dp_shard = -1 resolved)"
    else:
        shard, note = dp_shard, ""
    product = other * shard
    if product != world_size:
        yield Violation(
            f"dp_replicate·dp_shard·tp·pp·cp·ep = {dp_replicate}·{shard}·{tp}·{pp}·{cp}·{ep} = {show(product)}{note} "
            f"but the world size is {world_size}; set distributed.dp_shard = -1 or adjust the degrees",
            at=("distributed", "dp_shard"),
        )


@rule("seq-len-within-max", "error", "train.seq_len", "model.max_seq_len", at_launch=True)
def seq_len_within_max(seq_len: int, max_seq_len: int) -> Iterator[str]:
    """Training sequences cannot be longer than the model's positions."""
    if seq_len > max_seq_len:
        yield f"train.seq_len = {seq_len} exceeds model.max_seq_len = {max_seq_len}"


@rule("tied-embeddings-no-pp", "error", "model.tie_embeddings", "distributed.pp", at_launch=True)
def tied_embeddings_no_pp(tied: bool, pp: int) -> Iterator[str]:
    """Tied input/output embeddings must live on one stage; pipeline parallelism splits them."""
    if tied and pp > 1:
        yield (
            f"model.tie_embeddings = true cannot be used with distributed.pp = {pp}: the embedding and the "
            "output head would sit on different pipeline stages"
        )


@rule("eval-needs-source", "error", "eval.enabled", "eval.dataset_path", "eval.hf_dataset_name", at_launch=True)
def eval_needs_source(enabled: bool, dataset_path: str, hf_name: str | None) -> Iterator[str]:
    """Evaluation needs data: a pre-tokenized path or a Hugging Face dataset."""
    if enabled and not dataset_path and not hf_name:
        yield "eval.enabled = true but neither eval.dataset_path nor eval.hf_dataset_name is set; set one of them"


@rule("moe-compile", "warning", "train.compile_model", "model.num_experts", at_launch=True)
def moe_compile(compile_model: bool, num_experts: int) -> Iterator[str]:
    """torch.compile is not yet efficient for MoE dispatch (data-dependent shapes)."""
    if num_experts > 0 and compile_model:
        yield (
            f"train.compile_model = true with an MoE model (model.num_experts = {num_experts}): compilation "
            "breaks on data-dependent routing; set train.compile_model = false"
        )


def _tp_fits(heads: int, other_heads: Any) -> str:
    """The tp values that divide `heads` and (when its value is usable) `other_heads`."""
    counts = (heads, other_heads) if isinstance(other_heads, int) and other_heads > 0 else (heads,)
    return f"distributed.tp values that pass: {passing_divisors(*counts)}"


@rule(
    "tp-divides-heads",
    "error",
    "model.n_heads",
    "distributed.tp",
    "model.n_kv_heads",
    at_launch=True,
    optional=("model.n_kv_heads",),
)
def tp_divides_heads(n_heads: int, tp: int, n_kv_heads: Any) -> Iterator[Violation]:
    """Tensor parallelism splits attention heads across ranks.

    distributed.tp must divide model.n_heads. When it divides neither model.n_heads nor
    model.n_kv_heads, this one error names both constraints (and `tp-divides-kv-heads` stays
    quiet): one degree, one fix. It points at distributed.tp, the value to change, and lists
    the values that would pass.
    """
    if tp > 1 and n_heads % tp:
        kv_fails = isinstance(n_kv_heads, int) and n_kv_heads % tp != 0
        also = f" and model.n_kv_heads = {n_kv_heads}" if kv_fails else ""
        yield Violation(
            f"distributed.tp = {tp} must divide model.n_heads = {n_heads}{also} (tensor parallelism splits the "
            f"heads across ranks); {_tp_fits(n_heads, n_kv_heads)}",
            at=("distributed", "tp"),
            related=(("model", "n_heads"), ("distributed", "tp"), *([("model", "n_kv_heads")] if kv_fails else [])),
        )


@rule(
    "tp-divides-kv-heads",
    "error",
    "model.n_kv_heads",
    "distributed.tp",
    "model.n_heads",
    at_launch=True,
    optional=("model.n_heads",),
)
def tp_divides_kv_heads(n_kv_heads: int, tp: int, n_heads: Any) -> Iterator[Violation]:
    """Tensor parallelism splits kv heads across ranks too.

    distributed.tp must divide model.n_kv_heads. This is reported on its own when tp divides
    model.n_heads; when it divides neither, the one `tp-divides-heads` error names both.
    """
    heads_fail = isinstance(n_heads, int) and n_heads % tp != 0
    if tp > 1 and n_kv_heads % tp and not heads_fail:
        yield Violation(
            f"distributed.tp = {tp} must divide model.n_kv_heads = {n_kv_heads} (tensor parallelism splits the "
            f"kv heads across ranks); {_tp_fits(n_kv_heads, n_heads)}",
            at=("distributed", "tp"),
            related=(("model", "n_kv_heads"), ("distributed", "tp")),
        )


@rule("fp8-no-tp", "error", "train.mixed_precision", "distributed.tp", at_launch=True)
def fp8_no_tp(precision: str, tp: int) -> Iterator[str]:
    """FP8 linear layers do not compose with tensor-parallel sharding."""
    if precision == "fp8" and tp > 1:
        yield (
            f'train.mixed_precision = "fp8" cannot be used with distributed.tp = {tp}; use FP8 with FSDP '
            "only, or tensor parallelism without FP8"
        )


@rule("moe-no-pp", "error", "model.num_experts", "distributed.pp", at_launch=True)
def moe_no_pp(num_experts: int, pp: int) -> Iterator[str]:
    """Data-dependent expert routing cannot be split into pipeline stages."""
    if num_experts > 0 and pp > 1:
        yield (
            f"an MoE model (model.num_experts = {num_experts}) cannot use distributed.pp = {pp}; "
            "use FSDP, TP or EP instead"
        )


@rule("ep-needs-moe", "error", "distributed.ep", "model.num_experts", at_launch=True)
def ep_needs_moe(ep: int, num_experts: int) -> Iterator[str]:
    """Expert parallelism distributes experts, so the model must have some."""
    if ep > 1 and num_experts <= 0:
        yield f"distributed.ep = {ep} needs an MoE model, but model.num_experts = {num_experts}"


@rule("ep-divides-experts", "error", "distributed.ep", "model.num_experts", at_launch=True)
def ep_divides_experts(ep: int, num_experts: int) -> Iterator[Violation]:
    """Each expert-parallel rank holds num_experts / ep experts, so ep must divide model.num_experts."""
    if ep > 1 and num_experts > 0 and num_experts % ep:
        yield Violation(
            f"distributed.ep = {ep} must divide model.num_experts = {num_experts} (each expert-parallel rank "
            f"holds the same number of experts); distributed.ep values that pass: {passing_divisors(num_experts)}",
            at=("distributed", "ep"),
        )


@rule(
    "vlm-train-seq-len-budget",
    "error",
    "train.seq_len",
    "vision_encoder.num_tokens",
    "vlm.max_text_len",
    "vlm.arch",
    at_launch=True,
)
def train_seq_len_budget(
    seq_len: int, num_tokens: int | None, max_text_len: int | None, arch: str | None
) -> Iterator[Violation]:
    """Training sequences must hold the image tokens in the residual stream plus the text."""
    if arch is None or not num_tokens or max_text_len is None:
        return
    r, need = _budget(arch, num_tokens, max_text_len)
    if seq_len < need:
        yield Violation(
            f"train.seq_len = {seq_len} is too small for this VLM: {r} image tokens in the residual stream "
            f'(vlm.arch = "{arch}") + vlm.max_text_len = {max_text_len} = {show(need)}',
            related=(("train", "seq_len"), *_TEXT_BUDGET),
        )


@rule("vlm-no-pp", "error", "distributed.pp", "vlm", at_launch=True)
def vlm_no_pp(pp: int, vlm: Any) -> Iterator[str]:
    """VLM runs do not support pipeline parallelism in this version."""
    if vlm is not None and pp > 1:
        yield f"distributed.pp = {pp}: vision-language runs ([vlm]) do not support pipeline parallelism"


# -- checks KempnerForge makes only after launch (§11) --------------------------------------


@rule("vlm-needs-hf-data", "error", "data.hf_dataset_name", "data.tokenizer_path", "vlm", at_launch=True)
def vlm_needs_hf_data(hf_name: str | None, tokenizer: str, vlm: Any) -> Iterator[Violation]:
    """VLM data comes only from Hugging Face datasets, tokenized with data.tokenizer_path."""
    if vlm is None:
        return
    if not hf_name:
        yield Violation(
            "a VLM run reads image-text pairs from a Hugging Face dataset, but data.hf_dataset_name is not set",
            at=("data", "hf_dataset_name"),
            related=(),
        )
    if not tokenizer:
        yield Violation("a VLM run needs data.tokenizer_path (it is empty)", at=("data", "tokenizer_path"), related=())


@rule(
    "hf-data-needs-tokenizer", "error", "data.tokenizer_path", "data.hf_dataset_name", "data.datasets", at_launch=True
)
def hf_data_needs_tokenizer(tokenizer: str, hf_name: str | None, datasets: list[dict[str, Any]]) -> Iterator[Violation]:
    """Raw text from Hugging Face datasets must be tokenized, which needs data.tokenizer_path."""
    sources = ([f'data.hf_dataset_name = "{hf_name}"'] if hf_name else []) + [
        f'data.datasets[{i}].hf_name = "{d["hf_name"]}"' for i, d in enumerate(datasets) if d.get("hf_name")
    ]
    if sources and not tokenizer:
        source = ("data", "hf_dataset_name" if hf_name else "datasets")
        yield Violation(
            f"{sources[0]} is raw text and needs data.tokenizer_path, which is empty",
            related=(("data", "tokenizer_path"), source),
        )


@rule(
    "packing-needs-tokenizer",
    "error",
    "data.pack_sequences",
    "data.tokenizer_path",
    "data.dataset_path",
    "data.datasets",
    at_launch=True,
)
def packing_needs_tokenizer(
    pack: bool, tokenizer: str, dataset_path: str, datasets: list[dict[str, Any]]
) -> Iterator[Violation]:
    """Packing pre-tokenized data needs the tokenizer's end-of-document token."""
    pretokenized = bool(dataset_path) or any(d.get("path") for d in datasets)
    if pack and pretokenized and not tokenizer:
        yield Violation(
            "data.pack_sequences = true with pre-tokenized data needs data.tokenizer_path, which is empty",
            related=(("data", "pack_sequences"), ("data", "tokenizer_path")),
        )


@rule(
    "mot-image-heads-match",
    "error",
    "vlm.mot_image_n_heads",
    "vlm.mot_image_n_kv_heads",
    "model.n_heads",
    "model.n_kv_heads",
    "vlm.arch",
    at_launch=True,
)
def mot_image_heads_match(
    img_heads: int | None, img_kv: int | None, n_heads: int, n_kv: int, arch: str | None
) -> Iterator[Violation]:
    """MoT shares one attention over both modalities, so image heads must equal text heads."""
    if arch != "mot":
        return
    if img_heads and img_heads != n_heads:
        yield Violation(
            f"vlm.mot_image_n_heads = {img_heads} must equal model.n_heads = {n_heads} (or be 0 to follow it)",
            at=("vlm", "mot_image_n_heads"),
            related=(("vlm", "mot_image_n_heads"), ("model", "n_heads")),
        )
    if img_kv and img_kv != n_kv:
        yield Violation(
            f"vlm.mot_image_n_kv_heads = {img_kv} must equal the model's kv heads = {n_kv} (or be 0 to follow it)",
            at=("vlm", "mot_image_n_kv_heads"),
            related=(),
        )


@rule("registry-name-known", "error", *map(format_path, REGISTRIES), "model.num_experts", at_launch=True)
def registry_name_known(
    model_type: str, optimizer: str, loss_fn: str, router: str, num_experts: int, registries: Mapping[str, Any]
) -> Iterator[Violation]:
    """Component names KempnerForge looks up only when it builds the trainer, after the job was queued.

    A project whose plug-ins register more names lists them in an overlay (`registries`)."""
    for (path, builtin), value in zip(REGISTRIES.items(), (model_type, optimizer, loss_fn, router), strict=True):
        if path == ("model", "moe_router") and num_experts <= 0:
            continue
        where = format_path(path)
        names = (*builtin, *registries.get(where, ()))
        if value not in names:
            message = f'{where} = "{value}" is not a registered name (registered: {", ".join(names)})'
            yield Violation(message, at=path, related=())


# -- warnings trainspec adds where KempnerForge would surprise (§12) --------------------------


@rule("model-n-kv-heads-implicit", "warning", "model.n_heads", "model.n_kv_heads", raw=True)
def kv_heads_implicit(n_heads: Any, n_kv_heads: Any) -> Iterator[str]:
    """KempnerForge keeps 32 kv heads when n_kv_heads is omitted, whatever n_heads is.

    When 32 does not divide n_heads the run is refused (`model-kv-heads-divide-heads` explains the 32);
    when it does, the run silently becomes grouped-query attention with 32 kv heads, which this warns about.
    """
    if isinstance(n_heads, int) and n_heads != 32 and n_heads % 32 == 0 and n_kv_heads is ABSENT:
        yield (
            f"model.n_heads = {n_heads} but model.n_kv_heads is not written: KempnerForge will use 32 kv heads "
            f"(grouped-query attention, {n_heads // 32} query heads per kv head), not {n_heads}; "
            "write model.n_kv_heads explicitly"
        )


@rule("vlm-section-without-vlm", "warning", "vision_encoder", "adapter", "vlm")
def section_without_vlm(encoder: Any, adapter: Any, vlm: Any) -> Iterator[Violation]:
    """[vision_encoder] and [adapter] only take effect in a VLM run."""
    if vlm is None:
        for name, value in (("vision_encoder", encoder), ("adapter", adapter)):
            if value is not None:
                message = f"[{name}] has no effect without a [vlm] section; add [vlm] or remove it"
                yield Violation(message, at=(name,), related=(("vlm",),))


POSITIVE: tuple[Path, ...] = (
    ("model", "norm_eps"),
    ("model", "rope_theta"),
    ("model", "init_std"),
    ("model", "ffn_dim_multiplier"),
    ("model", "ffn_hidden_dim"),
    ("optimizer", "eps"),
    ("optimizer", "muon_adam_lr"),
    ("scheduler", "decay_steps"),
    ("data", "hf_image_size"),
    ("distributed", "nccl_timeout_sec"),
    ("train", "shutdown_timeout_sec"),
)
NON_NEGATIVE: tuple[Path, ...] = (
    ("model", "moe_capacity_factor"),
    ("model", "moe_shared_experts"),
    ("model", "moe_aux_loss_weight"),
    ("train", "z_loss_weight"),
    ("train", "ce_chunk_size"),
    ("train", "nccl_health_check_interval"),
    ("scheduler", "stable_steps"),
    ("profiling", "start_step"),
)


@rule(
    "value-domain",
    "warning",
    *map(format_path, (*POSITIVE, *NON_NEGATIVE)),
    "data.anneal_weights",
    "vlm.freeze_schedule",
)
def value_domain(*values: Any) -> Iterator[Violation]:
    """Numbers KempnerForge does not check although only positive (or non-negative) values make sense."""
    *scalars, anneal_weights, freeze_schedule = values
    found: list[tuple[Path, Any, tuple[Path, ...]]] = [
        (path, value, ()) for path, value in zip((*POSITIVE, *NON_NEGATIVE), scalars, strict=True)
    ]
    weights, stages = ("data", "anneal_weights"), ("vlm", "freeze_schedule")  # an item is shown with its list or map
    found += [((*weights, name), w, (weights,)) for name, w in (anneal_weights or {}).items()]
    found += [((*stages, i, "start_step"), s.get("start_step"), (stages,)) for i, s in enumerate(freeze_schedule or [])]
    for path, value, holder in found:
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            continue  # unset (null) values mean "derive it"
        if isinstance(value, float) and not math.isfinite(value):
            continue  # refused as non-finite already
        wrong = "not positive" if path in POSITIVE and value <= 0 else "negative" if value < 0 else ""
        if wrong:
            said = f"{format_path(path)} = {show(value)} is {wrong}"
            yield Violation(f"{said}; KempnerForge accepts it but the run will misbehave", at=path, related=holder)


RULES = (
    heads_divide_dim,
    kv_heads_divide_heads,
    top_k_le_experts,
    phases_increasing,
    profiling_window,
    freeze_schedule_increasing,
    hf_encoder_override,
    max_seq_len_budget,
    auto_shard_divisible,
    world_size_product,
    seq_len_within_max,
    tied_embeddings_no_pp,
    eval_needs_source,
    moe_compile,
    tp_divides_heads,
    tp_divides_kv_heads,
    fp8_no_tp,
    moe_no_pp,
    ep_needs_moe,
    ep_divides_experts,
    train_seq_len_budget,
    vlm_no_pp,
    vlm_needs_hf_data,
    hf_data_needs_tokenizer,
    packing_needs_tokenizer,
    mot_image_heads_match,
    registry_name_known,
    kv_heads_implicit,
    section_without_vlm,
    value_domain,
)
