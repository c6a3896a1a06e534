"""The layouts a checked file's rules accept at a world size, searched without checking it again.

Only the rules that read a layout path or the world size judge a candidate
(`layout_rules`), and each rule's verdict is remembered by the layout values
it reads (`Verdicts`). `plan` ranks every passing layout (`planner.py`);
`check` names the nearest one in its world-size errors (`with_nearest_layout`),
found by trying candidates in order of how many of the file's values they change.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from operator import itemgetter
from typing import Any

from trainspec.rules.evaluate import run_rules
from trainspec.spec.diagnostics import Clause, Diagnostic, Join
from trainspec.spec.errors import TrainspecError
from trainspec.spec.family import Family
from trainspec.spec.layout_space import LayoutSpace
from trainspec.spec.limits import LAYOUT_WORLD_SIZE, LAYOUTS
from trainspec.spec.paths import Path, format_path, is_prefix
from trainspec.spec.result import Result
from trainspec.spec.rules import Context, Rule
from trainspec.spec.schema import get
from trainspec.spec.wording import show


@dataclass(frozen=True)
class Layout:
    """One layout: every layout path's value, the overrides that select it, its warnings; with a GPU memory
    to fit (`plan --gpu-memory`), the family's estimate of one rank's memory under it; what it resolves to
    when the family describes it (`LayoutSpace.describe`)."""

    values: dict[str, Any]
    overrides: tuple[str, ...]
    warnings: tuple[str, ...] = ()
    memory: int | None = None
    resolved: str = ""


Judged = tuple[tuple[Rule, tuple[int, ...]], ...]
"""Rules with the indexes of the layout paths each reads."""


@functools.lru_cache(maxsize=64)
def layout_rules(family: Family, space: LayoutSpace) -> tuple[tuple[Path, ...], Judged]:
    """(the layout paths, each rule a candidate layout is judged by with the indexes of the layout paths
    it reads): the same for every file of a family, so worked out once."""
    paths = space.parsed_paths
    rules = [r for r in family.rules if r.needs_world_size or reads_any(r, paths)]
    return paths, tuple((r, tuple(i for i, p in enumerate(paths) if reads_any(r, (p,)))) for r in rules)


def search(base: Result, space: LayoutSpace) -> tuple[tuple[Path, ...], Judged, list[Diagnostic]]:
    """(the layout paths, the rules a candidate layout is judged by, the errors no layout changes)."""
    assert base.family is not None and base.document is not None
    paths, judged = layout_rules(base.family, space)
    if base.device is None:  # rules that read the device were skipped: they judge no layout either
        judged = tuple((r, read) for r, read in judged if not r.needs_device)
    moved = {r.id for r, _ in judged}
    return paths, judged, [d for d in base.diagnostics if d.is_error and d.rule not in moved and not _under(d, paths)]


def with_nearest_layout(result: Result, space: LayoutSpace, world_size: int) -> list[Diagnostic]:
    """The diagnostics, each world-size error naming the layout that passes with the fewest changes
    to the file (divisibility errors list their passing values themselves)."""
    family = result.family
    if family is None:
        return result.diagnostics
    sized = {r.id for r in family.rules if r.needs_world_size}
    if not any(d.is_error and d.rule in sized for d in result.diagnostics):
        return result.diagnostics
    moved = {r.id for r, _ in layout_rules(family, space)[1]}
    alone = replace(result, diagnostics=[d for d in result.diagnostics if d.rule in moved])  # the rest stay as they are
    try:
        found = closest(alone, space, world_size)
    except OverBudget as exc:  # the error stands, and says why it names no layout
        hint = Clause(f"no nearest layout was searched: {exc}", Join.AFTER)
    else:
        if found is None or not found.overrides:
            return result.diagnostics
        layout = ", ".join(found.overrides)
        hint = Clause(f"the nearest layout that passes at world size {world_size}: {layout}", Join.AFTER)
    return [d.adding(hint) if d.is_error and d.rule in sized else d for d in result.diagnostics]


def closest(base: Result, space: LayoutSpace, world_size: int) -> Layout | None:
    """`nearest(plan_result(...))` without ranking every layout: candidates are tried in order of
    how many of the file's values they change, and the search stops after the first group that
    has a passing one (of which the best ranked wins). None when nothing passes or the file has
    errors no layout changes; OverBudget past the budget."""
    assert base.config is not None
    paths, judged, blocking = search(base, space)
    if blocking:
        return None
    written = [get(base.config, p) for p in paths]
    free = [
        format_path(p) in space.auto and was == space.auto[format_path(p)]
        for p, was in zip(paths, written, strict=True)
    ]

    fixed = [(i, was) for i, (was, auto) in enumerate(zip(written, free, strict=True)) if not auto]

    def count(values: tuple[Any, ...]) -> int:
        """How many of the file's values (those not left at "auto") the candidate changes."""
        changed = 0
        for i, was in fixed:
            if values[i] != was:
                changed += 1
        return changed

    candidates = sorted(
        ((count(values), values) for values in Budget().candidates(space, base.config, world_size)),
        key=_first,  # stable: the family's order within a count
    )
    config = copied_along(base.config, paths)
    verdicts = Verdicts(base, judged, world_size, space.undone_by)
    found: list[tuple[tuple[Any, ...], Layout]] = []
    for changed, values in candidates:
        if found and changed > len(found[0][1].overrides):
            break
        for p, value in zip(paths, values, strict=True):
            put(config, p, value)
            if verdicts.raw:
                put(verdicts.doc.data, p, value)
        warnings = verdicts.warnings_if_passing(config, values)
        if warnings is not None:
            changes = overrides_selecting(space, paths, values, written)
            layout = Layout({format_path(p): v for p, v in zip(paths, values, strict=True)}, changes, warnings)
            found.append((space.rank(config, world_size, None), layout))
    return min(found, key=lambda item: item[0])[1] if found else None


def _first(item: tuple[int, Any]) -> int:
    return item[0]


class OverBudget(TrainspecError):
    """A layout search would run past its budget (`limits.LAYOUTS`, `limits.LAYOUT_WORLD_SIZE`)."""


class Budget:
    """The candidate layouts one search may still try (`limits.LAYOUTS`; world sizes up to
    `limits.LAYOUT_WORLD_SIZE`): a world size with many divisors asks for hours otherwise."""

    def __init__(self) -> None:
        self.left = LAYOUTS.value

    def candidates(self, space: LayoutSpace, config: dict[str, Any], world_size: int) -> Iterator[tuple[Any, ...]]:
        """The family's candidates at `world_size`, each one spent; OverBudget past the budget."""
        if world_size > LAYOUT_WORLD_SIZE.value:
            # a size past the limit may have more digits than Python writes out (a config's nnodes × nproc_per_node)
            many = f"{world_size:,}" if world_size < 10**18 else "more than 10^18"
            raise OverBudget(LAYOUT_WORLD_SIZE.exceeded(f"no layout is searched at {many} GPUs"))
        for values in space.candidates(config, world_size):
            self.left -= 1
            if self.left < 0:
                raise OverBudget(
                    LAYOUTS.exceeded(f"too many candidate layouts (the budget ran out at {world_size:,} GPUs)")
                )
            yield tuple(values)


def overrides_selecting(
    space: LayoutSpace, paths: tuple[Path, ...], values: Sequence[Any], written: Sequence[Any]
) -> tuple[str, ...]:
    """The overrides that select `values` from the file's own (a path at its "auto" value needs none)."""
    return tuple(
        f"{format_path(p)}={show(v)}"
        for p, v, was in zip(paths, values, written, strict=True)
        if v != was and not (format_path(p) in space.auto and was == space.auto[format_path(p)])
    )


class Verdicts:
    """Each rule's verdict on a candidate, remembered by the layout values the rule reads.

    A rule is a function of the values at its paths and the world size; only its layout paths
    change between candidates, so `tp-divides-heads` runs once per tp value, not once per layout.
    """

    def __init__(self, base: Result, judged: Judged, world_size: int, undone_by: frozenset[str] = frozenset()) -> None:
        assert base.family is not None and base.document is not None
        self.context = Context((world_size,), base.device, base.family.registries)
        self.raw = any(r.raw for r, _ in judged)
        self.doc = base.document.snapshot() if self.raw else base.document
        self.rules = [  # the most often remembered first; each with what picks its layout values out
            (rule, read, itemgetter(*read) if len(read) > 1 else _one(read))
            for rule, read in sorted(judged, key=lambda item: len(item[1]))
        ]
        self.seen: dict[tuple[str, tuple[Any, ...]], tuple[str, ...] | None] = {}
        self.ruled_out: Counter[str] = Counter()
        self.undone_by = undone_by

    def warnings_if_passing(self, config: dict[str, Any], values: tuple[Any, ...]) -> tuple[str, ...] | None:
        """The candidate's warning messages; None when a rule reports an error, or a warning that tells the
        user to undo the layout (`LayoutSpace.undone_by`)."""
        messages: list[str] = []
        seen = self.seen
        for rule, _, pick in self.rules:
            key = (rule.id, pick(values))
            if key not in seen:
                found = list(run_rules(self.doc, [rule], config, [], self.context))
                refused = any(d.is_error or d.rule in self.undone_by for d in found)
                self.seen[key] = None if refused else tuple(d.message for d in found)
            verdict = seen[key]
            if verdict is None:
                self.ruled_out[rule.id] += 1
                return None
            messages.extend(verdict)
        return tuple(messages)


def _one(read: tuple[int, ...]) -> Callable[[tuple[Any, ...]], Any]:
    """What picks the values at `read` (one index or none) out of a candidate, as a tuple (as `itemgetter`
    gives for two or more)."""
    if not read:
        return lambda values: ()
    i = read[0]
    return lambda values: (values[i],)


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
    if not diagnostic.path or diagnostic.origin:
        return False
    return any(is_prefix(p, diagnostic.path) for p in paths)


def copied_along(config: dict[str, Any], paths: tuple[Path, ...]) -> dict[str, Any]:
    """`config` with the tables on the way to `paths` copied: a candidate writes only there."""
    out = dict(config)
    for path in paths:
        node = out
        for part in path[:-1]:
            inner = node.get(str(part))
            node[str(part)] = node = dict(inner) if isinstance(inner, dict) else {}
    return out


def put(data: dict[str, Any], path: Path, value: Any) -> None:
    for part in path[:-1]:
        data = data.setdefault(str(part), {})
    data[str(path[-1])] = value
