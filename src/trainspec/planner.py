"""Every parallel layout a family's rules accept at a world size (`trainspec plan`).

The family declares the paths that choose a layout and the candidates worth
trying (`Family.layout`); the engine checks the file once, then runs only the
rules that read a layout path or the world size on each candidate, and ranks
what passes by the family's heuristic, then by how little it changes the
file. Each layout comes with the `--set` overrides that select it.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path as FsPath
from typing import Any

from .checker import run_rules
from .diagnostics import Diagnostic
from .directives import directives_of
from .errors import TrainspecError
from .families import Family
from .layout import LayoutSpace
from .limits import LAYOUT_WORLD_SIZE, LAYOUTS
from .paths import Path, format_path, is_prefix, parse_path
from .pipeline import as_overrides, check_path, world_sizes_of
from .result import Result
from .rules import Rule
from .schema import get
from .validation import show


class PlanError(TrainspecError):
    """No plan can be made for this file (its family declares no layout, or it could not be read).

    `diagnostics`: the errors of a file that could not be checked (empty when its family declares no layout).
    """

    def __init__(self, message: str, diagnostics: Sequence[Diagnostic] = ()) -> None:
        super().__init__(message)
        self.diagnostics = tuple(diagnostics)


@dataclass(frozen=True)
class Layout:
    """One layout: every layout path's value, the overrides that select it, its warnings."""

    values: dict[str, Any]
    overrides: tuple[str, ...]
    warnings: tuple[str, ...] = ()


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
) -> list[Plan]:
    """The passing layouts of one config at each world size in `gpus`, ranked.

    Raises PlanError when the file's family declares no layout or the file
    cannot be checked at all; ValueError for a world size below 1. One string is one override.
    """
    sizes = world_sizes_of(gpus)
    if gpus_per_node is not None and (isinstance(gpus_per_node, bool) or gpus_per_node < 1):
        raise ValueError(f"gpus_per_node must be a whole number of at least 1, got {gpus_per_node!r}")
    given = as_overrides(overrides)
    base = check_path(path, family=family, overrides=given)
    space = layout_of(base)
    written = _file_values(base, space, family, bool(given))
    pinned = _pinned(base)
    budget = Budget()
    plans = [plan_result(base, space, size, gpus_per_node, budget) for size in sizes]
    for found in plans:
        found.written, found.pinned = written, pinned
    return plans


def _file_values(base: Result, space: LayoutSpace, family: str | Family | None, overridden: bool) -> dict[str, Any]:
    """Each layout path's value in the file itself: `base` checked again without its overrides when it has some."""
    assert base.config is not None and base.document is not None
    config = base.config
    if overridden:
        alone = check_path(base.file, text=base.document.text, family=base.family or family)
        config = alone.config if alone.config is not None else base.document.data
    return {p: get(config, parse_path(p)) for p in space.paths}


def _pinned(base: Result) -> tuple[int, ...]:
    """The world sizes a `# trainspec: world-size=N` directive of the file fixes."""
    assert base.document is not None
    return directives_of(base.document)[0].world_sizes


def layout_of(base: Result) -> LayoutSpace:
    """The layout space of a checked file's family; PlanError when there is none to search."""
    if base.family is None or base.config is None or base.document is None:
        problems = "; ".join(d.message for d in base.diagnostics if d.is_error) or "no family"
        raise PlanError(f"{base.file}: cannot be planned ({problems})", [d for d in base.diagnostics if d.is_error])
    if base.family.layout is None:
        raise PlanError(f"family {base.family.id} declares no parallel layout, so there is nothing to plan")
    return base.family.layout


def plan_result(
    base: Result, space: LayoutSpace, world_size: int, gpus_per_node: int | None = None, budget: Budget | None = None
) -> Plan:
    """The layouts of a file already checked without a world size (`base`), at one world size; PlanError
    when the candidates run past the budget (`limits.LAYOUTS`, shared by every size of one plan)."""
    assert base.family is not None and base.config is not None
    paths, judged, blocking = _search(base, space)
    result = Plan(base.file, base.family, world_size, blocking=blocking)
    if blocking:
        return result
    config = _copied_along(base.config, paths)
    written = [get(base.config, p) for p in paths]
    verdicts = _Verdicts(base, judged, world_size)
    ranked = []
    for values in (budget or Budget()).candidates(space, base.config, world_size):
        for p, value in zip(paths, values, strict=True):
            _put(config, p, value)
            if verdicts.raw:  # rules that read the values as written see the layout's values as written
                _put(verdicts.doc.data, p, value)
        warnings = verdicts.warnings_if_passing(config, values)
        if warnings is None:
            continue
        changes = _changes(space, paths, values, written)
        layout = Layout({format_path(p): v for p, v in zip(paths, values, strict=True)}, changes, warnings)
        ranked.append(((*space.rank(config, world_size, gpus_per_node), len(changes), values), layout))
    result.layouts = [layout for _, layout in sorted(ranked, key=lambda item: item[0])]
    result.ruled_out = dict(verdicts.ruled_out.most_common())
    return result


Judged = tuple[tuple[Rule, tuple[int, ...]], ...]
"""Rules with the indexes of the layout paths each reads."""


@functools.lru_cache(maxsize=64)
def layout_rules(family: Family, space: LayoutSpace) -> tuple[tuple[Path, ...], Judged]:
    """(the layout paths, each rule a candidate layout is judged by with the indexes of the layout paths
    it reads): the same for every file of a family, so worked out once."""
    paths = tuple(parse_path(p) for p in space.paths)
    rules = [r for r in family.rules if r.needs_world_size or reads_any(r, paths)]
    return paths, tuple((r, tuple(i for i, p in enumerate(paths) if reads_any(r, (p,)))) for r in rules)


def _search(base: Result, space: LayoutSpace) -> tuple[tuple[Path, ...], Judged, list[Diagnostic]]:
    """(the layout paths, the rules a candidate layout is judged by, the errors no layout changes)."""
    assert base.family is not None and base.document is not None
    paths, judged = layout_rules(base.family, space)
    moved = {r.id for r, _ in judged}
    return paths, judged, [d for d in base.diagnostics if d.is_error and d.rule not in moved and not _under(d, paths)]


def closest(base: Result, space: LayoutSpace, world_size: int) -> Layout | None:
    """`nearest(plan_result(...))` without ranking every layout: candidates are tried in order of
    how many of the file's values they change, and the search stops after the first group that
    has a passing one (of which the best ranked wins). None when nothing passes or the file has
    errors no layout changes; PlanError past the budget."""
    assert base.config is not None
    paths, judged, blocking = _search(base, space)
    if blocking:
        return None
    written = [get(base.config, p) for p in paths]
    free = [
        format_path(p) in space.auto and was == space.auto[format_path(p)]
        for p, was in zip(paths, written, strict=True)
    ]

    def count(values: tuple[Any, ...]) -> int:
        return sum(v != was and not auto for v, was, auto in zip(values, written, free, strict=True))

    candidates = list(Budget().candidates(space, base.config, world_size))
    config = _copied_along(base.config, paths)
    verdicts = _Verdicts(base, judged, world_size)
    found: list[tuple[tuple[Any, ...], Layout]] = []
    for values in sorted(candidates, key=count):
        if found and count(values) > len(found[0][1].overrides):
            break
        changes = _changes(space, paths, values, written)
        for p, value in zip(paths, values, strict=True):
            _put(config, p, value)
            if verdicts.raw:
                _put(verdicts.doc.data, p, value)
        warnings = verdicts.warnings_if_passing(config, values)
        if warnings is not None:
            layout = Layout({format_path(p): v for p, v in zip(paths, values, strict=True)}, changes, warnings)
            found.append((space.rank(config, world_size, None), layout))
    return min(found, key=lambda item: item[0])[1] if found else None


def _changes(
    space: LayoutSpace, paths: tuple[Path, ...], values: Sequence[Any], written: Sequence[Any]
) -> tuple[str, ...]:
    """The overrides that select `values` from the file's own (a path at its "auto" value needs none)."""
    return tuple(
        f"{format_path(p)}={show(v)}"
        for p, v, was in zip(paths, values, written, strict=True)
        if v != was and not (format_path(p) in space.auto and was == space.auto[format_path(p)])
    )


class Budget:
    """The candidate layouts one search may still try (`limits.LAYOUTS`; world sizes up to
    `limits.LAYOUT_WORLD_SIZE`): a world size with many divisors asks for hours otherwise."""

    def __init__(self) -> None:
        self.left = LAYOUTS.value

    def candidates(self, space: LayoutSpace, config: dict[str, Any], world_size: int) -> Iterator[tuple[Any, ...]]:
        """The family's candidates at `world_size`, each one spent; PlanError past the budget."""
        if world_size > LAYOUT_WORLD_SIZE.value:
            raise PlanError(LAYOUT_WORLD_SIZE.exceeded(f"no layout is searched at {world_size:,} GPUs"))
        for values in space.candidates(config, world_size):
            self.left -= 1
            if self.left < 0:
                found = f"too many candidate layouts (the budget ran out at {world_size:,} GPUs)"
                raise PlanError(LAYOUTS.exceeded(found))
            yield tuple(values)


class _Verdicts:
    """Each rule's verdict on a candidate, remembered by the layout values the rule reads.

    A rule is a function of the values at its paths and the world size; only its layout paths
    change between candidates, so `tp-divides-heads` runs once per tp value, not once per layout.
    """

    def __init__(self, base: Result, judged: Judged, world_size: int) -> None:
        assert base.family is not None and base.document is not None
        self.registries, self.world_size = base.family.registries, world_size
        self.raw = any(r.raw for r, _ in judged)
        self.doc = base.document.snapshot() if self.raw else base.document
        self.rules = sorted(judged, key=lambda item: len(item[1]))  # the most often remembered first
        self.seen: dict[tuple[str, tuple[Any, ...]], tuple[str, ...] | None] = {}
        self.ruled_out: Counter[str] = Counter()

    def warnings_if_passing(self, config: dict[str, Any], values: tuple[Any, ...]) -> tuple[str, ...] | None:
        """The candidate's warning messages; None when a rule reports an error."""
        messages: list[str] = []
        for rule, read in self.rules:
            key = (rule.id, tuple(values[i] for i in read))
            if key not in self.seen:
                found = list(run_rules(self.doc, [rule], config, [], self.world_size, self.registries))
                self.seen[key] = None if any(d.is_error for d in found) else tuple(d.message for d in found)
            verdict = self.seen[key]
            if verdict is None:
                self.ruled_out[rule.id] += 1
                return None
            messages.extend(verdict)
        return tuple(messages)


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


def reads_any(rule: Rule, paths: tuple[Path, ...]) -> bool:
    """Whether the rule reads one of `paths`, or a value inside or above one."""
    return any(_reads(rule.parsed_paths, p) for p in paths)


@functools.lru_cache(maxsize=4096)
def _reads(reads: tuple[Path, ...], path: Path) -> bool:
    """Asked for every rule and layout path of every file planned or hinted: remembered."""
    return any(is_prefix(path, q) or is_prefix(q, path) for q in reads)


def _under(diagnostic: Diagnostic, paths: tuple[Path, ...]) -> bool:
    """A diagnostic about a layout path (a schema error there): a layout sets that value anew.
    Not one about a value an override gave (`--set distributed.tp=abc`): that is the command's error."""
    if not diagnostic.config_path or diagnostic.origin:
        return False
    try:
        where = parse_path(diagnostic.config_path)
    except ValueError:
        return False
    return any(is_prefix(p, where) for p in paths)


def _copied_along(config: dict[str, Any], paths: tuple[Path, ...]) -> dict[str, Any]:
    """`config` with the tables on the way to `paths` copied: a candidate writes only there."""
    out = dict(config)
    for path in paths:
        node = out
        for part in path[:-1]:
            inner = node.get(str(part))
            node[str(part)] = node = dict(inner) if isinstance(inner, dict) else {}
    return out


def _put(data: dict[str, Any], path: Path, value: Any) -> None:
    for part in path[:-1]:
        data = data.setdefault(str(part), {})
    data[str(path[-1])] = value
