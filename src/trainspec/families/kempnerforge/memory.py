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
from dataclasses import dataclass, replace
from typing import Any

from trainspec.spec.layout_space import MemoryEstimate, Quantity

from .activations import Activations, activations
from .build import Model, Tensor, build
from .layout import DEGREES
from .precision import MASTER_DTYPES

DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "float32": 4}
PARAM_BYTES = {precision: DTYPE_BYTES[dtype] for precision, dtype in MASTER_DTYPES.items()}
"""Bytes per stored value, by train.mixed_precision: the trainer casts the model to the master dtype before
FSDP (no fp32 master copy; FP8 is a compute mode over bfloat16 storage); gradients and optimizer states
follow it."""
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
    """Whether the stage holding `layers` holds `t` (stage 0 the embedding, the last the final norm and head)."""
    return t.layer in layers or (t.layer < 0 and first) or (t.layer >= layers.stop and last)


@dataclass(frozen=True)
class Placement:
    """How the layout places parameters on one rank: the degrees, the FSDP shard degree, bytes per value
    and the optimizer."""

    degrees: Mapping[str, int]
    shard: int
    width: int
    optimizer: str

    def local(self, t: Tensor, sharded: bool = True) -> int:
        """Elements of `t` one rank stores: tensor- and expert-parallel splits, then (`sharded`) ⌈rows / shard⌉."""
        g = self.degrees
        rows, cols, count = t.shape[0], math.prod(t.shape[1:]), t.count
        if t.ep == "count":
            count //= g["ep"]
        elif t.ep == "rows":
            rows = math.ceil(rows / g["ep"])
        if t.tp == "column":
            rows = math.ceil(rows / g["tp"])
        elif t.tp == "row":
            cols = math.ceil(cols / g["tp"])
        return count * math.ceil(rows / (self.shard if sharded else 1)) * cols

    def gathered(self, tensors: Iterable[Tensor]) -> int:
        """Elements of an FSDP unit gathered on one rank (after the tensor- and expert-parallel split)."""
        return sum(self.local(t, sharded=False) for t in tensors)

    def persistent(self, tensors: Iterable[Tensor]) -> tuple[int, int, int | None]:
        """(weights, gradients, optimizer states) in bytes; states None for an optimizer trainspec does not know."""
        weights = gradients = states = 0
        unknown = False
        for t in tensors:
            n = self.local(t) * self.width
            weights += n
            if t.trainable:
                gradients += n
                copies = state_copies(t, self.optimizer)
                unknown |= copies is None
                states += n * (copies or 0)
        return weights, gradients, None if unknown else states


def estimate(config: Mapping[str, Any], world_size: int, built: Model | None = None) -> MemoryEstimate | None:
    """Bytes per rank by part, the largest pipeline stage where there are several; None when the layout
    does not resolve at this world size."""
    g = resolved_degrees(config, world_size)
    if g is None:
        return None
    built = built or build(config)
    place = Placement(g, fsdp_degree(g), PARAM_BYTES[config["train"]["mixed_precision"]], config["optimizer"]["name"])
    n_layers, pp = config["model"]["n_layers"], g["pp"]
    parts = stages(n_layers, pp) if 0 < pp <= n_layers else [range(n_layers)]
    best: tuple[int, list[Quantity], list[Quantity]] | None = None
    for s, layers in enumerate(parts):
        mine = [t for t in built.tensors if len(parts) == 1 or on_stage(t, layers, s == 0, s == len(parts) - 1)]
        quantities, act = stage_parts(config, mine, place, layers, len(parts), s == len(parts) - 1)
        total = sum(int(q.value or 0) for q in quantities)
        if best is None or total > best[0]:
            best = (total, quantities, step_figures(act))
    assert best is not None
    return MemoryEstimate(tuple(best[1]), assumptions(built, place, len(parts)), tuple(best[2]))


def stage_parts(
    config: Mapping[str, Any], mine: list[Tensor], place: Placement, layers: range, stages: int, last: bool = True
) -> tuple[list[Quantity], Activations]:
    """The parts of one rank's memory holding `mine` (its pipeline stage's tensors, of `stages`), each a
    Quantity in bytes with how it is counted, and the activations they count; only the `last` stage
    computes the logits and the loss."""
    train, g, width, opt = config["train"], place.degrees, place.width, place.optimizer
    weights, gradients, states = place.persistent(mine)
    opt_how = f"{opt}: " + (
        "AdamW's two moments for what Muon does not take" if opt == "muon" else f"{OPTIMIZER_STATES.get(opt)} state(s)"
    )
    out = [
        Quantity("memory_parameters", weights, "bytes", f"weights, {width} bytes each, sharded as the trainer"),
        Quantity("memory_gradients", gradients, "bytes", "gradients of the trainable parameters, as the weights"),
        Quantity(
            "memory_optimizer",
            states,
            "bytes",
            f"{opt_how} per trainable parameter, in the weights' dtype"
            if states is not None
            else f"optimizer {opt!r} keeps state trainspec does not know",
        ),
    ]
    trainable = place.gathered(t for t in mine if t.trainable)
    blocks = [[t for t in mine if t.layer == i and t.group != "cross_attention"] for i in layers]
    blocks += [[t for t in mine if t.layer == i and t.group == "cross_attention"] for i in layers]  # own units
    unit = max(place.gathered(b) for b in blocks)  # elements of the largest block
    root = [t for t in mine if not 0 <= t.layer < config["model"]["n_layers"] and t.group != "adapter"]
    wrapped = any(g[d] > 1 for d in ("dp_shard", "dp_replicate", "tp", "ep"))  # a data-parallel mesh dimension
    if stages > 1 and wrapped:  # pipelining keeps an FSDP stage unsharded; a mesh of stages alone has no FSDP
        stage = place.gathered(mine) * width + 4 * trainable
        out.append(Quantity("memory_pipeline_stage", stage, "bytes", "the stage unsharded, with fp32 gradients"))
    elif stages == 1 and math.prod(g.values()) > 1:  # a device mesh: FSDP wraps the model
        no_sync = config.get("vlm") is None and train["grad_accum_steps"] > 1
        out += [
            Quantity(
                "memory_grad_accumulation",
                4 * trainable if no_sync else 0,
                "bytes",
                "fp32 gradients of the whole model unsharded over data parallelism, kept across the "
                "micro-steps of gradient accumulation (no-sync); text runs only",
            ),
            Quantity(
                "memory_gathered",
                (place.gathered(root) + 2 * unit) * width,
                "bytes",
                "the root unit (embedding, final norm, head) gathered for the whole step, and two blocks "
                "gathered at once (prefetch)",
            ),
            Quantity("memory_reduce_scatter", 4 * unit, "bytes", "fp32 copy of one block's gradients to reduce"),
        ]
    in_flight = 1
    if stages > 1:
        accum = train["grad_accum_steps"]
        in_flight = accum if config["distributed"]["pp_schedule"] == "gpipe" else min(g["pp"], accum)
    act = activations(config, g["tp"], g["ep"], layers, in_flight)
    if not last:
        act = replace(act, logits=0, logits_gradient=0)
    out += [
        Quantity("memory_activations", act.saved + act.recompute, "bytes", f"saved for backward: {act.how}"),
        Quantity("memory_logits", act.logits, "bytes", "logits and cross-entropy's log-softmax (z-loss: +fp32)"),
        Quantity(
            "memory_logits_gradient",
            act.logits_gradient,
            "bytes",
            "the logits' gradient, 4 bytes per logit (batch × sequence × vocab), made at the start of the loss "
            "backward while the saved activations are all still held",
        ),
    ]
    return out, act


def step_figures(act: Activations) -> list[Quantity]:
    """Figures shown beside the parts: the step's peak over the persistent state, and the MoE bound."""
    peak = act.saved + act.recompute + act.logits + act.logits_gradient
    out = [
        Quantity(
            "memory_step_peak",
            peak,
            "bytes",
            "what one micro-step holds at its peak, the start of the loss backward: the saved activations, the "
            "logits with log-softmax and their gradient (memory_activations + memory_logits + "
            "memory_logits_gradient), over the persistent state and buffers",
        )
    ]
    if act.uneven is not None:
        out.append(
            Quantity(
                "memory_activations_uneven",
                act.uneven,
                "bytes",
                "memory_activations if routing sent every token to one expert (each expert padded to all the "
                "tokens): the bound of uneven routing; memory_activations assumes balanced routing",
            )
        )
    return out


def assumptions(built: Model, place: Placement, pp: int) -> str:
    """What every figure assumes, in one sentence."""
    g = place.degrees
    sp = " with sequence parallelism" if g["tp"] > 1 and built.sequence_parallel else ""
    said = [
        f"dp_shard={place.shard} (FSDP), tp={g['tp']}{sp}, ep={g['ep']}, dp_replicate={g['dp_replicate']}",
        f"{place.width}-byte weights, gradients and optimizer states",
    ]
    if pp > 1:
        said.append(f"the largest of {pp} pipeline stages")
    if g["cp"] > 1:
        said.append("context parallelism shards nothing (KempnerForge does not wire it)")
    if built.not_counted:
        said.append(f"without {' and '.join(built.not_counted)} (not counted)")
    said.append("eager-mode activations; CUDA context, NCCL buffers and fragmentation not included")
    return "; ".join(said)
