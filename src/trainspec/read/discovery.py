"""Which files `trainspec check` reads: the paths given, with directories and globs expanded.

A file named on the command line is always checked, whatever its extension.
A directory (walked recursively, skipping hidden entries, node_modules and pyproject.toml)
or a glob pattern contributes only files whose extension a known family is
written in, so `trainspec check configs/` does not trip over a README; of
those, the runner warns about files no family claims that look like a
family's config and skips the others (a package.json), but still reports
one that cannot be parsed. The
order is the order of the arguments, each expansion sorted, without repeats.
Walks and globs follow one policy for symbolic links and loops (`globs`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence

from trainspec.read.globs import Walk, glob_argument, is_glob
from trainspec.spec.formats import BY_EXTENSION

SKIPPED_DIRS = frozenset({"node_modules", "__pycache__"})
PROJECT_FILES = frozenset({"pyproject.toml"})
_EVERY_EXTENSION = frozenset(BY_EXTENSION)
"""Never a training config: a walk leaves it out rather than list it as skipped (hidden files,
such as `.trainspec.toml`, are left out anyway)."""


def expand(
    args: Sequence[str],
    extensions: frozenset[str],
    unreadable: list[tuple[str, str]] | None = None,
    on_folder: Callable[[str], None] | None = None,
) -> tuple[list[str], list[str], frozenset[str]]:
    """(files to check, arguments that matched no file, the files found by expanding a directory or glob).
    Directories a walk or glob could not list are added to `unreadable` as (directory, reason); `on_folder`
    is told of each folder a directory's walk enters, before it is listed."""
    files: list[str] = []
    seen: set[str] = set()
    unmatched: list[str] = []
    expanded: set[str] = set()
    problems = [] if unreadable is None else unreadable
    for arg in args:
        if os.path.isdir(arg):
            found = [_shown(f) for f in _walk(arg, extensions, problems, on_folder)]
            expanded.update(found)
        elif os.path.lexists(arg) or not is_glob(arg):
            found = [arg]  # a missing file is reported when it is read
        else:
            matches = sorted(glob_argument(arg, problems))
            found = [_shown(f) for match in matches for f in _matched(match, extensions, problems)]
            expanded.update(found)
        if not found:
            unmatched.append(arg)
        for file in found:
            key = os.path.normpath(file)
            if key not in seen:
                seen.add(key)
                files.append(file)
    return files, unmatched, frozenset(expanded) - set(args)


def _shown(path: str) -> str:
    """A found file as a user names it: `configs/a.toml` for `./configs/a.toml` (a file named on the command
    line keeps the spelling it was given)."""
    here = os.curdir + os.sep
    while path.startswith(here) and len(path) > len(here):
        path = path[len(here) :]
    return path


def _matched(match: tuple[str, bool], extensions: frozenset[str], problems: list[tuple[str, str]]) -> Iterator[str]:
    path, is_dir = match
    if is_dir:
        yield from _walk(path, extensions, problems)
    elif _is_config(path, extensions) and os.path.basename(path) not in PROJECT_FILES:
        yield path


def is_config_file(path: str) -> bool:
    """Whether a directory walk or glob would take `path`: an extension trainspec reads, not a pyproject.toml."""
    return _is_config(path, _EVERY_EXTENSION) and os.path.basename(path) not in PROJECT_FILES


def _is_config(name: str, extensions: frozenset[str]) -> bool:
    return os.path.splitext(name)[1].lower() in extensions


def _walk(
    top: str,
    extensions: frozenset[str],
    problems: list[tuple[str, str]],
    on_folder: Callable[[str], None] | None = None,
) -> Iterator[str]:
    walk = Walk(
        skip_dir=lambda name: name.startswith(".") or name in SKIPPED_DIRS, unreadable=problems, on_folder=on_folder
    )
    for path, is_dir in walk.files(top):
        name = os.path.basename(path)
        if not is_dir and not name.startswith(".") and name not in PROJECT_FILES and _is_config(name, extensions):
            yield path
