"""The rule engine: each rule run on the values at its paths, its findings placed in the file.

A rule whose inputs failed the schema (or sit inside or above a value that did)
is skipped, unless those inputs are `optional`; world-size rules run once per
world size, and a size given for a config that states its own is one mistake,
reported once; rules that read the target device are skipped, with a note,
without one. A rule that raises becomes a diagnostic, never a stopped run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from operator import itemgetter
from typing import Any

from trainspec.rules.placement import first_written, place, related_place
from trainspec.spec.codes import GPU_UNKNOWN, WORLD_SIZE_CHECKED, WORLD_SIZE_UNKNOWN
from trainspec.spec.diagnostics import Clause, Diagnostic, Join, Severity, at_world_size
from trainspec.spec.document import Document
from trainspec.spec.paths import Path, format_path
from trainspec.spec.rules import ABSENT, Context, Rule, Violation
from trainspec.spec.schema import get
from trainspec.spec.wording import show
from trainspec.spec.world_sizes import sizes_text

NOTHING_KNOWN = Context()
"""A check that knows no world size, no device and no registered names."""


def world_size_rules(
    doc: Document, rules: Sequence[Rule], config: dict[str, Any], broken: list[Path], context: Context
) -> Iterator[Diagnostic]:
    """World-size rules at each of the context's sizes: plain at one size; at several, each diagnostic says
    its size and a size where all pass gets a note. Without a size they are skipped, with a note."""
    if not rules:
        return
    sizes = context.world_sizes
    if not sizes:
        skipped = ", ".join(r.id for r in rules)
        message = f"world-size rules not checked ({skipped}): no world size known; pass --world-size N"
        yield Diagnostic(doc.file, None, None, (), WORLD_SIZE_UNKNOWN.id, Severity.NOTE, message)
        return
    if len(sizes) == 1:
        yield from run_rules(doc, rules, config, broken, context)
        return
    if len(sizes) > GROUPED_ABOVE:
        yield from _grouped(doc, rules, config, broken, context)
        return
    for size in sizes:
        found = [
            replace(d, world_size=size, clauses=(*d.clauses, at_world_size(size)))
            for d in run_rules(doc, rules, config, broken, context.at(size))
        ]
        yield from found or [
            Diagnostic(
                doc.file,
                None,
                None,
                (),
                WORLD_SIZE_CHECKED.id,
                Severity.NOTE,
                "every world-size rule passes",
                world_size=size,
                clauses=(at_world_size(size),),
            )
        ]


GROUPED_ABOVE = 16
"""Sizes above which a finding is reported once for all the sizes it holds at, with one note saying which
sizes pass: `--world-size 1..1024` is a summary, not a thousand lines."""


def _grouped(
    doc: Document, rules: Sequence[Rule], config: dict[str, Any], broken: list[Path], context: Context
) -> Iterator[Diagnostic]:
    """World-size rules at many sizes: each finding (a rule at a path) once, at the first size it holds at,
    naming every size it holds at; then a note with the sizes where every rule passes and where one fails."""
    sizes = context.world_sizes
    first: dict[tuple[str, Path, Severity], Diagnostic] = {}
    where: dict[tuple[str, Path, Severity], list[int]] = {}
    failing: set[int] = set()
    for size in sizes:
        for d in run_rules(doc, rules, config, broken, context.at(size)):
            key = (d.rule, d.path, d.severity)
            first.setdefault(key, d)
            where.setdefault(key, []).append(size)
            if d.is_error:
                failing.add(size)
    for key, d in first.items():
        held = where[key]
        clause = Clause(
            f"at {len(held):,} of the {len(sizes):,} world sizes ({sizes_text(held)}), first at {held[0]}", Join.BEFORE
        )
        yield replace(d, world_size=held[0], world_sizes=tuple(held), clauses=(*d.clauses, clause))
    passing = [s for s in sizes if s not in failing]
    if not failing:
        verdict = "every world-size rule passes at each"
    elif passing:
        verdict = f"passes at {sizes_text(passing)}; fails at {sizes_text(sorted(failing))}"
    else:
        verdict = "fails at every one of them"
    message = f"world-size rules checked at {len(sizes):,} world sizes ({sizes_text(sizes)}): {verdict}"
    yield Diagnostic(doc.file, None, None, (), WORLD_SIZE_CHECKED.id, Severity.NOTE, message)


def no_target(doc: Document, rules: Sequence[Rule]) -> list[Diagnostic]:
    """The note that rules reading the target device were skipped, for want of one (none when no rule was)."""
    if not rules:
        return []
    skipped = ", ".join(r.id for r in rules)
    message = f"GPU rules not checked ({skipped}): no target GPU known; pass --gpu NAME (e.g. h100) or --gpu sm_90"
    return [Diagnostic(doc.file, None, None, (), GPU_UNKNOWN.id, Severity.NOTE, message)]


def disagreeing_sizes(
    doc: Document,
    rules: Sequence[Rule],
    config: dict[str, Any],
    broken: list[Path],
    context: Context,
    own: int | None,
) -> list[Diagnostic]:
    """Given sizes (the context's) other than the one the config states for itself: each rule they break, once.

    When the config's own size is among those given (`own`), the rules ran there and what breaks there
    is said there; a size given for the file that differs is one mistake however many such sizes
    there are. With none of the given sizes its own (`own` None), the launcher starts at the given
    ones, so every rule is judged at them alone.
    """
    passing = (
        set() if own is None else {(d.rule, d.path) for d in run_rules(doc, rules, config, broken, context.at(own))}
    )
    first: dict[tuple[str, Path], Diagnostic] = {}
    also: dict[tuple[str, Path], list[int]] = {}
    for size in context.world_sizes:
        for d in run_rules(doc, rules, config, broken, context.at(size)):
            key = (d.rule, d.path)
            if key in passing:
                continue
            if key in first:
                also[key].append(size)
            else:
                first[key], also[key] = replace(d, world_size=size), []
    return [
        d.adding(Clause(f"the same at world size {', '.join(map(str, also[key]))}")) if also[key] else d
        for key, d in first.items()
    ]


def run_rules(
    doc: Document, rules: Sequence[Rule], config: dict[str, Any], broken: list[Path], context: Context = NOTHING_KNOWN
) -> Iterator[Diagnostic]:
    """Each rule on the values at its paths, given what the check knows (`context`: at most one world size)."""
    reading = _reading(rules)
    read = reading.read(config)
    touched = reading.touched(broken) if broken else _NOTHING
    for rule, pick, plain, paths_read in reading.rules:
        paths = rule.parsed_paths
        stopped: set[Path] | frozenset[Path] = _NOTHING
        if touched and not touched.isdisjoint(paths_read):
            stopped = touched & paths_read
            if stopped - rule.optional:
                continue
        values: Sequence[Any] = [_written_at(doc.data, p) for p in paths] if rule.raw else pick(read)
        if stopped:
            values = [ABSENT if p in stopped else v for p, v in zip(paths, values, strict=True)]
        try:
            if plain:  # `Rule.run` without its call: most rules need nothing but their values, and find nothing
                found = rule.check(*values)
                violations = []
                if found:
                    for f in found:
                        violations.append(f if type(f) is Violation or isinstance(f, Violation) else Violation(f))
            else:
                violations = rule.run(list(values), context)
        except Exception as exc:  # a rule must not take the whole report down
            yield Diagnostic(
                doc.file,
                None,
                None,
                (),
                rule.id,
                Severity.ERROR,
                f"rule {rule.id} failed on this config ({type(exc).__name__}: {exc}); please report it",
            )
            continue
        if violations:
            by_path = dict(zip(paths, values, strict=True))
            for violation in violations:
                yield _rule_diagnostic(doc, rule, by_path, violation)


class _Reading:
    """How a set of rules reads a config: every path any of them reads, read once, grouped under the
    mapping that holds it (one look-up of that mapping, then its keys), and for each rule what it
    takes of those values. The rules of a family read the same paths over and over (`distributed.tp`
    by a dozen), and the same rules run for every file: built once per tuple of rules."""

    def __init__(self, rules: Sequence[Rule]) -> None:
        parents: dict[Path, list[Path]] = {}
        for rule in rules:
            if not rule.raw:
                for path in rule.parsed_paths:
                    if path and path not in parents.get(path[:-1], ()):
                        parents.setdefault(path[:-1], []).append(path)
        self.whole = any(() in rule.parsed_paths for rule in rules)
        """Whether a rule reads the whole config (the empty path): it comes first."""
        self.groups = [(parent, tuple(p[-1] for p in paths), paths) for parent, paths in parents.items()]
        order = [()] * self.whole + [p for _, _, paths in self.groups for p in paths]
        index = {p: n for n, p in enumerate(order)}
        self.rules = [
            (
                rule,
                _picker(tuple(index.get(p, -1) for p in rule.parsed_paths)),
                _plain(rule),
                frozenset(rule.parsed_paths),
            )
            for rule in rules
        ]
        self.by_section: dict[str | int | None, set[Path]] = {}
        """Every path a rule reads, raw ones too, by its top-level key (None: the whole document)."""
        for rule in rules:
            for path in rule.parsed_paths:
                self.by_section.setdefault(path[0] if path else None, set()).add(path)

    def touched(self, broken: list[Path]) -> set[Path]:
        """The paths the rules read that are one of `broken` (values that failed the schema), inside one or
        above one: only those under a top-level key something broke under are asked about."""
        touches = _touches_any(broken)
        sections = {b[0] if b else None for b in broken}
        asked = self.by_section.values() if None in sections else (self.by_section.get(s, ()) for s in sections)
        whole = self.by_section.get(None, ())  # a rule reading the whole document reads what broke
        return {p for paths in (*asked, whole) for p in paths if touches(p)}

    def read(self, config: dict[str, Any]) -> list[Any]:
        """The value at each path (None where a step is absent), in the order the pickers index."""
        out: list[Any] = [config] if self.whole else []
        for parent, keys, paths in self.groups:
            holder: Any = get(config, parent) if parent else config
            if type(holder) is dict or isinstance(holder, dict):
                out.extend(map(holder.get, keys))
            else:  # a list, or a value of the wrong type: `get` says what is there
                out.extend(get(config, p) for p in paths)
        return out


def _picker(indices: tuple[int, ...]) -> Callable[[list[Any]], Sequence[Any]]:
    """The values a rule takes, in the order of its paths, out of `_Reading.read`'s list."""
    if len(indices) > 1:
        return itemgetter(*indices)  # a tuple, for more than one index
    if indices:
        only = indices[0]
        return lambda read: (read[only],)
    return lambda read: ()


def _plain(rule: Rule) -> bool:
    """Whether the rule is called with its values alone (it reads no world size, names or device)."""
    return type(rule) is Rule and not (rule.needs_world_size or rule.needs_registries or rule.needs_device)


_READINGS: dict[int, tuple[object, _Reading]] = {}
"""`_Reading`s by the identity of what they read for: a tuple of rules, or the one rule of a list of one
(a layout search asks for one rule at a time), kept with it so the identity stays its own."""


def _reading(rules: Sequence[Rule]) -> _Reading:
    key: object = rules[0] if len(rules) == 1 else rules
    if type(key) is list:
        return _Reading(rules)
    known = _READINGS.get(id(key))
    if known is None or known[0] is not key:
        if len(_READINGS) >= 1024:  # a long-lived process (the language server) that rebuilt its families
            _READINGS.clear()
        known = _READINGS[id(key)] = (key, _Reading(rules))
    return known[1]


_NOTHING: frozenset[Path] = frozenset()


def _touches_any(broken: list[Path]) -> Callable[[Path], bool]:
    """Whether a path is one of `broken`, inside one or above one (two set lookups per step, not a scan),
    each path decided once: the rules of a check share their paths."""
    exact = set(broken)
    above = {b[:n] for b in exact for n in range(len(b) + 1)}
    decided: dict[Path, bool] = {}

    def touches(path: Path) -> bool:
        found = decided.get(path)
        if found is None:
            found = decided[path] = path in above or any(path[:n] in exact for n in range(len(path)))
        return found

    return touches


def _rule_diagnostic(doc: Document, rule: Rule, values: dict[Path, Any], violation: Violation) -> Diagnostic:
    """A violation placed at its key, with the other keys it involves as related locations (each labelled
    with its value) and, for values that came from overrides, which override set them."""
    first = first_written(doc, rule.parsed_paths)
    at = violation.at if violation.at is not None else first
    named = rule.parsed_paths if violation.related is None else violation.related
    related = tuple(
        related_place(doc, p, values.get(p, ABSENT)) for p in named if p != at and (doc.is_written(p) or doc.origin(p))
    )
    here = doc.origin(at)
    involved = {at, *named}
    overridden = [
        f"{format_path(p)} = {show(values[p])} comes from {origin}"
        for p in rule.parsed_paths
        if p in involved and (origin := doc.origin(p)) and origin != here and values[p] is not ABSENT
    ]
    found = place(doc, at, rule.id, rule.severity, violation.message, related=related, fallback=first, entry=True)
    return found.adding(Clause("; ".join(overridden))) if overridden else found


def _written(source: Any, part: str | int) -> Any:
    if isinstance(source, dict):
        return source.get(part, ABSENT)
    if isinstance(source, list) and isinstance(part, int) and part < len(source):
        return source[part]
    return ABSENT


def _written_at(source: Any, path: Path) -> Any:
    """The value as the file writes it (ABSENT where it writes none): what a `raw` rule reads."""
    for part in path:
        source = _written(source, part)
        if source is ABSENT:
            break
    return source
