"""The entry points of one group, read without importing `importlib.metadata`.

Importing `importlib.metadata` (it pulls in `email`, `zipfile` and more) costs a
one-file check about a fifth of its run time, yet every run needs the
`trainspec.families` entry points. So `entry_points` reads them the way
`importlib.metadata.entry_points(group=...)` does for the usual installation:
`*.dist-info` and `*.egg-info` folders in the folders on `sys.path`, the first
distribution of each name winning. Wherever it could read differently (a zip or
`.egg` on `sys.path`, a finder of distributions besides the standard one, an
unusual folder name, a line it cannot parse), it asks `importlib.metadata` itself.
`tests/test_startup.py` holds the two to the same answers.
"""

from __future__ import annotations

import functools
import importlib
import os
import re
import sys
from typing import Any, NamedTuple

_SUFFIXES = (".dist-info", ".egg-info")
_SEPARATORS = re.compile(r"[-_.]+")
_VALUE = re.compile(r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$")
"""`importlib.metadata.EntryPoint.pattern`."""


class EntryPoint(NamedTuple):
    name: str
    value: str

    def load(self) -> Any:
        """The object the entry point names, imported as `importlib.metadata.EntryPoint.load` does."""
        match: Any = _VALUE.match(self.value)  # None (an AttributeError here) for a malformed value, as there
        module = importlib.import_module(match.group("module"))
        return functools.reduce(getattr, filter(None, (match.group("attr") or "").split(".")), module)


class _Unusual(Exception):
    """Something `importlib.metadata` may read differently from `_scan`."""


def entry_points(group: str) -> list[EntryPoint]:
    """The entry points of `group`, in the order `importlib.metadata.entry_points(group=group)` lists them."""
    try:
        return _scan(group)
    except _Unusual:
        from importlib import metadata

        return [EntryPoint(e.name, e.value) for e in metadata.entry_points(group=group)]


def _scan(group: str) -> list[EntryPoint]:
    """importlib.metadata's path finder, for plain folders on `sys.path`; _Unusual for anything else."""
    from importlib.machinery import PathFinder

    if any(getattr(f, "find_distributions", None) is not None and f is not PathFinder for f in sys.meta_path):
        raise _Unusual  # another finder may add distributions
    seen: set[str] = set()
    found: list[EntryPoint] = []
    for entry in sys.path:
        if not isinstance(entry, str) or os.path.basename(entry).lower().endswith(".egg"):
            raise _Unusual
        try:
            children = os.listdir(entry or ".")
        except OSError:
            if os.path.exists(entry or "."):
                raise _Unusual from None  # a zip file, or a folder it may read some other way
            continue
        for child in children:
            low = child.lower()
            if not low.endswith(_SUFFIXES):
                continue
            name = child.rpartition(".")[0].partition("-")[0]
            if not child.endswith(_SUFFIXES) or not name:
                raise _Unusual  # importlib.metadata then reads the name from the distribution's metadata
            normalized = _SEPARATORS.sub("-", name).lower().replace("-", "_")
            if normalized in seen:
                continue  # an earlier distribution of this name shadows it
            seen.add(normalized)
            found.extend(_read(os.path.join(entry, child), group))
    return found


def _read(dist: str, group: str) -> list[EntryPoint]:
    """The `group` entries of one distribution's entry_points.txt (none when it has no such file)."""
    try:
        with open(os.path.join(dist, "entry_points.txt"), encoding="utf-8") as file:
            text = file.read()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
        return []
    except Exception:
        raise _Unusual from None
    section = None
    found = []
    for line in map(str.strip, text.splitlines()):
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line.strip("[]")
            continue
        if section is None:
            continue
        name, eq, value = line.partition("=")
        if not eq or not _VALUE.match(value.strip()):
            raise _Unusual  # importlib.metadata fails on it (from Python 3.15 also on a malformed value)
        if section == group:
            found.append(EntryPoint(name.strip(), value.strip()))
    return found
