"""Memory per rank of a KempnerForge job under its layout, by the trainer's own sharding (kempnerforge-build
reference §5). An estimate: persistent states are exact up to FSDP padding, step buffers exact in size
with their overlap in time inferred, activations measured in eager mode (`activations.py`).

Placement (§3, §5.1): FSDP shards dim 0 of every parameter over `dp_shard` (padded to equal chunks) and
replicates it over `dp_replicate`, `tp` and `ep`; tensor parallelism splits only what its plan names
(`build.Tensor.tp`); expert parallelism splits the routed experts; a pipeline rank holds one stage
(the largest is shown). Context parallelism is not wired in KempnerForge: it shards nothing.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ...layout import MemoryEstimate, Quantity
from .activations import activations
from .build import Model, Tensor, build
from .layout import DEGREES

PARAM_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4, "fp8": 2}
"""Bytes per stored value: the trainer casts the model to the parameter dtype before FSDP (no fp32 master
weights; FP8 is a compute mode over bfloat16 storage); gradients and optimizer states follow it."""
OPTIMIZER_STATES = {"adamw": 2, "lion": 1, "schedule_free_adamw": 3}
"""State copies per trainable parameter (§4): AdamW's two moments, Lion's momentum, schedule-free AdamW's
z, v and x. Muon: one momentum for the matrices it orthogonalises, AdamW's two for the rest."""
MUON_ASPECT = 10
"""Muon takes a matrix whose longer side is at most 10 times its shorter one; the rest goes to AdamW."""


def resolved_degrees(config: Mapping[str, Any], world_size: int | None) -> dict[str, int] | None:
    """The six degrees with dp_shard = -1 resolved; None when no world size resolves it."""
    dist = dict(config["distributed"])
    if dist["dp_shard"] == -1:
        other = math.prod(dist[d] for d in DEGREES if d != "dp_shard")
        if world_size is None or world_size % other:
            return None
        dist["dp_shard"] = world_size // other
    return {d: dist[d] for d in DEGREES}


def fsdp_degree(g: Mapping[str, int]) -> int:
    """The FSDP shard degree: `dp_shard`; a run whose only degree is cp becomes plain FSDP over the world
    (cp is never a mesh dimension, §3.2)."""
    others = [g[d] for d in DEGREES if d != "cp"]
    if g["cp"] > 1 and all(v == 1 for v in others):
        return g["cp"]
    return g["dp_shard"]


def local(t: Tensor, g: Mapping[str, int], shard: int) -> int:
    """Elements of `t` one rank stores: tensor- and expert-parallel splits, then ⌈rows / shard⌉ rows."""
    rows, cols, count = t.shape[0], math.prod(t.shape[1:]), t.count
    if t.ep == "count":
        count //= g["ep"]
    elif t.ep == "rows":
        rows = math.ceil(rows / g["ep"])
    if t.tp == "column":
        rows = math.ceil(rows / g["tp"])
    elif t.tp == "row":
        cols = math.ceil(cols / g["tp"])
    return count * math.ceil(rows / shard) * cols


def state_copies(t: Tensor, optimizer: str) -> int | None:
    """Optimizer state copies of a trainable parameter; None for an optimizer trainspec does not know."""
    if optimizer != "muon":
        return OPTIMIZER_STATES.get(optimizer)
    rows = t.shape[0]
    cols = math.prod(t.shape[1:])
    eligible = len(t.shape) >= 2 and max(rows, cols) <= MUON_ASPECT * min(rows, cols)
    return 1 if eligible else 2


def stages(n_layers: int, pp: int) -> list[range]:
    """Each pipeline stage's layers: the first n_layers mod pp stages hold one more (§3.7)."""
    base, extra = divmod(n_layers, pp)
    out, start = [], 0
    for s in range(pp):
        size = base + (s < extra)
        out.append(range(start, start + size))
        start += size
    return out


def on_stage(t: Tensor, layers: range, first: bool, last: bool) -> bool:
    return t.layer in layers or (t.layer < 0 and first) or (t.layer >= 0 and t.layer > layers.stop - 1 and last)


@dataclass(frozen=True)
class Persistent:
    """Weights, gradients and optimizer states of one rank, in bytes (None: unknown optimizer)."""

    weights: int
    gradients: int
    optimizer: int | None


def persistent(tensors: Iterable[Tensor], g: Mapping[str, int], shard: int, width: int, opt: str) -> Persistent:
    weights = gradients = states = 0
    unknown = False
    for t in tensors:
        n = local(t, g, shard) * width
        weights += n
        if t.trainable:
            gradients += n
            copies = state_copies(t, opt)
            unknown |= copies is None
            states += n * (copies or 0)
    return Persistent(weights, gradients, None if unknown else states)


def unit_bytes(tensors: Iterable[Tensor], g: Mapping[str, int], width: int) -> int:
    """An FSDP unit gathered on one rank: its tensors after the tensor- and expert-parallel split."""
    return sum(local(t, g, 1) for t in tensors) * width


def estimate(config: Mapping[str, Any], world_size: int, built: Model | None = None) -> MemoryEstimate | None:
    """Bytes per rank by part, the largest pipeline stage where there are several; None when the layout
    does not resolve at this world size."""
    g = resolved_degrees(config, world_size)
    if g is None:
        return None
    built = built or build(config)
    model, train = config["model"], config["train"]
    width = PARAM_BYTES[train["mixed_precision"]]
    opt = config["optimizer"]["name"]
    shard = fsdp_degree(g)
    sharded = math.prod(g.values()) > 1  # a mesh: FSDP wraps the model
    n_layers, pp = model["n_layers"], g["pp"]
    parts = stages(n_layers, pp) if 0 < pp <= n_layers else [range(n_layers)]
    best: tuple[int, list[Quantity]] | None = None
    for s, layers in enumerate(parts):
        mine = [t for t in built.tensors if len(parts) == 1 or on_stage(t, layers, s == 0, s == len(parts) - 1)]
        quantities = stage_parts(config, built, mine, g, shard, width, opt, layers, sharded, len(parts) > 1)
        total = sum(int(q.value or 0) for q in quantities)
        if best is None or total > best[0]:
            best = (total, quantities)
    assert best is not None
    return MemoryEstimate(tuple(best[1]), assumptions(config, built, g, shard, width, len(parts)))


def stage_parts(
    config: Mapping[str, Any],
    built: Model,
    mine: list[Tensor],
    g: Mapping[str, int],
    shard: int,
    width: int,
    opt: str,
    layers: range,
    sharded: bool,
    pipelined: bool,
) -> list[Quantity]:
    """The parts of one rank's memory, each a Quantity in bytes with how it is counted."""
    train, vlm = config["train"], config.get("vlm")
    state = persistent(mine, g, shard, width, opt)
    opt_how = f"{opt}: " + (
        "AdamW's two moments for what Muon does not take" if opt == "muon" else f"{OPTIMIZER_STATES.get(opt)} state(s)"
    )
    out = [
        Quantity("memory_parameters", state.weights, "bytes", f"weights, {width} bytes each, sharded as the trainer"),
        Quantity("memory_gradients", state.gradients, "bytes", "gradients of the trainable parameters, as the weights"),
        Quantity(
            "memory_optimizer",
            state.optimizer,
            "bytes",
            f"{opt_how} per trainable parameter, in the weights' dtype"
            if state.optimizer is not None
            else f"optimizer {opt!r} keeps state trainspec does not know",
        ),
    ]
    trainable = [t for t in mine if t.trainable]
    blocks = [[t for t in mine if t.layer == i and "cross_attention" not in t.name] for i in layers]
    blocks += [[t for t in mine if t.group == "cross_attention"]]
    unit = max((unit_bytes(b, g, 1) for b in blocks), default=0)  # elements of the largest block
    root = [t for t in mine if not 0 <= t.layer < config["model"]["n_layers"] and t.group not in ("adapter",)]
    accumulate = 0
    if pipelined:
        stage = unit_bytes(mine, g, width) + 4 * unit_bytes(trainable, g, 1)
        out.append(Quantity("memory_pipeline_stage", stage, "bytes", "the stage unsharded, with fp32 gradients"))
    elif sharded:
        if vlm is None and train["grad_accum_steps"] > 1:
            accumulate = 4 * unit_bytes(trainable, g, 1)
        out += [
            Quantity(
                "memory_grad_accumulation",
                accumulate,
                "bytes",
                "fp32 gradients of the whole model unsharded over data parallelism, kept across the "
                "micro-steps of gradient accumulation (no-sync); text runs only",
            ),
            Quantity(
                "memory_gathered",
                unit_bytes(root, g, width) + 2 * unit * width,
                "bytes",
                "the root unit (embedding, final norm, head) gathered for the whole step, and two blocks "
                "gathered at once (prefetch)",
            ),
            Quantity("memory_reduce_scatter", 4 * unit, "bytes", "fp32 copy of one block's gradients to reduce"),
        ]
    in_flight = 1
    if pipelined:
        accum = train["grad_accum_steps"]
        in_flight = accum if config["distributed"]["pp_schedule"] == "gpipe" else min(g["pp"], accum)
    act = activations(config, g["tp"], g["ep"], layers, in_flight)
    out += [
        Quantity("memory_activations", act.saved + act.recompute, "bytes", f"saved for backward: {act.how}"),
        Quantity("memory_logits", act.logits, "bytes", "logits and cross-entropy's log-softmax (z-loss: +fp32)"),
    ]
    return out


def assumptions(config: Mapping[str, Any], built: Model, g: Mapping[str, int], shard: int, width: int, pp: int) -> str:
    """What every figure assumes, in one sentence."""
    sp = " with sequence parallelism" if g["tp"] > 1 and built.sequence_parallel else ""
    said = [
        f"dp_shard={shard} (FSDP), tp={g['tp']}{sp}, ep={g['ep']}, dp_replicate={g['dp_replicate']}",
        f"{width}-byte weights, gradients and optimizer states",
    ]
    if pp > 1:
        said.append(f"the largest of {pp} pipeline stages")
    if g["cp"] > 1:
        said.append("context parallelism shards nothing (KempnerForge does not wire it)")
    if built.not_counted:
        said.append(f"without {' and '.join(built.not_counted)} (not counted)")
    said.append("eager-mode activations; CUDA context, NCCL buffers and fragmentation not included")
    return "; ".join(said)
