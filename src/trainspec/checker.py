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

from .diagnostics import Diagnostic, Related, Severity
from .dialect import loader_conversions, loader_readings
from .digits import in_digit_limit, too_many_digits
from .document import Document
from .families import Family
from .other_versions import note_other_versions
from .overrides import Override, apply_overrides
from .paths import Path, format_path, is_prefix, parse_path
from .result import Result
from .rules import ABSENT, Rule
from .schema import get
from .validation import findings, show


def check_document(
    doc: Document,
    family: Family,
    overrides: Sequence[Override] = (),
    world_sizes: Sequence[int] = (),
    *,
    migrate: bool = True,
) -> Result:
    """Every diagnostic of one document; world-size rules run once per size, everything else once."""
    out: list[Diagnostic] = list(doc.problems)
    if not isinstance(doc.data, dict):
        got = "an empty document" if doc.data is None else f"a {type(doc.data).__name__}"
        out.append(
            Diagnostic(
                doc.file,
                1,
                1,
                "",
                "not-a-mapping",
                Severity.ERROR,
                f"a config must be a table/mapping of sections at the top level, got {got}",
            )
        )
        return Result(doc.file, family, out, document=doc)
    for migration in family.migrations if migrate else ():
        found, failed = _guarded(doc, family, "migration", partial(migration, doc))
        out.extend(found or failed)
    out.extend(apply_overrides(doc, list(overrides), family.schema))
    if family.normalize is not None:
        out.extend(_guarded(doc, family, "normalize hook", partial(family.normalize, doc.data))[1])

    broken: list[Path] = [_path_of(d) for d in out if d.is_error and d.config_path]
    for path, value in _unusable_numbers(doc.data, ()):
        broken.append(path)
        if isinstance(value, float):
            rule = "non-finite-number"
            message = f"`{format_path(path)}` = {show(value)}: numbers must be finite (no NaN or infinity)"
        else:
            rule, message = "out-of-range", f"`{format_path(path)}`: {too_many_digits()}"
            _set(doc.data, path, None)  # reported here; the validator would choke on writing it out
        out.append(place(doc, path, rule, Severity.ERROR, message, at_key=False))
    already_reported = set(broken)
    for finding in findings(family.schema, family.validator, doc.data):
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
    if not sizes and family.world_size_from_config is not None:
        derived = _derived_world_size(family, config)
        if derived is not None:
            sizes = (derived[0],)
            out.append(Diagnostic(doc.file, None, None, "", "world-size-derived", Severity.NOTE, derived[1]))
    registries = family.registries
    out.extend(run_rules(doc, [r for r in family.rules if not r.needs_world_size], config, broken, None, registries))
    world_rules = [r for r in family.rules if r.needs_world_size]
    out.extend(_world_size_rules(doc, world_rules, config, broken, sizes, registries))
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
        return None, [Diagnostic(doc.file, None, None, "", "hook-failed", Severity.ERROR, message)]


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
        yield Diagnostic(doc.file, None, None, "", "world-size-unknown", Severity.NOTE, message)
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
                "",
                "world-size-checked",
                Severity.NOTE,
                f"at world size {size}: every world-size rule passes",
                world_size=size,
            )
        ]


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
    for rule in rules:
        if any(is_prefix(b, p) or is_prefix(p, b) for p in rule.parsed_paths for b in broken):
            continue
        if rule.raw:
            values = [_value(doc.data, p, raw=True) for p in rule.parsed_paths]
        else:
            values = [seen[p] if p in seen else seen.setdefault(p, get(config, p)) for p in rule.parsed_paths]
        try:
            violations = list(rule.run(values, world_size, registries))
        except Exception as exc:  # a rule must not take the whole report down
            yield Diagnostic(
                doc.file,
                None,
                None,
                "",
                rule.id,
                Severity.ERROR,
                f"rule {rule.id} failed on this config ({type(exc).__name__}: {exc}); please report it",
            )
            continue
        for violation in violations:
            first = _first_written(doc, rule.parsed_paths)
            at = parse_path(violation.at) if violation.at else first
            related = tuple(
                Related(format_path(p), pos.line if pos else None, pos.column if pos else None)
                for p in rule.parsed_paths
                if p != at and (doc.is_written(p) or doc.origin_within(p))
                for pos in [None if doc.origin_within(p) else doc.where(p)]
            )
            yield place(doc, at, rule.id, rule.severity, violation.message, related=related, fallback=first)


def _first_written(doc: Document, paths: tuple[Path, ...]) -> Path:
    """The first of a rule's paths the user wrote (or overrode); else its first path."""
    for path in paths:
        if doc.is_written(path) or doc.origin_within(path):
            return path
    return paths[0]


def _path_of(diagnostic: Diagnostic) -> Path:
    try:
        return parse_path(diagnostic.config_path)
    except ValueError:
        return ()


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
) -> Diagnostic:
    """A diagnostic about `path`, placed where the user can see the cause.

    In order: the override `path` came from; `path` itself; `anchor` (for a
    missing key, the key whose value requires it); the nearest written
    ancestor of `path`; `fallback` (another key the rule read); line 1.
    """
    origin = doc.origin(path)
    pos = None
    if origin is None and not doc.is_written(path):
        for other in (anchor, None, fallback):
            if other is None:  # the nearest written ancestor
                pos = doc.where(path, key=at_key)
            elif doc.is_written(other) or doc.origin_within(other):
                origin = doc.origin_within(other)
                pos = None if origin else doc.where(other, key=at_key)
            if origin or pos:
                break
    elif origin is None:
        pos = doc.where(path, key=at_key)
    line, column = (pos.line, pos.column) if pos else (None, None) if origin else (1, 1)
    return Diagnostic(
        doc.file,
        line,
        column,
        format_path(path) if path else "",
        rule,
        severity,
        message,
        origin=origin,
        related=related,
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
