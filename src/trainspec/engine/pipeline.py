"""One file, start to end: read -> directives -> detect the family -> check the document -> the file alone.

Everything a file needs is done here once, whatever the number of world
sizes: it is read and parsed once, validated and defaulted once. Only when
overrides are given for a family whose loader checks the file before it
applies them is the file's own (pre-override) data checked a second time,
from a copy, to find what the overrides hide. An exception nobody expected
becomes an `internal-error` diagnostic on this file, so the other files of
a run are still checked.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path as FsPath
from typing import TYPE_CHECKING, Any

from trainspec.engine.checker import check_document
from trainspec.families import UnknownFamily, all_families, get_family
from trainspec.families.installed import for_installed, version_given
from trainspec.read.directives import directives_of
from trainspec.read.files import parse, read_text, within_limit
from trainspec.spec.codes import (
    INTERNAL_ERROR,
    INVALID_DIRECTIVE,
    INVALID_FAMILY_SCHEMA,
    LOADER_FORMAT,
    NON_FINITE_NUMBER,
    OVERRIDE_REFUSED_BY_LOADER,
    OVERRIDE_REPAIRS_FILE,
    SYNTAX_ERROR,
    UNKNOWN_FAMILY,
    WORLD_SIZE_FROM_PROJECT,
    WRONG_FORMAT,
    WRONG_TYPE,
)
from trainspec.spec.device import Device
from trainspec.spec.diagnostics import Clause, Diagnostic, Join, Severity
from trainspec.spec.dialect import loader_accepts
from trainspec.spec.document import Document, ReadError
from trainspec.spec.errors import InvalidValue
from trainspec.spec.family import Family
from trainspec.spec.paths import format_path
from trainspec.spec.result import Outcome, Result
from trainspec.spec.rules import Rule
from trainspec.spec.schema import SchemaError, get
from trainspec.spec.wording import show
from trainspec.spec.world_sizes import sizes_text
from trainspec.validate.other_versions import Selection

if TYPE_CHECKING:
    from trainspec.spec.overrides import Override


def as_overrides(items: str | Iterable[str | Override]) -> list[Override]:
    """Numbered overrides; a single "PATH=VALUE" string counts as one."""
    if isinstance(items, str):
        items = [items]
    items = list(items)
    if not items:
        return []
    from trainspec.spec.overrides import Override

    return [i if isinstance(i, Override) else Override(n, i) for n, i in enumerate(items, 1)]


def world_sizes_of(world_size: int | Sequence[int] | None) -> tuple[int, ...]:
    """A caller's world size(s) as a tuple; ValueError for anything but whole numbers of at least 1."""
    sizes = tuple(world_size) if isinstance(world_size, Sequence) else () if world_size is None else (world_size,)
    for size in sizes:
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise InvalidValue(f"world_size must be a whole number of at least 1, got {size!r}")
    return tuple(dict.fromkeys(sizes))


def check_path(
    path: str | FsPath,
    *,
    family: str | Family | None = None,
    overrides: Iterable[str | Override] = (),
    world_size: int | Sequence[int] | None = None,
    text: str | None = None,
    fallback_sizes: bool = False,
    family_from: Selection = "flag",
    device: Device | None = None,
    sizes_given: bool = False,
    parser: Callable[[str, str], Document] | None = None,
) -> Result:
    """Check one file (or `text` as if read from it); problems come back as diagnostics, never raised.

    Raises ValueError for a world size below 1 (a caller's mistake, not the config's).
    `fallback_sizes`: the world sizes are for files that state none (see `checker.check_document`);
    a file directive's sizes never are. `sizes_given`: the sizes are the command line's, which a file
    directive does not replace (a note says what it stated). `family_from`: what chose `family` (the flag
    or the project).
    `device`: the target GPU (`device.target`), unless the file's directive names another.
    `parser`: what parses the text in place of `read.files.parse` (the language server's, which re-reads
    only what an edit changed); it returns a Document of the check's own, which the check changes.
    """
    sizes = world_sizes_of(world_size)
    file = str(path)
    try:
        return _check(
            file, family, as_overrides(overrides), sizes, text, fallback_sizes, family_from, device, sizes_given, parser
        )
    except RecursionError:
        message = "the document nests deeper than trainspec can follow; no config is this deep"
        return Result.not_checked(Outcome.SYNTAX, Diagnostic(file, 1, 1, (), SYNTAX_ERROR.id, Severity.ERROR, message))
    except Exception as exc:
        return Result.not_checked(Outcome.CRASHED, internal_error(file, exc))


def given_over_directive(file: str, stated: tuple[int, ...]) -> Diagnostic:
    """The note that the command line's world sizes replace the ones a file directive states."""
    message = f"the file's directive states world size {sizes_text(stated)}, set aside for the --world-size given"
    return Diagnostic(file, None, None, (), WORLD_SIZE_FROM_PROJECT.id, Severity.NOTE, message)


def internal_error(file: str, exc: BaseException) -> Diagnostic:
    """An exception trainspec did not expect, as a diagnostic on the file it was checking (traceback is
    imported only here: a run without such an exception never needs it)."""
    import traceback

    where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    at = f" at {FsPath(where.filename).name}:{where.lineno}" if where else ""
    message = (
        f"trainspec failed while checking this file ({type(exc).__name__}: {exc}{at}); "
        "this is a bug in trainspec, please report it with the file"
    )
    return Diagnostic(file, None, None, (), INTERNAL_ERROR.id, Severity.ERROR, message)


def _check(
    file: str,
    family: str | Family | None,
    overrides: list[Override],
    sizes: tuple[int, ...],
    text: str | None,
    fallback_sizes: bool = False,
    family_from: Selection = "flag",
    device: Device | None = None,
    sizes_given: bool = False,
    parser: Callable[[str, str], Document] | None = None,
) -> Result:
    lines: dict[int, str] = {}
    try:
        text = read_text(file) if text is None else within_limit(file, text)
        doc = (parser or parse)(file, text)
    except ReadError as exc:
        if text is not None and exc.diagnostic.line is not None:
            lines = dict(
                enumerate(text.splitlines()[exc.diagnostic.line - 1 : exc.diagnostic.line], exc.diagnostic.line)
            )
        return Result.not_checked(exc.outcome, exc.diagnostic, lines=lines)
    directives, problems = directives_of(doc)
    doc.problems.extend(problems)
    if directives.family is not None:
        unusable = _directive_family_problem(file, doc, directives.family, directives.family_at)
        if unusable is not None:
            return Result.not_checked(Outcome.UNUSABLE_DIRECTIVE, unusable, doc.problems, doc)
        family, family_from = directives.family, "directive"
    if directives.world_sizes and sizes_given and sizes:
        if set(directives.world_sizes) != set(sizes):
            doc.problems.append(given_over_directive(file, directives.world_sizes))
    elif directives.world_sizes:
        sizes, fallback_sizes = directives.world_sizes, False
    device = directives.device or device
    if isinstance(family, str):
        try:
            fam = get_family(family)
        except UnknownFamily as exc:
            unknown = Diagnostic(file, None, None, (), UNKNOWN_FAMILY.id, Severity.ERROR, str(exc))
            return Result.not_checked(Outcome.UNKNOWN_FAMILY, unknown)
        unversioned = not version_given(family)
    elif family is None:
        from trainspec.read.detect import detect, schema_reference

        found, why = detect(doc, all_families())
        if found is None:
            unknown = Diagnostic(file, 1, 1, (), UNKNOWN_FAMILY.id, Severity.ERROR, why)
            return Result.not_checked(Outcome.UNCLAIMED, unknown, doc.problems, doc)
        fam, family_from = found, "detected"
        unversioned = not version_given(schema_reference(doc) or "")
    else:
        fam, unversioned = family, False
    if unversioned:
        fam, installed = for_installed(fam, file)
        doc.problems.extend([installed] if installed is not None else [])
    if doc.format not in fam.formats:
        formats = " or ".join(sorted(f.upper() for f in fam.formats))
        message = f"{fam.name} reads {formats} files, not {doc.format.upper()}; its loader refuses this file"
        wrong = Diagnostic(file, 1, 1, (), WRONG_FORMAT.id, Severity.ERROR, message)
        return Result.not_checked(Outcome.WRONG_FORMAT, wrong, doc.problems, doc)
    read_as = fam.loader_format(file) if fam.loader_format is not None else doc.format
    if read_as != doc.format:
        try:
            parse(file + "." + read_as, text)
        except ReadError:
            message = (
                f"{fam.name}'s loader reads this file by its exact extension as {read_as.upper()}, which it is not, "
                f"and refuses it (trainspec read it as {doc.format.upper()}); give it a lower-case extension"
            )
            doc.problems.append(Diagnostic(file, 1, 1, (), LOADER_FORMAT.id, Severity.ERROR, message))
    try:
        alone = (  # at the loader, before the launch: the device is not yet in question
            check_document(doc.snapshot(), fam, (), sizes) if overrides and fam.checks_file_before_overrides else None
        )
        return check_overridden(doc, fam, overrides, sizes, fallback_sizes, alone, family_from, device)
    except _schema_errors() as exc:
        message = f"the schema of family {fam.name!r} ({fam.schema_file}) is unusable: {_first_line(exc)}"
        unusable = Diagnostic(file, None, None, (), INVALID_FAMILY_SCHEMA.id, Severity.ERROR, message)
        return Result.not_checked(Outcome.UNUSABLE_SCHEMA, unusable, family=fam)


def check_overridden(
    doc: Document,
    family: Family,
    overrides: Sequence[Override],
    sizes: tuple[int, ...],
    fallback_sizes: bool,
    alone: Result | None,
    selected_by: Selection = "flag",
    device: Device | None = None,
) -> Result:
    """The check of `doc` with `overrides` applied; given the check of the file `alone` (for a family whose
    loader checks the file before it applies overrides), also what that loader refuses which the overrides
    hide or trainspec's reading of them accepts. A sweep runs this once per variant."""
    as_read = (
        copy.deepcopy(doc.data)
        if overrides and alone is None and family.loader_overrides is not None and isinstance(doc.data, dict)
        else None
    )
    result = check_document(
        doc, family, overrides, sizes, fallback_sizes=fallback_sizes, selected_by=selected_by, device=device
    )
    if alone is not None:
        result.diagnostics.extend(_repaired_by_overrides(alone, family, result))
        if family.loader_overrides is not None and alone.config is not None and _loads(alone, family):
            result.diagnostics.extend(_as_the_loader_overrides(alone.config, family, overrides, sizes, result, device))
    elif as_read is not None:  # a loader that applies its overrides to the file as read, then validates
        result.diagnostics.extend(
            _as_the_loader_overrides(as_read, family, overrides, sizes, result, device, migrate=True)
        )
    return result


def _directive_family_problem(file: str, doc: Document, name: str, at: tuple[int, int]) -> Diagnostic | None:
    """Why the family a file's directive names cannot check it (unknown, or another format), at the directive."""
    try:
        named = get_family(name)
    except UnknownFamily as exc:
        why = str(exc)
    else:
        if doc.format in named.formats:
            return None
        formats = " or ".join(sorted(f.upper() for f in named.formats))
        why = f"{named.name} reads {formats} files, not {doc.format.upper()}"
    message = f"file directive: family={name}: {why}"
    return Diagnostic(file, at[0], at[1], (), INVALID_DIRECTIVE.id, Severity.ERROR, message)


def _schema_errors() -> tuple[type[Exception], ...]:
    """A family schema that is unusable: ours, or jsonschema's when it was imported (only then can it
    have raised one; a check the compiled validator confirmed never imports it)."""
    loaded = sys.modules.get("jsonschema.exceptions")
    return (SchemaError, loaded.SchemaError) if loaded is not None else (SchemaError,)


def _loads(alone: Result, family: Family) -> bool:
    """Whether the family's loader gets past the file alone, so that it goes on to apply the overrides: the
    file fails none of the checks made when it is loaded (its launch-time rules run on the final config)."""
    launch = {r.id for r in family.rules if r.at_launch}
    return not any(d.is_error and d.rule not in launch for d in alone.diagnostics)


def _repaired_by_overrides(alone: Result, family: Family, merged: Result) -> list[Diagnostic]:
    """Errors of the file alone that the overrides hide: the family's own loader refuses the launch on them."""
    still = {(d.rule, d.path) for d in merged.diagnostics if d.is_error}
    launch = {r.id for r in family.rules if r.at_launch}  # applied to the final config anyway
    launch_refused = Clause(
        f"{family.name} validates the file before it applies command-line overrides, so it refuses the launch: "
        "fix the file itself",
        Join.AFTER,
    )
    out = []
    for d in alone.diagnostics:
        if not d.is_error or d.rule in launch or (d.rule, d.path) in still:
            continue
        if _stricter_than_the_loader(alone, family, d):
            out.append(d)  # the loader takes the file's value, then the override's: only trainspec's verdict stands
            continue
        out.append(
            replace(d, rule=OVERRIDE_REPAIRS_FILE.id).adding(
                Clause(f"without the overrides this file fails {d.rule}", Join.BEFORE), launch_refused
            )
        )
    return out


def _stricter_than_the_loader(alone: Result, family: Family, d: Diagnostic) -> bool:
    """A type error in the file at a value the family's loader reads and accepts (YAML 1.1's `yes` for a
    boolean, text for a number it converts): the loader does not refuse the file on it."""
    if d.rule not in (WRONG_TYPE.id, NON_FINITE_NUMBER.id) or not d.path or alone.document is None:
        return False
    return loader_accepts(alone.document, family, d.path)


def _as_the_loader_overrides(
    loaded: dict[str, Any],
    family: Family,
    overrides: Sequence[Override],
    sizes: tuple[int, ...],
    merged: Result,
    device: Device | None,
    *,
    migrate: bool = False,
) -> list[Diagnostic]:
    """What the family's own override handling (applied to the loaded config, or with `migrate` to the file
    as read, as the loader does) refuses that trainspec's overrides accepted: `override-refused-by-loader`
    errors."""
    assert family.loader_overrides is not None
    refused_here = {d.origin for d in merged.diagnostics if d.is_error and d.origin}
    if any(o.origin in refused_here for o in overrides):
        return []  # trainspec refuses an override already; the loader's reading of the rest adds nothing sure
    final, refusals = family.loader_overrides(family, copy.deepcopy(loaded), overrides)
    origin = "the overrides as " + family.name + " applies them"
    out = [
        Diagnostic(merged.file, None, None, (), OVERRIDE_REFUSED_BY_LOADER.id, Severity.ERROR, why, origin=o.origin)
        for o, why in refusals
    ]
    if final is None:
        return out
    still = {(d.rule, d.path) for d in merged.diagnostics if d.is_error}
    doc = Document(merged.file, "data", "", final, dict)
    doc.mark_origin((), origin)
    refused = Clause(
        f"{family.name} applies the overrides to the config it loaded, and refuses the result",
        Join.BEFORE,
    )
    rules = {r.id: r for r in family.rules}
    for d in check_document(doc, family, (), sizes, migrate=migrate, device=device).diagnostics:
        if d.is_error and (d.rule, d.path) not in still:
            kept = _read_otherwise(d, rules.get(d.rule), final, merged.config, family.name)
            out.append(replace(d, rule=OVERRIDE_REFUSED_BY_LOADER.id).adding(refused, *kept))
    return out


def _read_otherwise(
    d: Diagnostic, rule: Rule | None, loader: dict[str, Any], ours: dict[str, Any] | None, name: str
) -> list[Clause]:
    """A clause naming the values the rule reads that the loader's config holds other than trainspec's
    reading of the overrides (KempnerForge keeps the file's `vlm.arch`): why it refuses what trainspec took."""
    if rule is None or ours is None:
        return []
    differ = []
    for path in rule.parsed_paths:
        theirs, mine = get(loader, path), get(ours, path)
        if theirs is not None and mine is not None and theirs != mine and not isinstance(theirs, dict):
            differ.append(f"{format_path(path)} = {show(theirs)}, not {show(mine)}")
    return [Clause(f"{name} keeps {', '.join(differ)}")] if differ else []


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
