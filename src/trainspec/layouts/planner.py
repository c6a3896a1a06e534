"""Every parallel layout a family's rules accept at a world size (`trainspec plan`).

The family declares the paths that choose a layout and the candidates worth
trying (`Family.layout`); the engine checks the file once, then runs only the
rules that read a layout path or the world size on each candidate
(`layout_search`), and ranks what passes by the family's heuristic, then by
how little it changes the file. Each layout comes with the `--set` overrides
that select it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path as FsPath
from typing import Any

from trainspec.engine.layout_search import (
    Budget,
    Layout,
    OverBudget,
    Verdicts,
    copied_along,
    overrides_selecting,
    put,
    search,
)
from trainspec.engine.pipeline import as_overrides, world_sizes_of
from trainspec.engine.runner import Options, check_file
from trainspec.read.directives import directives_of
from trainspec.rules.gpu_memory import RULE, fitting
from trainspec.spec.device import Device
from trainspec.spec.diagnostics import Diagnostic
from trainspec.spec.errors import InvalidValue, TrainspecError
from trainspec.spec.family import Family
from trainspec.spec.layout_space import LayoutSpace
from trainspec.spec.paths import format_path, parse_path
from trainspec.spec.result import Outcome, Result, exit_status
from trainspec.spec.schema import get
from trainspec.spec.world_sizes import sizes_text

OVER_NODE = "more processes per node than --gpus-per-node"
"""How `ruled_out` counts the candidates that would start more processes on a node than it has GPUs."""


class PlanError(TrainspecError):
    """No plan can be made for this file (its family declares no layout, or it could not be read).

    `diagnostics`: the errors of a file that could not be checked (empty when its family declares no layout);
    `outcome`: that file's check's outcome (None when the file checked, but no layout can be searched).
    """

    def __init__(self, message: str, diagnostics: Sequence[Diagnostic] = (), outcome: Outcome | None = None) -> None:
        super().__init__(message)
        self.diagnostics = tuple(diagnostics)
        self.outcome = outcome

    @property
    def exit_status(self) -> int:
        """The file's check's status (1, or 2 for a usage problem); 2 when there is no layout to search."""
        return 2 if self.outcome is None else exit_status(self.outcome, ok=False)


@dataclass
class Plan:
    """The layouts that pass at one world size, best first; `blocking` are errors no layout changes;
    `ruled_out` counts the candidates each rule was the first to refuse. `written`: each layout path's
    value in the file itself (without the plan's overrides); `pinned`: the world sizes the file's
    `# trainspec: world-size=` directive fixes (a layout at another size cannot be written into it)."""

    file: str
    family: Family
    world_size: int
    layouts: list[Layout] = field(default_factory=list)
    blocking: list[Diagnostic] = field(default_factory=list)
    ruled_out: dict[str, int] = field(default_factory=dict)
    written: dict[str, Any] = field(default_factory=dict)
    pinned: tuple[int, ...] = ()


def plan(
    path: str | FsPath,
    gpus: int | Sequence[int],
    *,
    family: str | Family | None = None,
    overrides: str | Iterable[str] = (),
    gpus_per_node: int | None = None,
    gpu_memory: int | None = None,
    gpu: Device | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[Plan]:
    """The passing layouts of one config at each world size in `gpus`, ranked.

    With `gpu_memory` (bytes of one GPU), layouts whose estimated memory per rank exceeds it are left
    out and the rest ranked by headroom first. `gpu`: the target GPU (`device.target`), for the rules
    that read it; its memory is the budget when `gpu_memory` is not given. Raises PlanError when the
    file's family declares no layout or the file cannot be checked at all; ValueError for a world size
    below 1. One string is one override. `progress(done, total)` is called after each world size (a long
    plan shows how far it got).
    """
    sizes = world_sizes_of(gpus)
    if gpus_per_node is not None and (isinstance(gpus_per_node, bool) or gpus_per_node < 1):
        raise InvalidValue(f"gpus_per_node must be a whole number of at least 1, got {gpus_per_node!r}")
    given = as_overrides(overrides)
    base = check_file(str(path), Options(family=family, overrides=tuple(given), as_found=True, gpu=gpu))
    if gpu_memory is None and base.device is not None:
        gpu_memory = base.device.memory
    space = layout_of(base)
    written = _file_values(base, space, family, bool(given))
    pinned = _pinned(base)
    budget = Budget()
    plans: list[Plan] = []
    try:
        for size in sizes:
            plans.append(plan_result(base, space, size, gpus_per_node, budget, gpu_memory))
            if progress is not None:
                progress(len(plans), len(sizes))
    except OverBudget as exc:
        done = f"world sizes {sizes_text([p.world_size for p in plans])}" if plans else "no world size"
        raise PlanError(
            f"{exc}; planned {done} of the {len(sizes):,} given before it ran out: plan fewer sizes at once"
        ) from None
    for found in plans:
        found.written, found.pinned = written, pinned
    return plans


def _file_values(base: Result, space: LayoutSpace, family: str | Family | None, overridden: bool) -> dict[str, Any]:
    """Each layout path's value in the file itself: `base` checked again without its overrides when it has some."""
    assert base.config is not None and base.document is not None
    config = base.config
    if overridden:
        alone = check_file(
            base.file, Options(family=base.family or family, texts={base.file: base.document.text}, as_found=True)
        )
        config = alone.config if alone.config is not None else base.document.data
    return {p: get(config, path) for p, path in zip(space.paths, space.parsed_paths, strict=True)}


def _pinned(base: Result) -> tuple[int, ...]:
    """The world sizes a `# trainspec: world-size=N` directive of the file fixes."""
    assert base.document is not None
    return directives_of(base.document)[0].world_sizes


def layout_of(base: Result) -> LayoutSpace:
    """The layout space of a checked file's family; PlanError when there is none to search."""
    if base.family is None or base.config is None or base.document is None:
        problems = "; ".join(d.message for d in base.diagnostics if d.is_error) or "no family"
        errors = [d for d in base.diagnostics if d.is_error]
        raise PlanError(f"{base.file}: cannot be planned ({problems})", errors, base.outcome)
    if base.family.layout is None:
        raise PlanError(f"family {base.family.id} declares no parallel layout, so there is nothing to plan")
    return base.family.layout


def plan_result(
    base: Result,
    space: LayoutSpace,
    world_size: int,
    gpus_per_node: int | None = None,
    budget: Budget | None = None,
    gpu_memory: int | None = None,
) -> Plan:
    """The layouts of a file already checked without a world size (`base`), at one world size; OverBudget
    when the candidates run past the budget (`limits.LAYOUTS`, shared by every size of one plan). With
    `gpu_memory`, only the layouts whose estimated memory per rank fits, the most headroom first."""
    assert base.family is not None and base.config is not None
    paths, judged, blocking = search(base, space)
    result = Plan(base.file, base.family, world_size, blocking=sorted(blocking, key=Diagnostic.sort_key))  # as check
    if blocking:
        return result
    config = copied_along(base.config, paths)
    written = [get(base.config, p) for p in paths]
    verdicts = Verdicts(base, judged, world_size, space.undone_by)
    node = paths.index(parse_path(space.per_node)) if space.per_node and gpus_per_node else None
    ranked = []
    for values in (budget or Budget()).candidates(space, base.config, world_size):
        if node is not None and gpus_per_node is not None and values[node] > gpus_per_node:
            verdicts.ruled_out[OVER_NODE] += 1
            continue
        for p, value in zip(paths, values, strict=True):
            put(config, p, value)
            if verdicts.raw:  # rules that read the values as written see the layout's values as written
                put(verdicts.doc.data, p, value)
        warnings = verdicts.warnings_if_passing(config, values)
        if warnings is None:
            continue
        fit = fitting(base.family, config, world_size, gpu_memory)
        if fit is None:
            verdicts.ruled_out[RULE] += 1
            continue
        changes = overrides_selecting(space, paths, values, written)
        resolved = space.describe(config, world_size) if space.describe else ""
        layout = Layout(
            {format_path(p): v for p, v in zip(paths, values, strict=True)}, changes, warnings, fit[1], resolved
        )
        ranked.append(((fit[0], *space.rank(config, world_size, gpus_per_node), len(changes), values), layout))
    result.layouts = [layout for _, layout in sorted(ranked, key=lambda item: item[0])]
    result.ruled_out = dict(verdicts.ruled_out.most_common())
    return result


def nearest(found: Plan) -> Layout | None:
    """The passing layout that changes the fewest of the file's values (the best ranked among them),
    counted against the file itself (`Plan.written`) when known, else against the file with the overrides."""
    if not found.written:
        return min(found.layouts, key=lambda layout: len(layout.overrides), default=None)
    return min(found.layouts, key=lambda layout: len(file_changes(found, layout)), default=None)


def file_changes(found: Plan, layout: Layout) -> dict[str, Any]:
    """The layout's values that differ from the file's own (`Plan.written`): what writing it into the file
    changes. A path the file holds at its "auto" value (`dp_shard = -1`) follows the others by itself."""
    auto = found.family.layout.auto if found.family.layout is not None else {}
    return {
        path: value
        for path, value in layout.values.items()
        if path not in found.written
        or (found.written[path] != value and not (path in auto and found.written[path] == auto[path]))
    }
