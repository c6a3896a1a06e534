"""The device mesh Axolotl 0.18.0 builds from a config at a world size, or why it cannot.

Written from `axolotl.utils.distributed._get_parallel_config_kwargs` (which degree it infers
from the world size), `ModelLoader._apply_pre_model_load_setup` (when it builds a mesh at all)
and accelerate's `ParallelismConfig` check that the degrees multiply to the number of processes.
A config that builds no mesh (DDP, DeepSpeed, FSDP1) runs every rank as a data-parallel rank.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Mesh:
    """The degrees of one run: `built` is False when Axolotl builds no device mesh (then `dp_replicate`
    and `dp_shard` are not used and every rank outside tp and cp sees its own data)."""

    dp_replicate: int
    dp_shard: int
    tp: int
    cp: int
    built: bool

    @property
    def data_parallel(self) -> int:
        return self.dp_replicate * self.dp_shard

    def describe(self) -> str:
        if not self.built:
            return f"no device mesh: {self.data_parallel} data-parallel rank(s) (DDP, DeepSpeed or FSDP1)"
        return f"dp_replicate={self.dp_replicate} dp_shard={self.dp_shard} cp={self.cp} tp={self.tp}"


class MeshError(ValueError):
    """The trainer refuses the degrees at this world size when it builds its mesh (the message says why)."""


def degree(value: Any) -> int:
    """A degree as the trainer reads it: `value or 1` (unset, null and 0 all mean 1)."""
    return value if isinstance(value, int) and value > 0 else 1


def context_parallel(config: Mapping[str, Any]) -> int:
    """`context_parallel_size`, else the deprecated `sequence_parallel_degree` the loader copies into it."""
    return degree(config.get("context_parallel_size") or config.get("sequence_parallel_degree"))


def fsdp_version(config: Mapping[str, Any]) -> int | None:
    """The FSDP version the loader settles on: top level, else `fsdp_config`'s, else 1 with an `fsdp_config`."""
    inner = config.get("fsdp_config") or {}
    found = config.get("fsdp_version") or inner.get("fsdp_version") or inner.get("version")
    return found if found else (1 if inner else None)


def builds_mesh(config: Mapping[str, Any]) -> bool:
    """Whether the model loader builds a device mesh: with an FSDP2 `fsdp_config`, or without any
    `fsdp_config` when tensor or context parallelism is on (an FSDP1 `fsdp_config` turns it off)."""
    if config.get("fsdp_config"):
        return fsdp_version(config) == 2
    return degree(config.get("tensor_parallel_size")) > 1 or context_parallel(config) > 1


def resolve(config: Mapping[str, Any], world_size: int) -> Mesh:
    """The mesh the trainer builds at `world_size`; MeshError with the trainer's reason when it refuses."""
    tp, cp = degree(config.get("tensor_parallel_size")), context_parallel(config)
    if not builds_mesh(config):
        return Mesh(max(world_size // cp // tp, 1), 1, tp, cp, built=False)
    shard, replicate = config.get("dp_shard_size"), config.get("dp_replicate_size")
    fsdp = bool(config.get("fsdp") or config.get("fsdp_config"))
    left = world_size // tp // cp  # the trainer divides without checking: the product test below catches it
    sizes = {"tp": tp, "cp": cp, "dp_shard": 1, "dp_replicate": 1}
    if shard is None and replicate in (None, 1) and left > 1:
        sizes["dp_shard"], left = left, 1
    if isinstance(replicate, int) and replicate > 1:
        sizes["dp_replicate"], left = replicate, left // replicate
    if left > 1 and isinstance(shard, int) and shard > 1:
        if not fsdp:
            raise MeshError(f"dp_shard_size = {shard} needs an fsdp_config: the trainer shards only with FSDP")
        sizes["dp_shard"], left = shard, left // shard
        if left > 1 and sizes["dp_replicate"] == 1:
            sizes["dp_replicate"], left = left, 1
    if left > 1 and sizes["dp_shard"] == 1 and fsdp:
        sizes["dp_shard"], left = left, 1
    total = sizes["tp"] * sizes["cp"] * sizes["dp_shard"] * sizes["dp_replicate"]
    if left > 1 or total != world_size:
        raise MeshError(
            "the mesh would cover " + " × ".join(f"{k} {v}" for k, v in sizes.items()) + f" = {total} ranks"
        )
    return Mesh(sizes["dp_replicate"], sizes["dp_shard"], tp, cp, built=True)
