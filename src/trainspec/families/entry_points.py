"""The entry points of one group, and the version of an installed distribution, read without importing
`importlib.metadata`.

Importing `importlib.metadata` (it pulls in `email`, `zipfile` and more) costs a
one-file check about a fifth of its run time, yet every run needs the
`trainspec.families` entry points. So `entry_points` reads them the way
`importlib.metadata.entry_points(group=...)` does for the usual installation:
`*.dist-info` and `*.egg-info` folders in the folders on `sys.path`, the first
distribution of each name winning. Wherever it could read differently (a zip or
`.egg` on `sys.path`, a finder of distributions besides the standard one, an
unusual folder name, a line it cannot parse), it asks `importlib.metadata` itself.
`tests/test_startup.py` holds the two to the same answers. `installed_version` reads
a distribution's version the same way (`importlib.metadata.version`), from the
`Version` of the first distribution of that name.
"""

from __future__ import annotations

import functools
import importlib
import os
import re
import sys
from collections.abc import Iterator
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


def installed_version(distribution: str) -> str | None:
    """The version of the installed distribution of that name (None: not installed), as
    `importlib.metadata.version` reads it."""
    try:
        wanted = _normalized(distribution)
        folder = next((path for name, path in _distributions() if name == wanted), None)
        return None if folder is None else _version(folder)
    except _Unusual:
        from importlib import metadata

        try:
            return metadata.version(distribution)
        except metadata.PackageNotFoundError:
            return None


def _version(folder: str) -> str:
    """The `Version` header of a distribution's metadata file."""
    for meta in ("METADATA", "PKG-INFO"):
        try:
            with open(os.path.join(folder, meta), encoding="utf-8") as file:
                for line in file:
                    if not line.strip():
                        break  # the headers end at the first blank line
                    key, colon, value = line.partition(":")
                    if colon and key.strip().lower() == "version":
                        return value.strip()
        except (FileNotFoundError, NotADirectoryError):
            continue
        except Exception:
            raise _Unusual from None
    raise _Unusual


def _normalized(name: str) -> str:
    return _SEPARATORS.sub("-", name).lower().replace("-", "_")


def _scan(group: str) -> list[EntryPoint]:
    """importlib.metadata's path finder, for plain folders on `sys.path`; _Unusual for anything else."""
    return [e for _, folder in _distributions() for e in _read(folder, group)]


def _distributions() -> Iterator[tuple[str, str]]:
    """(normalized name, folder) of each distribution on `sys.path`, the first of each name, as
    importlib.metadata's path finder lists them; _Unusual for anything it may read otherwise."""
    from importlib.machinery import PathFinder

    if any(getattr(f, "find_distributions", None) is not None and f is not PathFinder for f in sys.meta_path):
        raise _Unusual  # another finder may add distributions
    seen: set[str] = set()
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
            normalized = _normalized(name)
            if normalized in seen:
                continue  # an earlier distribution of this name shadows it
            seen.add(normalized)
            yield normalized, os.path.join(entry, child)


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
