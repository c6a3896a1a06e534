"""The project configuration: `[tool.trainspec]` in a pyproject.toml, or a whole `.trainspec.toml`.

Each checked file takes the nearest configuration found walking up from its folder (a
pyproject.toml without `[tool.trainspec]` does not count). Its schema is
`schema/trainspec/project.schema.json`, so editors complete and check it as they do configs.
How its settings combine with the command line and file directives is `Settings.merged`.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from trainspec.read.discovery import is_config_file
from trainspec.read.files import parse, read_text
from trainspec.read.globs import Glob, GlobSet, glob_below
from trainspec.spec.codes import INVALID_PROJECT_CONFIG
from trainspec.spec.device import Device, target
from trainspec.spec.diagnostics import Clause, Diagnostic, Join, Severity
from trainspec.spec.document import Document, LineIndex, ReadError
from trainspec.spec.errors import TrainspecError
from trainspec.spec.layout_space import parse_size
from trainspec.spec.limits import PROJECT_ENTRIES, PROJECT_WORLD_SIZES, LimitExceeded
from trainspec.spec.paths import format_path
from trainspec.spec.resources import schema_dir
from trainspec.spec.schema import Schema
from trainspec.spec.schema_walk import build_validator
from trainspec.spec.world_sizes import parse_world_sizes
from trainspec.validate.fast import where_invalid

if TYPE_CHECKING:
    import jsonschema

T = TypeVar("T")

FILENAMES = (".trainspec.toml", "pyproject.toml")
"""Looked for in this order in each folder; the first holding trainspec settings wins."""


class ProjectError(TrainspecError):
    """A project configuration that cannot be used: its diagnostics say where and why."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        super().__init__("; ".join(d.message for d in diagnostics))
        self.diagnostics = diagnostics


@dataclass(frozen=True)
class Settings:
    """What applies to one file; empty fields leave the choice to the next source down."""

    family: str | None = None
    overlay: str | None = None
    world_sizes: tuple[int, ...] = ()
    overrides: tuple[str, ...] = ()
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    gpu_memory: int | None = None
    gpu: Device | None = None


@dataclass(frozen=True)
class Entry:
    """One `[[configs]]` table: the files its globs match, and their settings."""

    paths: tuple[str, ...]
    settings: Settings
    patterns: tuple[Glob, ...] = field(repr=False, default=())
    matcher: GlobSet = field(repr=False, compare=False, default=GlobSet(()))


@dataclass(frozen=True)
class Project:
    source: Path
    root: Path
    defaults: Settings
    entries: tuple[Entry, ...]
    exclude: tuple[Glob, ...]
    warnings_as_errors: bool
    excluder: GlobSet = field(repr=False, compare=False, default=GlobSet(()))

    def relative(self, file: str | Path) -> str | None:
        """`file` relative to the root, with forward slashes; None when it lies outside."""
        try:
            return Path(os.path.abspath(file)).relative_to(self.root).as_posix()
        except ValueError:
            return None

    def entry_for(self, file: str | Path) -> Entry | None:
        """The first entry with a glob matching `file`."""
        rel = self.relative(file)
        if rel is None:
            return None
        return next((e for e in self.entries if e.matcher.fullmatch(rel)), None)

    def excluded(self, file: str | Path) -> bool:
        """Whether `file`, or a folder above it (below the root), matches an `exclude` glob."""
        rel = self.relative(file)
        if rel is None:
            return False
        parts = rel.split("/")
        prefixes = ["/".join(parts[: n + 1]) for n in range(len(parts))]
        return any(self.excluder.fullmatch(prefix) for prefix in prefixes)

    def files(self, unreadable: list[tuple[str, str]] | None = None) -> list[str]:
        """Every config file (by extension) the entries' globs match, in entry order, sorted within each
        glob, not excluded (walked as `globs` says; folders that cannot be listed go to `unreadable`)."""
        found: dict[str, None] = {}
        problems = [] if unreadable is None else unreadable
        for entry in self.entries:
            for pattern in entry.paths:
                for match, is_dir in sorted(glob_below(str(self.root), pattern.removeprefix("./"), problems)):
                    if not is_dir and is_config_file(match) and not self.excluded(match):
                        found.setdefault(os.path.relpath(match), None)
        return list(found)

    def settings_for(self, file: str | Path) -> Settings:
        """The project's settings for `file`: its entry's, over the project-wide defaults."""
        return self.settings_of(self.entry_for(file))

    def settings_of(self, entry: Entry | None) -> Settings:
        """`entry`'s settings over the project-wide defaults (the defaults alone without an entry): for a
        caller that has found a file's entry already, so its globs are matched once."""
        if entry is None:
            return self.defaults
        mine, base = entry.settings, self.defaults
        overlay = str(self.root / mine.overlay) if mine.overlay else None
        return Settings(
            family=mine.family if mine.family or overlay else base.family,
            overlay=overlay,
            world_sizes=mine.world_sizes or base.world_sizes,
            overrides=base.overrides + mine.overrides,
            select=mine.select if mine.select is not None else base.select,
            ignore=base.ignore + mine.ignore,
            gpu_memory=mine.gpu_memory or base.gpu_memory,
            gpu=mine.gpu or base.gpu,
        )


def inside(root: Path, given: str) -> str:
    """`given` (a path a project configuration names) joined to `root`, only when it stays below `root` once
    resolved: an absolute path, `..` or a symbolic link out of the tree is refused before anything is
    opened, so a repository cannot make trainspec read (or say whether there is) a file outside it."""
    parts = given.replace("\\", "/").split("/")
    resolved_root = root.resolve()
    refused = given.startswith(("/", "\\", "~")) or ".." in parts or (len(given) > 1 and given[1] == ":")
    if not refused:
        try:
            (root / given).resolve().relative_to(resolved_root)
        except (ValueError, OSError, RuntimeError):
            refused = True
    if refused:
        raise _Unusable(
            given,
            f"{given!r} is not below the folder of this configuration: name a file inside the project, "
            "without an absolute path, `..` or a symbolic link that leads out of it",
        )
    return str(root / given)


def find_project(start: str | Path) -> Project | None:
    """The configuration for files in folder `start` (or the folder of file `start`)."""
    path = os.path.abspath(start)
    return _find_in(path if os.path.isdir(path) else os.path.dirname(path))


@functools.lru_cache(maxsize=4096)
def _find_in(folder: str) -> Project | None:
    """`_find` by the folder's text: a Path built and hashed per file costs more than the lookup."""
    return _find(Path(folder))


@functools.lru_cache(maxsize=4096)
def _find(folder: Path) -> Project | None:
    for name in FILENAMES:
        candidate = folder / name
        # a FIFO, a device or a folder named .trainspec.toml is refused, not passed over (a folder named
        # pyproject.toml is some other project's business)
        if os.path.lexists(candidate) and (name == ".trainspec.toml" or not candidate.is_dir()):
            project = load_project(candidate)
            if project is not None:
                return project
    return None if folder.parent == folder else _find(folder.parent)


@functools.lru_cache(maxsize=64)
def load_project(source: Path) -> Project | None:
    """The configuration in `source`; None for a pyproject.toml without `[tool.trainspec]`.

    Raises ProjectError with every problem, each at its line and column.
    """
    try:
        text = read_text(str(source))
    except ReadError as exc:
        raise ProjectError([_as_project_problem(exc.diagnostic)]) from None
    prefix: tuple[str, ...] = ("tool", "trainspec") if source.name == "pyproject.toml" else ()
    if prefix and "trainspec" not in text:
        return None  # another tool's pyproject.toml, broken or not, is none of trainspec's business
    try:
        doc = parse(str(source), text)
    except ReadError as exc:
        raise ProjectError([_as_project_problem(exc.diagnostic)]) from None
    data: Any = doc.data
    for key in prefix:
        data = data.get(key) if isinstance(data, dict) else None
    if data is None and prefix:
        return None
    try:
        _within_budget(data)
    except LimitExceeded as exc:
        raise ProjectError([_at(source, doc, prefix, str(exc))]) from None
    found = _schema_errors(data if data is not None else {})
    problems = [p for error in found for p in _problems(source, doc, prefix, error)]
    if problems:
        raise ProjectError(sorted(problems, key=Diagnostic.sort_key))
    try:
        defaults = _settings(data)
        sizes = len(defaults.world_sizes)
        entries = []
        for table in data.get("configs", ()):
            entries.append(_entry(table))
            sizes += len(entries[-1].settings.world_sizes)
            PROJECT_WORLD_SIZES.check(sizes, f"{sizes:,} world sizes in this configuration's entries")
        exclude = tuple(Glob(p) for p in data.get("exclude", ()))
    except LimitExceeded as exc:
        raise ProjectError([_at(source, doc, (*prefix, "configs"), str(exc))]) from None
    except ValueError as exc:
        raise ProjectError([_at_text(source, text, exc)]) from None
    return Project(
        source=source,
        root=source.parent,
        defaults=defaults,
        entries=tuple(entries),
        exclude=exclude,
        warnings_as_errors=bool(data.get("warnings-as-errors", False)),
        excluder=GlobSet(exclude),
    )


LISTS = ("configs", "exclude", "set", "select", "ignore", "paths")


def _within_budget(data: Any) -> None:
    """Every list of the configuration (`configs`, `exclude`, each `set`, `paths`, `select`, `ignore`) holds
    at most `PROJECT_ENTRIES` items; LimitExceeded names the first that holds more. Checked before
    anything else reads them: each entry, override and glob costs work for every file checked."""
    if not isinstance(data, dict):
        return
    tables = (
        [data, *(t for t in data.get("configs", ()) if isinstance(t, dict))]
        if isinstance(data.get("configs"), list)
        else [data]
    )
    for table in tables:
        for key in LISTS:
            value = table.get(key)
            if isinstance(value, list):
                PROJECT_ENTRIES.check(len(value), f"`{key}` holds {len(value):,} items")


class _Unusable(ValueError):
    """A setting the schema accepts but trainspec cannot use; `needle` is the text to point at."""

    def __init__(self, needle: str, message: str) -> None:
        super().__init__(message)
        self.needle = needle


def _at_text(source: Path, text: str, exc: ValueError) -> Diagnostic:
    return problem_at(source, text, exc.needle if isinstance(exc, _Unusable) else "", str(exc))


def problem_at(source: Path, text: str, needle: str, message: str) -> Diagnostic:
    """`invalid-project-config` at the first place `needle` is written in the configuration's `text`
    (a setting the schema accepts but trainspec cannot use has no position of its own)."""
    offset = text.find(needle) if needle else -1
    at = LineIndex(text).pos(offset) if offset >= 0 else None
    message += " (docs/project.md describes every setting)"
    return Diagnostic(
        str(source),
        at.line if at else None,
        at.column if at else None,
        (),
        INVALID_PROJECT_CONFIG.id,
        Severity.ERROR,
        message,
    )


def _as_project_problem(problem: Diagnostic) -> Diagnostic:
    """A project configuration that cannot be read is unusable as such (exit status 2), whatever the reader says."""
    return Diagnostic(
        problem.file,
        problem.line,
        problem.column,
        problem.path,
        INVALID_PROJECT_CONFIG.id,
        Severity.ERROR,
        problem.text,
        clauses=(*problem.clauses, Clause("the project configuration cannot be read", Join.BEFORE)),
    )


def _entry(table: Mapping[str, Any]) -> Entry:
    paths = tuple(table["paths"])
    for pattern in paths:
        parts = pattern.replace("\\", "/").split("/")
        if pattern.startswith(("/", "\\")) or ".." in parts or (len(pattern) > 1 and pattern[1] == ":"):
            raise _Unusable(
                pattern, f"`{pattern}`: `paths` are globs below the folder of this configuration, not absolute or `..`"
            )
    globs = tuple(Glob(p) for p in paths)
    return Entry(paths, _settings(table), globs, GlobSet(globs))


def _settings(table: Mapping[str, Any]) -> Settings:
    given = table.get("world-size")
    sizes: tuple[int, ...] | list[int]
    if isinstance(given, str):
        try:
            sizes = parse_world_sizes(given)
        except ValueError as exc:
            raise _Unusable(given, f"world-size {given!r}: {exc}") from None
    else:
        sizes = (given,) if isinstance(given, int) else given or ()
    return Settings(
        family=table.get("family"),
        overlay=table.get("overlay"),
        world_sizes=tuple(dict.fromkeys(sizes)),
        overrides=tuple(table.get("set", ())),
        select=tuple(table["select"]) if "select" in table else None,
        ignore=tuple(table.get("ignore", ())),
        gpu_memory=_read(table, "gpu-memory", parse_size),
        gpu=_read(table, "gpu", target),
    )


def _read(table: Mapping[str, Any], key: str, read: Callable[[str], T]) -> T | None:
    """A setting read as its command-line option reads it (`gpu-memory = "80GiB"` in bytes, `gpu = "h100"`
    as the device it names); the schema checks the type, the reader whether trainspec can use the value."""
    given = table.get(key)
    if given is None:
        return None
    try:
        return read(str(given))
    except ValueError as exc:
        raise _Unusable(str(given), f"{key} {given!r}: {exc}") from None


@functools.cache
def _schema() -> Schema:
    path = schema_dir() / "trainspec" / "project.schema.json"
    return Schema.from_text(path.read_text(encoding="utf-8"), str(path))


@functools.cache
def _validator() -> jsonschema.Draft202012Validator:
    return build_validator(_schema(), check=False)


def _schema_errors(data: Any) -> list[jsonschema.ValidationError]:
    """python-jsonschema's errors in the settings (the validator of record, which explains them), asked
    only when the compiled validator finds the settings invalid (or cannot say): importing it would
    cost a one-file check about 40 ms, and a valid configuration never needs it."""
    if where_invalid(_schema(), data, first=True) == ([], []):
        return []
    return list(_validator().iter_errors(data))


def _problems(
    source: Path, doc: Document, prefix: tuple[str, ...], error: jsonschema.ValidationError
) -> list[Diagnostic]:
    """One diagnostic per problem, at the setting it is about (an unknown setting: at its own key)."""
    path = (*prefix, *error.absolute_path)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        known = sorted(k for k in error.schema.get("properties", {}) if k != "$schema")
        unknown = [k for k in error.instance if k not in error.schema.get("properties", {})]
        return [_at(source, doc, (*path, key), f"`{key}` is not a setting{_near(key, known)}") for key in unknown]
    if error.validator == "pattern" and "set" in path:
        message = f"{error.instance!r} is not an override: write PATH=VALUE, as with --set"
        return [_at(source, doc, path, f"{format_path(path)}: {message}")]
    if error.validator == "oneOf":
        message = f'{error.instance!r} is not a world size: write 8, [8, 16], "8,16" or "1..64"'
    else:
        message = error.message
    return [_at(source, doc, path, f"{format_path(path) if path else 'the top level'}: {message}")]


def _near(key: str, known: list[str]) -> str:
    from difflib import get_close_matches  # only for a project setting trainspec does not know

    close = get_close_matches(key, known, 1, 0.6)
    return f"; did you mean `{close[0]}`?" if close else f" (settings: {', '.join(known)})"


def _at(source: Path, doc: Document, path: tuple[str | int, ...], message: str) -> Diagnostic:
    where = doc.where(path)
    return Diagnostic(
        str(source),
        where.line if where else None,
        where.column if where else None,
        path,
        INVALID_PROJECT_CONFIG.id,
        Severity.ERROR,
        message + " (docs/project.md describes every setting)",
    )


def forget_projects() -> None:
    """Read project configurations from disk again at the next lookup (a long-running process, after
    one changed)."""
    _find.cache_clear()
    _find_in.cache_clear()
    load_project.cache_clear()
