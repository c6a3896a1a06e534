"""The pipeline for one document: migrate -> override -> normalize -> schema ->
defaults -> rules. Every stage adds diagnostics; none stops the others, so one
run reports every problem it can see. A family's hooks are guarded (its rules
too, in `rule_engine`): one that raises becomes a diagnostic, never a stopped run.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from functools import lru_cache, partial
from typing import TYPE_CHECKING, Any, NamedTuple

from trainspec.rules.evaluate import disagreeing_sizes, no_target, run_rules, world_size_rules
from trainspec.rules.placement import place
from trainspec.spec.codes import HOOK_FAILED, NON_FINITE_NUMBER, NOT_A_MAPPING, OUT_OF_RANGE, WORLD_SIZE_DERIVED
from trainspec.spec.device import Device
from trainspec.spec.diagnostics import Diagnostic, Severity
from trainspec.spec.dialect import adopt_loader_readings, loader_conversions, loader_readings
from trainspec.spec.digits import in_digit_limit, too_many_digits
from trainspec.spec.document import Document
from trainspec.spec.family import Family
from trainspec.spec.paths import Path, format_path
from trainspec.spec.result import Outcome, Result
from trainspec.spec.rules import Context, Rule
from trainspec.spec.schema import replace_value
from trainspec.spec.wording import show
from trainspec.validate.fast import is_plain, where_invalid
from trainspec.validate.other_versions import Selection, note_other_versions

if TYPE_CHECKING:
    from trainspec.spec.overrides import Override
    from trainspec.spec.schema_walk import Where
    from trainspec.validate.explain import Finding


def check_document(
    doc: Document,
    family: Family,
    overrides: Sequence[Override] = (),
    world_sizes: Sequence[int] = (),
    *,
    migrate: bool = True,
    fallback_sizes: bool = False,
    selected_by: Selection = "flag",
    device: Device | None = None,
) -> Result:
    """Every diagnostic of one document; world-size rules run once per size, everything else once.

    A config that states its own world size (`Family.world_size_from_config`) is checked at that
    size; given sizes that differ are one error, unless they are `fallback_sizes` (the command
    line's, meant for configs that state none), which such a config does not take. `selected_by`
    says what chose `family`, for advice to choose another version. `device`: the target GPU, for the
    rules that read it and the family's device checks (without one, such rules are skipped with a note).
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
    if overrides:
        from trainspec.spec.overrides import apply_overrides

        out.extend(apply_overrides(doc, list(overrides), family.schema))
    if family.normalize is not None:
        out.extend(_guarded(doc, family, "normalize hook", partial(family.normalize, doc.data))[1])
    for path, rule_id, severity, message in list(adopt_loader_readings(doc, family)):
        out.append(place(doc, path, rule_id, severity, message, at_key=False))

    broken: list[Path] = [d.path for d in out if d.is_error and d.path]
    plain = is_plain(doc.data)  # then no number is unusable, and the compiled validator may answer
    for path, value in () if plain else _unusable_numbers(doc.data, ()):
        broken.append(path)
        if isinstance(value, float):
            rule = NON_FINITE_NUMBER.id
            message = f"`{format_path(path)}` = {show(value)}: numbers must be finite (no NaN or infinity)"
        else:
            rule, message = OUT_OF_RANGE.id, f"`{format_path(path)}`: {too_many_digits()}"
            replace_value(doc.data, path, None)  # reported here; the validator would choke on writing it out
        out.append(place(doc, path, rule, Severity.ERROR, message, at_key=False))
    already_reported = set(broken)
    if not family.trusted_schema:
        family.validator  # noqa: B018 (built whoever answers: it reports a broken family schema)
    fresh = "validator" not in vars(family)  # nothing built the python validator (a cached property) yet
    where = where_invalid(family.schema, doc.data, first=fresh, plain=plain)
    for finding in () if where == ([], []) else _explain(family, doc.data, where):
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
    note_other_versions(doc, family, out, selected_by)
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
    if derived is not None and world_sizes and not _states_world_size(doc, family, derived):
        derived = None  # the given sizes apply
    if derived is not None:
        others = () if fallback_sizes else tuple(s for s in sizes if s != derived[0])
        sizes = (derived[0],)
        if not world_sizes or fallback_sizes:
            unused = [str(s) for s in world_sizes if s != derived[0]]
            said = f"sizes {', '.join(unused)} given are" if len(unused) > 1 else f"size {''.join(unused)} given is"
            aside = f"; the world {said} for configs that state none" if unused else ""
            out.append(Diagnostic(doc.file, None, None, (), WORLD_SIZE_DERIVED.id, Severity.NOTE, derived[1] + aside))
    context = Context(sizes, device, family.registries)
    plan = _rule_plan(family, device is not None)
    out.extend(run_rules(doc, plan.anywhere, config, broken, context.at(None)))
    out.extend(no_target(doc, plan.skipped))
    world_rules = plan.per_world_size
    # sizes given for the file that all differ from its own: the launch runs at those, so its own is not checked
    at_own = not others or sizes[0] in world_sizes
    if at_own:
        out.extend(world_size_rules(doc, world_rules, config, broken, context))
    if others:
        out.extend(
            disagreeing_sizes(
                doc, world_rules, config, broken, replace(context, world_sizes=others), sizes[0] if at_own else None
            )
        )
    if device is not None and family.device_checks is not None:
        out.extend(_device_checks(doc, family, config, device))
    world_size = sizes[0] if len(sizes) == 1 else None
    ran = sizes if plan.per_world_size else ()
    return Result(doc.file, family, out, config, world_size, doc, device=device, world_sizes=ran)


def _explain(family: Family, data: Any, where: Where | None) -> list[Finding]:
    """The schema's findings at the places the compiled validator names (everywhere: None); imported only
    for a document that is not valid."""
    from trainspec.validate.explain import explain

    return explain(family.schema, lambda: family.validator, data, where)


class _RulePlan(NamedTuple):
    """A family's rules as a check runs them: the same for every file, so sorted once per family."""

    anywhere: tuple[Rule, ...]
    """Run once, at no world size."""
    per_world_size: tuple[Rule, ...]
    skipped: tuple[Rule, ...]
    """Rules that read the target device, when none is known."""


@lru_cache(maxsize=64)
def _rule_plan(family: Family, device_known: bool) -> _RulePlan:
    usable = [r for r in family.rules if device_known or not r.needs_device]
    return _RulePlan(
        tuple(r for r in usable if not r.needs_world_size),
        tuple(r for r in usable if r.needs_world_size),
        tuple(r for r in family.rules if r.needs_device and not device_known),
    )


def _device_checks(doc: Document, family: Family, config: dict[str, Any], device: Device) -> list[Diagnostic]:
    """What the family says its configs need of the target device (`Family.device_checks`, which
    `trainspec.distributed` runs on the job's own device), placed at the keys they name."""
    assert family.device_checks is not None
    found, failed = _guarded(doc, family, "device checks", partial(family.device_checks, config, device))
    return failed or [place(doc, d.path, d.rule, d.severity, d.message, entry=True) for d in found]


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


def _states_world_size(doc: Document, family: Family, derived: tuple[int, str]) -> bool:
    """Whether the config states the world size `derived` from it, rather than its defaults alone (SpecForge's
    trainer defaults, 1 × 1, are no statement): it differs from the defaults', or the written values give it."""
    return derived != _default_world_size(family) or _derived_world_size(family, doc.data) is not None


@lru_cache(maxsize=64)
def _default_world_size(family: Family) -> tuple[int, str] | None:
    """The world size a config of nothing but defaults states: the same for every file of a family."""
    return _derived_world_size(family, family.schema.fill_defaults({}))


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
