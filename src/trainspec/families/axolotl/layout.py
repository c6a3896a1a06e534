"""Axolotl's parallel layouts and what a config implies at a world size (`plan`, `show`).

A layout is the four degrees Axolotl reads (`dp_replicate_size`, `dp_shard_size`,
`tensor_parallel_size`, `context_parallel_size`). Most configs leave them unset and let the
trainer infer them (`mesh.py`), so a candidate keeps the file's own values wherever they already
give its degrees and writes a number only where they do not: `plan` then asks for no `--set`
the file does not need.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from trainspec.spec.layout_space import LayoutSpace, Quantity, divisors, factorings

from .mesh import Mesh, MeshError, builds_mesh, context_parallel, degree, resolve

PATHS = ("dp_replicate_size", "dp_shard_size", "tensor_parallel_size", "context_parallel_size")


def _resolves_to(config: Mapping[str, Any], world_size: int, values: tuple[Any, ...], want: Mesh) -> bool:
    try:
        found = resolve({**config, **dict(zip(PATHS, values, strict=True))}, world_size)
    except MeshError:
        return False
    return (found.dp_replicate, found.dp_shard) == (want.dp_replicate, want.dp_shard)


def candidates(config: Mapping[str, Any], world_size: int) -> Iterator[tuple[Any, ...]]:
    """Every split of the world size into tp × cp × dp_replicate × dp_shard, each as the file would
    write it: the file's value where it gives that degree, else the number. Without a device mesh
    (no FSDP2, tp and cp 1) the data-parallel degrees mean nothing, so only the file's own are tried."""
    replicate, shard = config.get("dp_replicate_size"), config.get("dp_shard_size")
    seen: set[tuple[Any, ...]] = set()
    for tp, cp, rest in factorings(world_size, 3):
        written_tp = config.get("tensor_parallel_size") if degree(config.get("tensor_parallel_size")) == tp else tp
        written_cp = config.get("context_parallel_size") if context_parallel(config) == cp else cp
        sized = {**config, "tensor_parallel_size": written_tp, "context_parallel_size": written_cp}
        if not builds_mesh(sized):
            pairs: list[tuple[Any, Any]] = [(replicate, shard)]
        else:
            pairs = []
            for dp_replicate in divisors(rest):
                want = Mesh(dp_replicate, rest // dp_replicate, tp, cp, built=True)
                forms = [(replicate, shard), (replicate, want.dp_shard), (dp_replicate, shard)]
                fitting = [f for f in forms if _resolves_to(sized, world_size, (*f, written_tp, written_cp), want)]
                pairs.append(fitting[0] if fitting else (dp_replicate, want.dp_shard))  # the rules refuse it
        for pair in pairs:
            values = (*pair, written_tp, written_cp)
            if values not in seen:
                seen.add(values)
                yield values


def rank(config: Mapping[str, Any], world_size: int, gpus_per_node: int | None) -> tuple[int, ...]:
    """Tensor parallel inside a node, then the least context parallelism and tensor parallelism (each
    costs communication per layer), then the fewest replicas (sharding saves the memory replicas spend)."""
    mesh = resolve(config, world_size)
    across_nodes = int(gpus_per_node is not None and gpus_per_node % mesh.tp != 0)
    return (across_nodes, mesh.cp, mesh.tp, mesh.dp_replicate)


def describe(config: Mapping[str, Any], world_size: int) -> str:
    """The mesh a passing layout builds, with the data-parallel degree: the values alone leave it to the trainer."""
    return resolve(config, world_size).describe()


LAYOUT = LayoutSpace(
    paths=PATHS,
    candidates=candidates,
    rank=rank,
    heuristic="tensor parallel within a node (tp divides --gpus-per-node), then the least context parallelism, "
    "the least tensor parallelism and the fewest replicas; ties go to the layout that changes the fewest of "
    "the file's values",
    describe=describe,
)


AT_WORLD_SIZE = {
    "mesh": "",
    "data_parallel": "",
    "global_batch": "sequences",
    "tokens_per_step": "tokens",
    "batch_size": "sequences",
}
"""The quantities that need a world size and a mesh the trainer builds, with their units."""


def derive(config: Mapping[str, Any], world_size: int | None) -> list[Quantity]:
    """The mesh, the data-parallel degree and the batch of one optimizer step, as the trainer works them out."""
    micro, accumulation = config.get("micro_batch_size") or 1, config.get("gradient_accumulation_steps")
    written_batch = config.get("batch_size")
    steps = accumulation or (written_batch // micro if written_batch else 1)
    how_steps = "gradient_accumulation_steps" if accumulation else "batch_size ÷ micro_batch_size (accumulation null)"
    out = [
        Quantity("micro_batch_size", micro, "sequences", "micro_batch_size: sequences per rank per forward pass"),
        Quantity("gradient_accumulation_steps", steps, "", how_steps),
        Quantity("sequences_per_rank_per_step", micro * steps, "sequences", "micro_batch_size × accumulation steps"),
    ]
    why = "needs a world size (--world-size)"
    try:
        mesh = resolve(config, world_size) if world_size is not None else None
    except MeshError as exc:
        mesh, why = None, f"the trainer builds no mesh at world size {world_size}: {exc}"
    if mesh is None or world_size is None:
        return [*out, *(Quantity(name, None, unit, why) for name, unit in AT_WORLD_SIZE.items())]
    dp = mesh.data_parallel
    batch = micro * steps * dp
    seq_len = config.get("sequence_len")
    scaled = world_size != 1 and (config.get("ddp") is not False or _fsdp(config))  # as normalize_config
    loader_batch = (written_batch or micro * (accumulation or 0)) * (dp if scaled else 1)
    tokens = batch * seq_len if isinstance(seq_len, int) else None
    return [
        *out,
        Quantity("mesh", mesh.describe(), "", _mesh_how(mesh)),
        Quantity("data_parallel", dp, "", "world size ÷ (tensor_parallel_size × context_parallel_size)"),
        Quantity("global_batch", batch, "sequences", "micro_batch_size × gradient_accumulation_steps × data_parallel"),
        Quantity(
            "tokens_per_step",
            tokens,
            "tokens",
            "global_batch × sequence_len (at most: samples are padded or packed up to sequence_len)",
        ),
        Quantity("batch_size", loader_batch, "sequences", _batch_how(written_batch, accumulation)),
    ]


def _fsdp(config: Mapping[str, Any]) -> bool:
    return bool(config.get("fsdp") or config.get("fsdp_config"))


def _mesh_how(mesh: Mesh) -> str:
    if not mesh.built:
        return "no fsdp_config with fsdp_version 2 and tp = cp = 1: the trainer builds no device mesh"
    return "the trainer's device mesh: unset degrees take what tp × cp × the set ones leave of the world size"


def _batch_how(written: Any, accumulation: Any) -> str:
    how = "the loader's batch_size (counts the steps of an epoch): (batch_size or micro × accumulation) × data_parallel"
    if written and accumulation == 1:
        how += (
            "; batch_size is written without gradient_accumulation_steps, which keeps its default 1, "
            "so a step takes micro_batch_size × data_parallel sequences, not batch_size × data_parallel"
        )
    return how
