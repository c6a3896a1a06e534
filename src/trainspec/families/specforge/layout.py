"""SpecForge's trainer layouts and derived quantities.

A layout is the trainer topology (nodes × processes per node, which must
make the world size) and the sequence-parallel sizes (whose product must
divide it); SpecForge's rules decide which of them a run accepts.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from trainspec.spec.layout_space import LayoutSpace, Quantity, divisors, factorings

from .rules import SOURCES, data_mode

PATHS = (
    "deployment.trainer.nnodes",
    "deployment.trainer.nproc_per_node",
    "training.sp_ulysses_size",
    "training.sp_ring_size",
)


def candidates(config: Mapping[str, Any], world_size: int) -> Iterator[tuple[int, ...]]:
    """Every topology making the world size, with every sequence-parallel pair whose product divides it."""
    for nnodes, nproc in factorings(world_size, 2):
        for sp in divisors(world_size):
            for ulysses, ring in factorings(sp, 2):
                yield nnodes, nproc, ulysses, ring


def rank(config: Mapping[str, Any], world_size: int, gpus_per_node: int | None) -> tuple[int, ...]:
    """A node filled (processes per node = --gpus-per-node), then the fewest nodes, then the least sequence
    parallelism, Ulysses before ring."""
    trainer, training = config["deployment"]["trainer"], config["training"]
    unfilled = int(gpus_per_node is not None and trainer["nproc_per_node"] != gpus_per_node)
    return (
        unfilled,
        trainer["nnodes"],
        training["sp_ulysses_size"] * training["sp_ring_size"],
        training["sp_ring_size"],
    )


LAYOUT = LayoutSpace(
    paths=PATHS,
    candidates=candidates,
    rank=rank,
    heuristic="processes per node equal to --gpus-per-node, then the fewest nodes, then the least sequence "
    "parallelism (Ulysses before ring); ties go to the layout that changes the fewest of the file's values",
    per_node="deployment.trainer.nproc_per_node",
)


def derive(config: Mapping[str, Any], world_size: int | None) -> list[Quantity]:
    """The data mode, deployment mode, role, and the trainer's world size and sequence-parallel size."""
    data, training, trainer = config["data"], config["training"], config["deployment"]["trainer"]
    sources = [data.get(p.partition(".")[2]) for p in SOURCES]
    sp = training["sp_ulysses_size"] * training["sp_ring_size"]
    topology = trainer["nnodes"] * trainer["nproc_per_node"]
    size = world_size if world_size is not None else topology
    return [
        Quantity("data_mode", data_mode(*sources), "", "offline with data.hidden_states_path, else online"),
        Quantity("deployment_mode", config["deployment"]["mode"], "", "deployment.mode"),
        Quantity("role", training.get("role"), "", "training.role (disaggregated runs default to auto)"),
        Quantity(
            "world_size",
            size,
            "",
            "deployment.trainer.nnodes × nproc_per_node" if size == topology else "the world size checked at",
        ),
        Quantity("sequence_parallel", sp, "", "training.sp_ulysses_size × sp_ring_size"),
        Quantity(
            "data_parallel",
            size // sp if size % sp == 0 else None,
            "",
            "world size ÷ sequence-parallel size",
        ),
    ]
