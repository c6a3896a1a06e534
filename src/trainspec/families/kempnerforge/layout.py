"""KempnerForge's parallel layouts and derived quantities (reference §9).

The six degrees multiply to the world size; which factorings a model takes
is left to the family's rules. What a layout costs is in `memory.py`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

from trainspec.spec.errors import InvalidValue
from trainspec.spec.layout_space import LayoutSpace, factorings

DEGREES = ("dp_replicate", "dp_shard", "tp", "pp", "cp", "ep")
PATHS = tuple(f"distributed.{d}" for d in DEGREES)


def candidates(config: Mapping[str, Any], world_size: int) -> Iterator[tuple[int, ...]]:
    """Every assignment of the six degrees whose product is the world size (dp_shard written out), made
    one at a time: a world size with many divisors has hundreds of millions, and the planner stops
    at its budget."""
    return factorings(world_size, len(DEGREES))


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
    undone_by=frozenset({"cp-becomes-data-parallel"}),  # cp = world size runs as plain data parallelism
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
        raise InvalidValue("model.moe_expert_ffn_multiplier is infinite")
    return max(16, 16 * round(int(f * multiplier) / 16))  # round() rounds halves to the even multiple
