"""A GPU's memory as a check: the family's estimate of one rank's memory (`Family.memory`) against the
memory of the GPUs the job runs on (`--gpu-memory 80GiB`, or `gpu-memory` in the project configuration;
`layout.parse_size` reads both; without either, the memory of the target GPU, `--gpu h100`, when the
catalogue of `device` knows it).

`check` reports `gpu-memory-exceeded` when the estimate at a world size is above the budget, naming
its largest part; `plan` drops the layouts that do not fit and ranks the rest by headroom. The engine
knows no family's memory model: a family without one is not checked.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from trainspec.spec.codes import GPU_MEMORY_EXCEEDED, HOOK_FAILED, WORLD_SIZE_UNKNOWN
from trainspec.spec.diagnostics import Diagnostic, Severity
from trainspec.spec.family import Family
from trainspec.spec.layout_space import MemoryEstimate
from trainspec.spec.result import Result

RULE = GPU_MEMORY_EXCEEDED.id


def gib(n: int) -> str:
    return f"{n / 2**30:.1f} GiB"


def estimate(family: Family, config: Mapping[str, Any], world_size: int) -> MemoryEstimate | None:
    """The family's estimate, or None: no memory model, a layout that does not resolve, or a hook that fails
    (a family hook must not take `plan` down; `check` reports the failure, see `exceeded`)."""
    try:
        return _estimate(family, config, world_size)
    except Exception:
        return None


def _estimate(family: Family, config: Mapping[str, Any], world_size: int) -> MemoryEstimate | None:
    return None if family.memory is None else family.memory(config, world_size)


def fitting(
    family: Family, config: Mapping[str, Any], world_size: int, budget: int | None
) -> tuple[int, int | None] | None:
    """(sort key: less headroom later, the estimated bytes per rank) of a candidate layout, or None when it
    does not fit the budget. Without a budget or an estimate every layout fits, unranked by memory."""
    if budget is None:
        return 0, None
    found = estimate(family, config, world_size)
    if found is None:
        return 0, None
    if found.total > budget:
        return None
    return found.total - budget, found.total


def exceeded(result: Result, budget: int, sizes: Iterable[int], gpu: str | None = None) -> list[Diagnostic]:
    """`gpu-memory-exceeded` for each world size whose estimate is above the budget, for a config without errors.
    `gpu`: the name of the target GPU whose memory the budget is (None: the budget was given as such)."""
    if result.family is None or result.config is None or any(d.is_error for d in result.diagnostics):
        return []
    sizes = list(sizes)
    what = "--gpu-memory" if gpu is None else f"the memory of {gpu}"
    if not sizes and result.family.memory is not None:
        message = f"{what} not checked: the memory per rank depends on the world size; pass --world-size N"
        return [Diagnostic(result.file, None, None, (), WORLD_SIZE_UNKNOWN.id, Severity.NOTE, message)]
    out = []
    for size in sizes:
        try:
            found = _estimate(result.family, result.config, size)
        except Exception as exc:
            message = (
                f"the memory estimate of family {result.family.name} failed at world size {size} "
                f"({type(exc).__name__}: {exc}), so {what} was not checked; this is a bug in the family, "
                "please report it"
            )
            out.append(Diagnostic(result.file, None, None, (), HOOK_FAILED.id, Severity.ERROR, message))
            continue
        if found is None or found.total <= budget:
            continue
        largest = found.largest
        at = f"at world size {size}: " if len(sizes) > 1 else ""
        limit = f"--gpu-memory {gib(budget)}" if gpu is None else f"the {gib(budget)} of {gpu}"
        message = (
            f"{at}the estimated memory per rank, {gib(found.total)}, exceeds {limit}; the largest "
            f"part is {largest.name} ({gib(int(largest.value or 0))}: {largest.how}). The estimate assumes "
            f"{found.assumptions}; "
            f"`trainspec show --world-size {size}` lists every part"
        )
        out.append(Diagnostic(result.file, None, None, (), RULE, Severity.ERROR, message, world_size=size))
    return out
