"""KempnerForge's parallel layouts and derived quantities (reference §9).

The six degrees multiply to the world size; which factorings a model takes
is left to the family's rules. The parameter count is the reference's
estimate; the memory per rank is documented in docs/plan.md.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

from ...layout import LayoutSpace, Quantity, divisors, factorings
from .precision import MASTER_DTYPES

DEGREES = ("dp_replicate", "dp_shard", "tp", "pp", "cp", "ep")
PATHS = tuple(f"distributed.{d}" for d in DEGREES)

DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "float32": 4}
PARAM_BYTES = {precision: DTYPE_BYTES[dtype] for precision, dtype in MASTER_DTYPES.items()}
"""Bytes per value of the master weights, by train.mixed_precision (reference §9: FP8 is a compute mode over
bfloat16 weights)."""
OPTIMIZER_STATES = {"adamw": 2, "schedule_free_adamw": 2, "lion": 1, "muon": 1}
"""Values of optimizer state kept per parameter: AdamW's two moments, schedule-free AdamW's z and second
moment, Lion's and Muon's one momentum."""


def candidates(config: Mapping[str, Any], world_size: int) -> Iterator[tuple[int, ...]]:
    """Every assignment of the six degrees whose product is the world size (dp_shard written out), made
    one at a time: a world size with many divisors has hundreds of millions, and the planner stops
    at its budget."""
    return _ordered_factorings(world_size, len(DEGREES))


def _ordered_factorings(n: int, parts: int) -> Iterator[tuple[int, ...]]:
    """`factorings(n, parts)`, in the same order, without holding them all."""
    if parts == 2:
        yield from factorings(n, 2)
        return
    for first in divisors(n):
        for rest in _ordered_factorings(n // first, parts - 1):
            yield (first, *rest)


def rank(config: Mapping[str, Any], world_size: int, gpus_per_node: int | None) -> tuple[int, ...]:
    """Tensor parallel inside a node, then fewest pipeline stages, context-parallel ranks, expert-parallel
    ranks and replicas (sharding saves memory that replication spends)."""
    d = config["distributed"]
    across_nodes = int(gpus_per_node is not None and gpus_per_node % d["tp"] != 0)
    return (across_nodes, d["pp"], d["cp"], d["ep"], d["dp_replicate"])


LAYOUT = LayoutSpace(
    paths=PATHS,
    candidates=candidates,
    rank=rank,
    heuristic="tensor parallel within a node (tp divides --gpus-per-node), then the fewest pipeline stages, "
    "no context parallel, the fewest expert-parallel ranks and replicas; ties go to the layout that "
    "changes the fewest of the file's degrees",
    auto={"distributed.dp_shard": -1},
)


def ffn_hidden(model: Mapping[str, Any]) -> int:
    """The MLP width: written, or 256 · ⌈⌊4 · dim · 2/3 · ffn_dim_multiplier⌋ / 256⌉."""
    if model.get("ffn_hidden_dim"):
        return int(model["ffn_hidden_dim"])
    return 256 * math.ceil(int(4 * model["dim"] * 2 / 3 * model["ffn_dim_multiplier"]) / 256)


def expert_ffn_hidden(model: Mapping[str, Any]) -> int:
    """A routed or shared expert's MLP width: max(16, 16 · round_half_even(trunc(ffn_hidden · moe_expert_ffn_multiplier)
    / 16)) (kempnerforge-5666d0d reference §7); the FFN width where the version has no multiplier."""
    f = ffn_hidden(model)
    if "moe_expert_ffn_multiplier" not in model:
        return f
    multiplier = model["moe_expert_ffn_multiplier"]
    if math.isnan(multiplier) or multiplier <= 0:
        return 16
    if math.isinf(multiplier):
        raise ValueError("model.moe_expert_ffn_multiplier is infinite")
    return max(16, 16 * round(int(f * multiplier) / 16))  # round() rounds halves to the even multiple


def moe_layers(model: Mapping[str, Any]) -> int:
    """Layers i (from 0) with (i + 1) divisible by moe_frequency, for an MoE model; else none."""
    if model["num_experts"] <= 0:
        return 0
    return model["n_layers"] // model["moe_frequency"]


def parameter_counts(model: Mapping[str, Any]) -> tuple[int, int]:
    """(every parameter, the routed experts' share of them) by reference §9's estimate; routed and shared
    experts have the expert width (`expert_ffn_hidden`), dense layers the FFN width."""
    d, heads, kv = model["dim"], model["n_heads"], model["n_kv_heads"] or model["n_heads"]
    hd, f = d // heads, ffn_hidden(model)
    attention, mlp, norms = 2 * d * heads * hd + 2 * d * kv * hd, 3 * d * f, 2 * d
    dense = attention + mlp + norms
    moe, experts = moe_layers(model), max(model["num_experts"], 0)
    fe = expert_ffn_hidden(model) if moe else f
    routed = moe * experts * 3 * d * fe
    moe_layer = attention + routed // max(moe, 1) + d * experts + model["moe_shared_experts"] * 3 * d * fe + norms
    layers = moe * moe_layer + (model["n_layers"] - moe) * dense
    head = 0 if model["tie_embeddings"] else model["vocab_size"] * d
    return layers + model["vocab_size"] * d + head + d, routed


def resolved_degrees(config: Mapping[str, Any], world_size: int | None) -> dict[str, int] | None:
    """The six degrees with dp_shard = -1 resolved; None when no world size resolves it."""
    dist = dict(config["distributed"])
    if dist["dp_shard"] == -1:
        other = math.prod(dist[d] for d in DEGREES if d != "dp_shard")
        if world_size is None or world_size % other:
            return None
        dist["dp_shard"] = world_size // other
    return {d: dist[d] for d in DEGREES}


def derive(config: Mapping[str, Any], world_size: int | None) -> list[Quantity]:
    """Head dim, kv heads, FFN width, parameter count; with a layout, data-parallel degree, tokens per step
    and memory per rank (docs/plan.md)."""
    model, train = config["model"], config["train"]
    total, routed = parameter_counts(model)
    out = [
        Quantity("head_dim", model["dim"] // model["n_heads"], "", "model.dim / model.n_heads"),
        Quantity("n_kv_heads_effective", model["n_kv_heads"] or model["n_heads"], "", "model.n_kv_heads"),
        Quantity("ffn_hidden", ffn_hidden(model), "", "model.ffn_hidden_dim, else 256·⌈⌊4·dim·2/3·multiplier⌋/256⌉"),
        Quantity(
            "parameters",
            total,
            "",
            "attention + MLP (MoE layers: experts at moe_expert_ffn_multiplier × the FFN width) + norms per layer, "
            "embedding, output head, final norm",
        ),
    ]
    degrees = resolved_degrees(config, world_size)
    if degrees is None:
        why = "needs a world size (distributed.dp_shard = -1): pass --world-size"
        if world_size is not None:
            why = f"distributed.dp_shard = -1 does not resolve at world size {world_size}"
        names = ("data_parallel", "tokens_per_step", "memory_parameters", "memory_gradients", "memory_optimizer")
        return [*out, *(Quantity(n, None, "", why) for n in names)]
    g = degrees
    dp = g["dp_replicate"] * g["dp_shard"]
    tokens = train["batch_size"] * train["seq_len"] * train["grad_accum_steps"] * dp
    model_parallel = g["tp"] * g["pp"]
    shard = g["dp_shard"] * g["cp"]
    per_rank = (total - routed) / (model_parallel * shard) + routed / (model_parallel * g["ep"] * shard)
    width = PARAM_BYTES[train["mixed_precision"]]
    states = OPTIMIZER_STATES.get(config["optimizer"]["name"])
    sharding = "÷ (tp·pp·dp_shard·cp), routed experts also ÷ ep"
    return [
        *out,
        Quantity("data_parallel", dp, "", "dp_replicate · dp_shard"),
        Quantity("tokens_per_step", tokens, "", "train.batch_size · seq_len · grad_accum_steps · data_parallel"),
        Quantity("memory_parameters", round(per_rank * width), "bytes", f"parameters {sharding} · {width} bytes"),
        Quantity("memory_gradients", round(per_rank * width), "bytes", f"as the parameters ({width} bytes each)"),
        Quantity(
            "memory_optimizer",
            None if states is None else round(per_rank * width * states),
            "bytes",
            f"{states} state value(s) per parameter · {width} bytes"
            if states is not None
            else f"optimizer {config['optimizer']['name']!r} keeps state trainspec does not know",
        ),
    ]
