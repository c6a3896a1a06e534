"""The public entry points: check a file, or load it as a typed model."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path as FsPath
from typing import Any

import jsonschema.exceptions

from .checker import Result, check_document
from .detect import detect
from .diagnostics import Diagnostic, Severity
from .document import Document
from .families import Family, UnknownFamily, all_families, get_family
from .overrides import Override
from .readers import ReadError, read
from .schema import SchemaError


class ConfigError(Exception):
    """A config has errors; `diagnostics` holds all of them (and any warnings)."""

    def __init__(self, diagnostics: Sequence[Diagnostic]) -> None:
        self.diagnostics = list(diagnostics)
        errors = [d for d in self.diagnostics if d.is_error]
        lines = [_line(d) for d in errors[:20]]
        more = f"\n... and {len(errors) - 20} more" if len(errors) > 20 else ""
        super().__init__(f"{len(errors)} error(s) in config:\n" + "\n".join(lines) + more)


def _line(d: Diagnostic) -> str:
    where = f"{d.file}:{d.line}:{d.column}" if d.line is not None else f"{d.file}: {d.origin or ''}".rstrip()
    return f"{where}: {d.severity.value}[{d.rule}] {d.message}"


def as_overrides(items: str | Iterable[str | Override]) -> list[Override]:
    """Numbered overrides; a single "PATH=VALUE" string counts as one."""
    if isinstance(items, str):
        items = [items]
    return [i if isinstance(i, Override) else Override(n, i) for n, i in enumerate(items, 1)]


def _check_world_size(world_size: int | None) -> None:
    if world_size is not None and (isinstance(world_size, bool) or not isinstance(world_size, int) or world_size < 1):
        raise ValueError(f"world_size must be a whole number of at least 1, got {world_size!r}")


def check_path(
    path: str | FsPath,
    *,
    family: str | Family | None = None,
    overrides: Iterable[str | Override] = (),
    world_size: int | None = None,
) -> Result:
    """Check one file; problems come back as diagnostics, never as exceptions.

    Raises ValueError for a world size below 1 (a caller's mistake, not the config's).
    """
    _check_world_size(world_size)
    file = str(path)
    try:
        return _check_path(file, family, overrides, world_size)
    except RecursionError:
        message = "the document nests deeper than trainspec can follow; no config is this deep"
        return Result(file, None, [Diagnostic(file, 1, 1, "", "syntax-error", Severity.ERROR, message)])


def _check_path(
    file: str,
    family: str | Family | None,
    overrides: Iterable[str | Override],
    world_size: int | None,
) -> Result:
    try:
        doc = read(file)
    except ReadError as exc:
        return Result(file, None, [exc.diagnostic])
    if isinstance(family, str):
        try:
            fam = get_family(family)
        except UnknownFamily as exc:
            return Result(file, None, [Diagnostic(file, None, None, "", "unknown-family", Severity.ERROR, str(exc))])
    elif family is None:
        found, why = detect(doc, all_families())
        if found is None:
            return Result(
                file, None, [*doc.problems, Diagnostic(file, 1, 1, "", "unknown-family", Severity.ERROR, why)]
            )
        fam = found
    else:
        fam = family
    try:
        numbered = as_overrides(overrides)
        result = check_document(doc, fam, numbered, world_size)
        if numbered and fam.checks_file_before_overrides:
            result.diagnostics.extend(_repaired_by_overrides(file, fam, world_size, result))
        return result
    except (SchemaError, jsonschema.exceptions.SchemaError) as exc:
        message = f"the schema of family {fam.name!r} ({fam.schema_file}) is unusable: {_first_line(exc)}"
        return Result(file, fam, [Diagnostic(file, None, None, "", "invalid-family-schema", Severity.ERROR, message)])


def _repaired_by_overrides(file: str, family: Family, world_size: int | None, merged: Result) -> list[Diagnostic]:
    """Errors of the file alone that the overrides hide: the family's own loader would stop on them."""
    still = {(d.rule, d.config_path) for d in merged.diagnostics if d.is_error}
    launch = {r.id for r in family.rules if r.at_launch}  # applied to the final config anyway
    alone = check_document(read(file), family, (), world_size)
    return [
        replace(
            d,
            rule="override-repairs-file",
            severity=Severity.WARNING,
            message=f"without the overrides this file fails {d.rule}: {d.message}; {family.name} checks the "
            "file before it applies overrides, so it would refuse to start",
        )
        for d in alone.diagnostics
        if d.is_error and d.rule not in launch and (d.rule, d.config_path) not in still
    ]


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def check(
    path: str | FsPath,
    *,
    family: str | Family | None = None,
    overrides: Iterable[str] = (),
    world_size: int | None = None,
) -> list[Diagnostic]:
    """Every diagnostic for one config file, sorted by position."""
    return sorted(
        check_path(path, family=family, overrides=overrides, world_size=world_size).diagnostics, key=Diagnostic.sort_key
    )


def check_config(
    config: Mapping[str, Any],
    family: str | Family,
    *,
    world_size: int | None = None,
    source: str = "<config>",
) -> list[Diagnostic]:
    """Every diagnostic for a config already in memory (e.g. a loaded model's dump), sorted.

    It runs the same pipeline as a file, except legacy migrations (they apply
    only where files are read), so a config resolved on one machine
    can be re-checked where the world size is known (at launch). The data has
    no positions: diagnostics name `source` as their file and carry no line.
    """
    _check_world_size(world_size)
    fam = get_family(family) if isinstance(family, str) else family
    doc = Document(source, "data", "", copy.deepcopy(dict(config)), dict)
    doc.mark_origin((), "the resolved config")
    result = check_document(doc, fam, (), world_size, migrate=False)
    return sorted(result.diagnostics, key=Diagnostic.sort_key)


def load(
    path: str | FsPath,
    *,
    family: str | Family | None = None,
    overrides: Iterable[str] = (),
    world_size: int | None = None,
) -> Any:
    """The validated config as the family's typed model, defaults filled.

    Raises ConfigError (with every diagnostic) when the config has errors.
    """
    result = check_path(path, family=family, overrides=overrides, world_size=world_size)
    if not result.ok or result.config is None or result.family is None:
        raise ConfigError(sorted(result.diagnostics, key=Diagnostic.sort_key))
    return to_model(result)


def to_model(result: Result) -> Any:
    """Build the typed model of a clean result (imports pydantic)."""
    import pydantic

    assert result.family is not None
    cls = result.family.model_class()
    try:
        return cls.model_validate(result.config)
    except pydantic.ValidationError as exc:  # the schema accepted what the model cannot express
        raise ConfigError(
            [
                Diagnostic(
                    result.file,
                    None,
                    None,
                    ".".join(str(p) for p in err["loc"]),
                    "model-mismatch",
                    Severity.ERROR,
                    f"the typed model refused a value the schema accepts: {err['msg']}",
                )
                for err in exc.errors()
            ]
        ) from None
