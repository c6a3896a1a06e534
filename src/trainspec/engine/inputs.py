"""What one `trainspec check` run reads: the files its arguments, standard input or the project
configuration name, less those the project excludes.

The command only turns arguments into a call here and the results into output; this
module decides which files there are (`discovery` expands directories and globs),
reads standard input through the same bounded reader as every file, and reports a
folder a walk could not list as a problem, not as a clean run.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import BinaryIO

from trainspec.engine.runner import usable
from trainspec.read.discovery import expand
from trainspec.read.files import read_stream
from trainspec.read.project import ProjectError, find_project
from trainspec.spec.codes import FILE_NOT_FOUND, FILE_NOT_READABLE
from trainspec.spec.diagnostics import Diagnostic, Severity
from trainspec.spec.document import ReadError
from trainspec.spec.errors import TrainspecError
from trainspec.spec.escaping import terminal
from trainspec.spec.result import Outcome, Result


class InputError(TrainspecError):
    """The arguments name nothing that can be checked (a usage problem: exit status 2); `details`: one line
    per problem under the first, each escaped where it is printed."""

    def __init__(self, message: str, details: Sequence[str] = ()) -> None:
        super().__init__("\n".join((message, *details)))
        self._lines = (message, *details)

    @property
    def lines(self) -> tuple[str, ...]:
        return self._lines


@dataclass
class Inputs:
    """The files to check, in order; `expanded`: those a walk or glob found (excluded and skipped by
    the project's rules); `texts`: the text of a file read from standard input, by name; `missing`:
    results for arguments that name no config and folders that could not be listed."""

    files: list[str]
    expanded: frozenset[str] = frozenset()
    texts: dict[str, str] = field(default_factory=dict)
    missing: list[Result] = field(default_factory=list)


def gather(
    paths: Sequence[str],
    extensions: frozenset[str],
    *,
    stdin: BinaryIO | None = None,
    stdin_filename: str | None = None,
    isolated: bool = False,
    force_exclude: bool = False,
) -> Inputs:
    """The inputs of a run over `paths` (`-` alone: standard input, named `stdin_filename`; none: the files
    the project configuration of the working directory names). Raises InputError with a sentence."""
    if "-" in paths:
        found = Inputs([], texts=_piped(paths, stdin, stdin_filename))
        found.files = list(found.texts)
    elif paths:
        unreadable: list[tuple[str, str]] = []
        files, unmatched, expanded = expand(paths, extensions, unreadable)
        missing = [*(_nothing_found(arg, extensions) for arg in unmatched), *map(_unlisted, unreadable)]
        found = Inputs(files, expanded, missing=missing)
    else:
        found = _configured(isolated)
    if not isolated:
        unusable = _unusable_projects(found.files)
        if unusable:
            raise InputError("the project configuration cannot be used:", [located(d) for d in unusable])
        found.files = [f for f in found.files if (f not in found.expanded and not force_exclude) or not _excluded(f)]
    return found


def _piped(paths: Sequence[str], stdin: BinaryIO | None, name: str | None) -> dict[str, str]:
    if list(paths) != ["-"]:
        raise InputError("`-` (a config read from standard input) cannot be mixed with other paths")
    if not name:
        raise InputError(
            "`-` needs --stdin-filename PATH: its extension names the format, its folder the project configuration"
        )
    assert stdin is not None
    try:
        return {name: read_stream(stdin, name)}
    except ReadError as exc:
        raise InputError(str(exc) if str(exc).startswith("standard input") else f"standard input: {exc}") from None


def _configured(isolated: bool) -> Inputs:
    """Every file the project configuration of the working directory names, or InputError saying why there are none."""
    if isolated:
        raise InputError("no paths given; name the files to check (--isolated ignores the project configuration)")
    try:
        project = find_project(os.getcwd())
    except ProjectError as exc:
        raise InputError("the project configuration cannot be used:", [located(d) for d in exc.diagnostics]) from None
    if project is None:
        raise InputError(
            "no paths given, and no project configuration here or above (`[tool.trainspec]` in pyproject.toml, "
            "or a .trainspec.toml, with `[[configs]]` globs); name the files to check"
        )
    unreadable: list[tuple[str, str]] = []
    files = project.files(unreadable)
    if not files and not unreadable:
        raise InputError(f"no paths given, and the `configs` globs of {project.source} match no file")
    return Inputs(files, frozenset(files), missing=[_unlisted(u) for u in unreadable])


def _unusable_projects(files: Sequence[str]) -> list[Diagnostic]:
    """The problems of every project configuration that governs one of `files`, each told once
    (loading them here also registers their overlays before any worker process starts)."""
    problems: dict[tuple[str, int | None, str], Diagnostic] = {}
    for folder in dict.fromkeys(os.path.dirname(os.path.abspath(f)) for f in files):
        try:
            project = find_project(folder)
            if project is not None:
                usable(project)
        except ProjectError as exc:
            problems.update(((d.file, d.line, d.message), d) for d in exc.diagnostics)
    return list(problems.values())


def located(d: Diagnostic) -> str:
    """A problem as an indented `file:line:column: message` line of a usage message, escaped for a terminal."""
    where = ":".join(str(p) for p in (d.file, d.line, d.column) if p is not None)
    return terminal(f"  {where}: {d.message}")


def _excluded(file: str) -> bool:
    """Whether the project configuration of a file found by a walk or glob excludes it."""
    try:
        project = find_project(file)
    except ProjectError:
        return False  # checking the file reports the configuration's problems
    return project is not None and project.excluded(file)


def _nothing_found(arg: str, extensions: frozenset[str]) -> Result:
    """A directory or pattern that holds no config file: as a missing file would be."""
    where = "in this directory" if os.path.isdir(arg) else "match this pattern"
    message = f"no config files ({', '.join(sorted(extensions))}) {where}"
    return Result.not_checked(
        Outcome.UNREADABLE, Diagnostic(arg, None, None, (), FILE_NOT_FOUND.id, Severity.ERROR, message)
    )


def _unlisted(problem: tuple[str, str]) -> Result:
    """A folder a walk or glob could not list: the files in it were not checked, which a clean run must not hide."""
    folder, reason = problem
    message = f"cannot list this directory ({reason}); the config files in it, if any, were not checked"
    unlisted = Diagnostic(folder, None, None, (), FILE_NOT_READABLE.id, Severity.ERROR, message)
    return Result.not_checked(Outcome.UNREADABLE, unlisted)


def results_after(results: Iterator[Result], inputs: Inputs) -> Iterator[Result]:
    """The run's results, then those of the arguments and folders that gave no file."""
    yield from results
    yield from inputs.missing
