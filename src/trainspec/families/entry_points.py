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

Listing a large folder on `sys.path` (a script's own folder may be `/tmp`) costs more
than everything else a first `trainspec.load` does, so the distribution folders found
in one of at least `LISTED_FROM` entries are kept in the user's cache
(`resources.cache_dir()`, `listings.json`) with the folder's stamp (modification and
change times, inode, device), and a later run takes them from there while the folder's
stamp is the same: any entry added, removed or renamed in it changes its stamp. A folder
changed in the last `SETTLED_AFTER_NS` is not kept (a change within the same tick of the
file system's clock would not show); a cache file that is not a regular file of this
user's, writable by no one else, or is malformed in any part, is not read.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import re
import stat
import sys
import time
from collections.abc import Iterator
from typing import Any, NamedTuple

from trainspec.spec.resources import cache_dir

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
    listings = _Listings()
    for entry in sys.path:
        if not isinstance(entry, str) or os.path.basename(entry).lower().endswith(".egg"):
            raise _Unusual
        try:
            children = listings.distributions_in(entry or ".")
        except OSError:
            if os.path.exists(entry or "."):
                raise _Unusual from None  # a zip file, or a folder it may read some other way
            continue
        for child in children:
            name = child.rpartition(".")[0].partition("-")[0]
            if not child.endswith(_SUFFIXES) or not name:
                raise _Unusual  # importlib.metadata then reads the name from the distribution's metadata
            normalized = _normalized(name)
            if normalized in seen:
                continue  # an earlier distribution of this name shadows it
            seen.add(normalized)
            yield normalized, os.path.join(entry, child)
    listings.save()


LISTED_FROM = 256
"""Entries a folder holds from which its distribution folders are kept in the cache (a smaller one is
listed faster than its stamp is checked and the cache read)."""
SETTLED_AFTER_NS = 2_000_000_000
"""How long a folder must have gone unchanged for its listing to be kept: its stamp then tells every change."""
_CACHE_FILE = "listings.json"
_CACHE_FORMAT = 1
_CACHE_BYTES = 1 << 20
_CACHED_FOLDERS = 32


class _Listings:
    """The distribution folders (`*.dist-info`, `*.egg-info`, any case) of each folder on `sys.path`, in the
    order `os.listdir` gives them, kept in the user's cache for large folders (see the module's documentation)."""

    def __init__(self) -> None:
        folder = cache_dir()
        self.file = None if folder is None else os.path.join(folder, _CACHE_FILE)
        self.known = _read_cache(self.file) if self.file is not None else {}
        self.fresh: dict[str, dict[str, Any]] = {}

    def distributions_in(self, folder: str) -> list[str]:
        """The folder's distribution folders; OSError as `os.listdir` raises it."""
        key = os.path.abspath(folder)
        try:
            status = os.stat(folder)  # before listing: a change while it is listed changes the stamp after
        except OSError:
            status = None
        stamp = _stamp(status) if status is not None and stat.S_ISDIR(status.st_mode) else None
        known = self.known.get(key)
        if stamp is not None and known is not None and known["stamp"] == stamp:
            children: list[str] = known["children"]
            return children
        names = os.listdir(folder)
        found = [child for child in names if child.lower().endswith(_SUFFIXES)]
        settled = time.time_ns() - SETTLED_AFTER_NS
        if stamp is not None and len(names) >= LISTED_FROM and max(stamp[0], stamp[1]) < settled:
            self.fresh[key] = {"stamp": stamp, "children": found}
        return found

    def save(self) -> None:
        """Keep the listings made in this run (with the others the cache holds, up to `_CACHED_FOLDERS`)."""
        if not self.fresh or self.file is None:
            return
        folders = {**self.fresh, **{k: v for k, v in self.known.items() if k not in self.fresh}}
        text = json.dumps({"format": _CACHE_FORMAT, "folders": dict(list(folders.items())[:_CACHED_FOLDERS])})
        try:
            os.makedirs(os.path.dirname(self.file), mode=0o700, exist_ok=True)
            temporary = f"{self.file}.{os.getpid()}.tmp"
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(text)
            os.replace(temporary, self.file)
        except OSError:
            pass  # a cache that cannot be written only costs the next run the listing


def _stamp(status: os.stat_result) -> list[int]:
    return [status.st_mtime_ns, status.st_ctime_ns, status.st_ino, status.st_dev]


def _read_cache(file: str) -> dict[str, dict[str, Any]]:
    """The listings the cache file holds, by absolute folder; {} for a missing, foreign or malformed file."""
    try:
        fd = os.open(file, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return {}
    try:
        status = os.fstat(fd)
        if (
            not stat.S_ISREG(status.st_mode)
            or status.st_size > _CACHE_BYTES
            or status.st_mode & 0o022
            or (hasattr(os, "getuid") and status.st_uid != os.getuid())
        ):
            return {}
        with os.fdopen(fd, "rb", closefd=False) as raw:
            data = json.loads(raw.read(_CACHE_BYTES + 1))
    except (OSError, ValueError, RecursionError):
        return {}
    finally:
        os.close(fd)
    return _valid_listings(data)


def _valid_listings(data: Any) -> dict[str, dict[str, Any]]:
    """The cache's listings when every part has the shape `_Listings.save` writes, else {}: each folder an
    absolute path, its stamp four integers, each child a plain name of a distribution folder."""
    if type(data) is not dict or data.get("format") != _CACHE_FORMAT or type(data.get("folders")) is not dict:
        return {}
    for folder, listing in data["folders"].items():
        if not os.path.isabs(folder) or type(listing) is not dict or set(listing) != {"stamp", "children"}:
            return {}
        stamp, children = listing["stamp"], listing["children"]
        if type(stamp) is not list or len(stamp) != 4 or not all(type(n) is int for n in stamp):
            return {}
        if type(children) is not list or not all(_plain_child(c) for c in children):
            return {}
    folders: dict[str, dict[str, Any]] = data["folders"]
    return folders


def _plain_child(child: Any) -> bool:
    """A name of an entry of the folder itself: no separator, nothing that leads elsewhere."""
    return (
        type(child) is str
        and child.lower().endswith(_SUFFIXES)
        and "\0" not in child
        and os.sep not in child
        and (os.altsep is None or os.altsep not in child)
    )


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
