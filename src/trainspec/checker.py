"""The pipeline for one document: migrate -> override -> normalize -> schema ->
defaults -> rules. Every stage adds diagnostics; none stops the others, so one
run reports every problem it can see. A family's hooks and rules are guarded:
one that raises becomes a diagnostic, never a stopped run.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

from .codes import (
    HOOK_FAILED,
    NON_FINITE_NUMBER,
    NOT_A_MAPPING,
    OUT_OF_RANGE,
    WORLD_SIZE_CHECKED,
    WORLD_SIZE_DERIVED,
    WORLD_SIZE_UNKNOWN,
)
from .diagnostics import Diagnostic, Related, Severity, Suggestion
from .dialect import loader_conversions, loader_readings
from .digits import in_digit_limit, too_many_digits
from .document import Document
from .families import Family
from .fast_validation import is_plain, where_invalid
from .other_versions import note_other_versions
from .overrides import Override, apply_overrides
from .paths import Path, format_path
from .result import Outcome, Result
from .rules import ABSENT, Rule, Violation
from .schema import get
from .validation import findings, show


def check_document(
    doc: Document,
    family: Family,
    overrides: Sequence[Override] = (),
    world_sizes: Sequence[int] = (),
    *,
    migrate: bool = True,
    fallback_sizes: bool = False,
) -> Result:
    """Every diagnostic of one document; world-size rules run once per size, everything else once.

    A config that states its own world size (`Family.world_size_from_config`) is checked at that
    size; given sizes that differ are one error, unless they are `fallback_sizes` (the command
    line's, meant for configs that state none), which such a config does not take.
    """
    out: list[Diagnostic] = list(doc.problems)
    if not isinstance(doc.data, dict):
        got = "an empty document" if doc.data is None else f"a {type(doc.data).__name__}"
        message = f"a config must be a table/mapping of sections at the top level, got {got}"
        stopped = Diagnostic(doc.file, 1, 1, (), NOT_A_MAPPING.id, Severity.ERROR, message)
        return Result.not_checked(Outcome.NOT_A_MAPPING, stopped, out, doc, family=family)
    for migration in family.migrations if migrate else ():
        found, failed = _guarded(doc, family, "migration", partial(migration, doc))
        out.extend(found or failed)
    out.extend(apply_overrides(doc, list(overrides), family.schema))
    if family.normalize is not None:
        out.extend(_guarded(doc, family, "normalize hook", partial(family.normalize, doc.data))[1])

    broken: list[Path] = [d.path for d in out if d.is_error and d.path]
    plain = is_plain(doc.data)  # then no number is unusable, and the compiled validator may answer
    for path, value in () if plain else _unusable_numbers(doc.data, ()):
        broken.append(path)
        if isinstance(value, float):
            rule = NON_FINITE_NUMBER.id
            message = f"`{format_path(path)}` = {show(value)}: numbers must be finite (no NaN or infinity)"
        else:
            rule, message = OUT_OF_RANGE.id, f"`{format_path(path)}`: {too_many_digits()}"
            _set(doc.data, path, None)  # reported here; the validator would choke on writing it out
        out.append(place(doc, path, rule, Severity.ERROR, message, at_key=False))
    already_reported = set(broken)
    if not family.trusted_schema:
        family.validator  # noqa: B018 (built whoever answers: it reports a broken family schema)
    fresh = "validator" not in vars(family)  # nothing built the python validator (a cached property) yet
    where = where_invalid(family.schema, doc.data, first=fresh, plain=plain)
    for finding in () if where == ([], []) else findings(family.schema, family.validator, doc.data, where):
        if finding.path in already_reported:
            continue  # a non-finite value (or a migration conflict) there: a type or bound error would say it twice
        if finding.severity is Severity.ERROR:
            broken.append(finding.path)
        out.append(
            place(
                doc,
                finding.path,
                finding.rule,
                finding.severity,
                finding.message,
                at_key=finding.at_key,
                anchor=finding.anchor,
                suggestion=finding.suggestion,
            )
        )
    loader_conversions(doc, family, out)
    note_other_versions(doc, family, out)
    for path, rule_id, severity, message in list(loader_readings(doc, family, out)):
        if severity is Severity.ERROR:
            broken.append(path)
        out.append(place(doc, path, rule_id, severity, message, at_key=False))

    config = family.schema.fill_defaults(doc.data)
    if family.resolve is not None:
        out.extend(_guarded(doc, family, "resolve hook", partial(family.resolve, config))[1])
    sizes = tuple(world_sizes)
    others: tuple[int, ...] = ()
    derived = _derived_world_size(family, config) if family.world_size_from_config is not None else None
    if derived is not None:
        others = () if fallback_sizes else tuple(s for s in sizes if s != derived[0])
        sizes = (derived[0],)
        if not world_sizes or fallback_sizes:
            unused = [str(s) for s in world_sizes if s != derived[0]]
            said = f"sizes {', '.join(unused)} given are" if len(unused) > 1 else f"size {''.join(unused)} given is"
            aside = f"; the world {said} for configs that state none" if unused else ""
            out.append(Diagnostic(doc.file, None, None, (), WORLD_SIZE_DERIVED.id, Severity.NOTE, derived[1] + aside))
    registries = family.registries
    out.extend(run_rules(doc, [r for r in family.rules if not r.needs_world_size], config, broken, None, registries))
    world_rules = [r for r in family.rules if r.needs_world_size]
    out.extend(_world_size_rules(doc, world_rules, config, broken, sizes, registries))
    if others:
        out.extend(_disagreeing_sizes(doc, world_rules, config, broken, others, registries, sizes[0]))
    return Result(doc.file, family, out, config, sizes[0] if len(sizes) == 1 else None, doc)


def _guarded(doc: Document, family: Family, what: str, call: Callable[[], Any]) -> tuple[Any, list[Diagnostic]]:
    """(what a family hook returned, []), or (None, [hook-failed]) when it raised: the check goes on."""
    try:
        return call(), []
    except Exception as exc:
        message = (
            f"the {what} of family {family.name} failed on this config ({type(exc).__name__}: {exc}); "
            "this is a bug in the family, please report it"
        )
        return None, [Diagnostic(doc.file, None, None, (), HOOK_FAILED.id, Severity.ERROR, message)]


def _derived_world_size(family: Family, config: dict[str, Any]) -> tuple[int, str] | None:
    """The world size the config states for itself; None when the values it needs are unusable."""
    assert family.world_size_from_config is not None
    try:
        return family.world_size_from_config(config)
    except Exception:  # a section of the wrong type: the schema said so; anything else: no size to derive
        return None


def _world_size_rules(
    doc: Document,
    rules: Sequence[Rule],
    config: dict[str, Any],
    broken: list[Path],
    sizes: Sequence[int],
    registries: Mapping[str, tuple[str, ...]],
) -> Iterator[Diagnostic]:
    """World-size rules at each size: plain at one size; at several, each diagnostic says its size and a
    size where all pass gets a note. Without a size they are skipped, with a note."""
    if not rules:
        return
    if not sizes:
        skipped = ", ".join(r.id for r in rules)
        message = f"world-size rules not checked ({skipped}): no world size known; pass --world-size N"
        yield Diagnostic(doc.file, None, None, (), WORLD_SIZE_UNKNOWN.id, Severity.NOTE, message)
        return
    if len(sizes) == 1:
        yield from run_rules(doc, rules, config, broken, sizes[0], registries)
        return
    for size in sizes:
        found = [
            replace(d, world_size=size, message=f"at world size {size}: {d.message}")
            for d in run_rules(doc, rules, config, broken, size, registries)
        ]
        yield from found or [
            Diagnostic(
                doc.file,
                None,
                None,
                (),
                WORLD_SIZE_CHECKED.id,
                Severity.NOTE,
                f"at world size {size}: every world-size rule passes",
                world_size=size,
            )
        ]


def _disagreeing_sizes(
    doc: Document,
    rules: Sequence[Rule],
    config: dict[str, Any],
    broken: list[Path],
    sizes: Sequence[int],
    registries: Mapping[str, tuple[str, ...]],
    own: int,
) -> list[Diagnostic]:
    """Given sizes other than the one the config states for itself: each rule they break, once.

    The config's own size is the one its launcher starts, so the rules ran there; a size given
    for the file that differs is one mistake however many such sizes there are.
    """
    passing = {(d.rule, d.path) for d in run_rules(doc, rules, config, broken, own, registries)}
    first: dict[tuple[str, Path], Diagnostic] = {}
    also: dict[tuple[str, Path], list[int]] = {}
    for size in sizes:
        for d in run_rules(doc, rules, config, broken, size, registries):
            key = (d.rule, d.path)
            if key in passing:
                continue
            if key in first:
                also[key].append(size)
            else:
                first[key], also[key] = replace(d, world_size=size), []
    out = []
    for key, d in first.items():
        more = f" (the same at world size {', '.join(map(str, also[key]))})" if also[key] else ""
        out.append(replace(d, message=d.message + more))
    return out


def run_rules(
    doc: Document,
    rules: Iterable[Rule],
    config: dict[str, Any],
    broken: list[Path],
    world_size: int | None = None,
    registries: Mapping[str, tuple[str, ...]] | None = None,
) -> Iterator[Diagnostic]:
    """Each rule on the values at its paths; `registries` are the extra names a project overlay registers."""
    seen: dict[Path, Any] = {}  # rules share paths: look each up once
    touches = _touches_any(broken) if broken else None
    sections = {b[0] if b else None for b in broken}
    for rule in rules:
        stopped: set[Path] | frozenset[Path] = frozenset()
        if touches is not None and (
            None in sections or None in rule.sections or not sections.isdisjoint(rule.sections)
        ):
            stopped = {p for p in rule.parsed_paths if touches(p)}
            if stopped - rule.optional:
                continue
        if rule.raw:
            values = [_value(doc.data, p, raw=True) for p in rule.parsed_paths]
        else:
            values = [seen[p] if p in seen else seen.setdefault(p, get(config, p)) for p in rule.parsed_paths]
        if stopped:
            values = [ABSENT if p in stopped else v for p, v in zip(rule.parsed_paths, values, strict=True)]
        try:
            violations = rule.run(values, world_size, registries)
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
            by_path = dict(zip(rule.parsed_paths, values, strict=True))
            for violation in violations:
                yield _rule_diagnostic(doc, rule, by_path, violation)


def _touches_any(broken: list[Path]) -> Callable[[Path], bool]:
    """Whether a path is one of `broken`, inside one or above one (two set lookups per step, not a scan)."""
    exact = set(broken)
    above = {b[:n] for b in exact for n in range(len(b) + 1)}
    return lambda path: path in above or any(path[:n] in exact for n in range(len(path)))


def _rule_diagnostic(doc: Document, rule: Rule, values: dict[Path, Any], violation: Violation) -> Diagnostic:
    """A violation placed at its key, with the other keys it involves as related locations (each labelled
    with its value) and, for values that came from overrides, which override set them."""
    first = _first_written(doc, rule.parsed_paths)
    at = violation.at if violation.at is not None else first
    named = rule.parsed_paths if violation.related is None else violation.related
    related = tuple(
        _related(doc, p, values.get(p, ABSENT)) for p in named if p != at and (doc.is_written(p) or doc.origin(p))
    )
    here = doc.origin(at)
    involved = {at, *named}
    overridden = [
        f"{format_path(p)} = {show(values[p])} comes from {origin}"
        for p in rule.parsed_paths
        if p in involved and (origin := doc.origin(p)) and origin != here and values[p] is not ABSENT
    ]
    message = violation.message + (f" ({'; '.join(overridden)})" if overridden else "")
    return place(doc, at, rule.id, rule.severity, message, related=related, fallback=first, entry=True)


def _related(doc: Document, path: Path, value: Any) -> Related:
    """`path` as a related location, labelled `key = value`, or with the override that set it."""
    origin = doc.origin(path)
    found = None if origin else doc.range_of(path, "entry")
    key = path[-1] if path else ""
    label = f"{key} = {show(value)}" if not isinstance(value, (dict, list)) and value is not ABSENT else str(key)
    if origin:
        label += f", from {origin}"
    start, end = (found.start, found.end) if found else (None, None)
    return Related(
        path,
        start.line if start else None,
        start.column if start else None,
        end.line if end else None,
        end.column if end else None,
        label,
    )


def _first_written(doc: Document, paths: tuple[Path, ...]) -> Path:
    """The first of a rule's paths the user wrote (or overrode); else its first path."""
    for path in paths:
        if doc.is_written(path) or doc.origin_within(path):
            return path
    return paths[0]


def _written(source: Any, part: str | int) -> Any:
    if isinstance(source, dict):
        return source.get(part, ABSENT)
    if isinstance(source, list) and isinstance(part, int) and part < len(source):
        return source[part]
    return ABSENT


def _value(source: Any, path: Path, raw: bool) -> Any:
    if raw:
        for part in path:
            source = _written(source, part)
            if source is ABSENT:
                break
        return source
    return get(source, path)


def place(
    doc: Document,
    path: Path,
    rule: str,
    severity: Severity,
    message: str,
    *,
    at_key: bool = True,
    related: tuple[Related, ...] = (),
    anchor: Path | None = None,
    fallback: Path | None = None,
    entry: bool = False,
    suggestion: Suggestion | None = None,
) -> Diagnostic:
    """A diagnostic about `path`, placed where the user can see the cause.

    In order: the override `path` came from; `path` itself; `anchor` (for a
    missing key, the key whose value requires it); the nearest written
    ancestor of `path`; `fallback` (another key the rule read); line 1.
    The range covers the key (`at_key`), the value, or with `entry` both.
    """
    part = "entry" if entry else "key" if at_key else "value"
    origin = doc.origin(path)
    pos = None
    if origin is None and not doc.is_written(path):
        for other in (anchor, None, fallback):
            if other is None:  # the nearest written ancestor
                pos = doc.range_of(path, part)
            elif doc.is_written(other) or doc.origin_within(other):
                origin = doc.origin_within(other)
                pos = None if origin else doc.range_of(other, part)
            if origin or pos:
                break
    elif origin is None:
        pos = doc.range_of(path, part)
    line, column = (pos.start.line, pos.start.column) if pos else (None, None) if origin else (1, 1)
    end = pos.end if pos else None
    return Diagnostic(
        doc.file,
        line,
        column,
        path,
        rule,
        severity,
        message,
        origin=origin,
        related=related,
        end_line=end.line if end else None,
        end_column=end.column if end else None,
        suggestion=suggestion,
    )


def _set(data: Any, path: Path, value: Any) -> None:
    for part in path[:-1]:
        data = data[part]
    data[path[-1]] = value


def _unusable_numbers(value: Any, path: Path) -> Iterator[tuple[Path, int | float]]:
    """NaN, infinities, and integers too long to write in decimal (data that came from no reader)."""
    if isinstance(value, float):
        if not math.isfinite(value):
            yield path, value
    elif isinstance(value, int) and not isinstance(value, bool):
        try:
            in_digit_limit(value)
        except ValueError:
            yield path, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _unusable_numbers(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _unusable_numbers(v, (*path, i))
