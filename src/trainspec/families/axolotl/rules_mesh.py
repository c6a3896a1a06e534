"""Axolotl rules for what fails only when the trainer builds its device mesh, after the config loaded.

The loader's validation never sees the world size's effect on the degrees; the model loader does
(`axolotl.utils.distributed._get_parallel_config_kwargs`, then accelerate's `ParallelismConfig`), and a
job stops there, after the model was downloaded. `mesh.py` holds the trainer's arithmetic.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from trainspec.spec.rules import Rule, rule

from .mesh import MeshError, resolve

DEGREES = ("dp_replicate_size", "dp_shard_size", "tensor_parallel_size", "context_parallel_size")
SETUP = ("sequence_parallel_degree", "fsdp", "fsdp_config", "fsdp_version")


@rule("mesh-fits-world-size", "error", *DEGREES, *SETUP)
def mesh_fits_world_size(
    dp_replicate_size: int | None,
    dp_shard_size: int | None,
    tensor_parallel_size: int | None,
    context_parallel_size: int | None,
    sequence_parallel_degree: int | None,
    fsdp: list[str] | None,
    fsdp_config: dict[str, Any] | None,
    fsdp_version: int | None,
    *,
    world_size: int,
) -> Iterator[str]:
    """The parallel degrees must make a device mesh of exactly the world size.

    Axolotl builds a device mesh with an FSDP2 `fsdp_config`, or when `tensor_parallel_size` or
    `context_parallel_size` is above 1. It takes tp and cp, then the degrees set, and gives what is
    left of the world size to the unset `dp_shard_size` (or, with FSDP, to an unset `dp_replicate_size`);
    degrees that leave ranks over or do not divide the world size stop the job when it builds the mesh,
    and so does a `dp_shard_size` above 1 without an `fsdp_config`. The loader's validation accepts
    such a config: trainspec is stricter by the mesh check the job makes a few minutes later.
    Mirrors `distributed._get_parallel_config_kwargs`.
    """
    config = {k: v for k, v in locals().items() if k in DEGREES or k in SETUP}
    try:
        resolve(config, world_size)
    except MeshError as exc:
        written = ", ".join(f"{k} = {v}" for k, v in config.items() if k in DEGREES and v is not None)
        yield (
            f"at world size {world_size}, {written or 'no parallel degree set'}: {exc}; the job stops when it "
            "builds its device mesh (the loader's validation accepts it). Set the degrees so that "
            f"tensor_parallel_size × context_parallel_size × dp_replicate_size × dp_shard_size = {world_size}, "
            "or leave dp_shard_size unset to take the ranks left over"
        )


RULES: list[Rule] = [mesh_fits_world_size]
