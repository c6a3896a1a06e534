"""A whole `trainspec check` run over unchanged files, answered from one stored record.

The per-file packs (`cache`) still decode, report and walk every result; a run whose command line,
environment and files are all as they were needs none of that. After a run that could be stored, a
record keeps what it printed and its exit status, with what the run depended on:

- the run's context: the record format, trainspec's version, Python, trainspec's own files and the
  distributions installed (`installation`), every `TRAINSPEC_*` variable but the cache's own, `NO_COLOR`,
  the working directory, the command line exactly as given, and whether standard output and standard
  error are terminals (with their encodings) and how many CPUs the process may use;
- each file the run read, named on the command line or found by walking a directory named there: its status
  (device, inode, mode, size, modification and change times) and the hash of its bytes;
- each folder such a walk entered: its status and the hash of its listing (each entry's name and whether it
  is a folder, a symbolic link or something else), both taken before the walk listed it;
- each place a project configuration could be read from for those files (`.trainspec.toml` and
  `pyproject.toml` in their folder and every folder above): whether it exists, its status and the hash
  of its bytes.

A later run with the same context reads the record (one file), compares each file's status with the one
recorded and prints the stored output, without importing the checking pipeline. A file whose status
differs is read and hashed, and a folder whose status differs is listed again: the same bytes or the same
listing are still a hit (the record is written again with the new
status, so a checkout or a restored cache costs one read of each file, once); other bytes are a miss,
and the run checks as it would without the record (each file then from its pack, or checked).

A status compared alone can miss a change only when a file is rewritten with the same size within the
resolution of its file system's clock, at the same inode. A status is trusted alone only when the file's
modification and change times were `SETTLED_NS` or more before the record's time: the end of the run that
recorded it (which hashes such a file again then, and records nothing if its bytes moved) or of the run
that renewed it; a file changed later is read and hashed next time, as git treats a racily clean entry.
The change time cannot be set by a program (`touch -d`, `os.utime` and an archive's extraction set only
the modification time), so restoring a file's old modification time over new bytes is caught too.

Only the simplest runs are recorded: every path on the command line a regular file or a folder (no glob, `-`,
symbolic link or run without paths, whose meaning can change without any file or folder recorded changing),
every file read a regular file and every folder listed, no `--sweep`, every
result one the packs would store (`cache.storable`), nothing written to standard error, and no file or
project configuration changed while the run checked. A record is written like a pack (a temporary file
moved into place), read with the same limits, and any record that does not match in every part, is a
symbolic link or does not parse is a miss. The store's folder is the user's, never the repository's,
so a repository cannot plant a record.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import sys
import time
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path

from trainspec.engine import cache_store

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a replayed check never needs it)
if TYPE_CHECKING:
    from typing import Any

FORMAT = 2
"""The layout of a record; a record of another format is a miss."""
SUFFIX = ".run"
SETTLED_NS = 2_000_000_000
"""A file whose status is trusted without reading it was last changed this long before the recording run
started (twice the whole second of the coarsest clocks in use, FAT's two seconds aside)."""
PROJECT_FILES = (".trainspec.toml", "pyproject.toml")
"""Where a project configuration is looked for, in each folder from a file's own up (`read.project`)."""
ENVIRONMENT = ("NO_COLOR",)
"""Variables besides `TRAINSPEC_*` that change what a check prints."""


_lstat = os.lstat
"""The status of a path, not following a symbolic link (the tests stand a coarser file system in for it)."""
_now = time.time_ns
"""The clock a record's time is read from (the tests move it on)."""


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=20).hexdigest()


def _status(status: os.stat_result) -> list[int]:
    return [
        status.st_dev,
        status.st_ino,
        status.st_mode,
        status.st_size,
        status.st_mtime_ns,
        status.st_ctime_ns,
    ]


@cache
def installation() -> list[Any]:
    """What is installed: Python, trainspec's own files and schemas (size and modification time), and the
    distributions on `sys.path` (their folder names carry name and version). Read once per process."""
    from trainspec.spec.resources import schema_dir

    own = []
    for root in (Path(__file__).resolve().parent.parent, schema_dir()):  # trainspec's package, its schemas
        if not isinstance(root, Path):
            continue  # inside a zip: the version says it all
        for folder, subfolders, names in os.walk(root):
            subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
            for name in sorted(names):
                if name.endswith((".pyc", ".pyo")):
                    continue
                path = os.path.join(folder, name)
                try:
                    status = os.stat(path)
                except OSError:
                    continue
                own.append((os.path.relpath(path, root), status.st_size, status.st_mtime_ns))
    distributions: set[str] = set()
    for entry in dict.fromkeys(os.path.abspath(e or ".") for e in sys.path if isinstance(e, str)):
        try:
            with os.scandir(entry) as found:
                distributions.update(e.name for e in found if e.name.endswith((".dist-info", ".egg-info")))
        except OSError:
            continue
    return [sys.version, _digest(repr(own).encode("utf-8", "surrogatepass")), sorted(distributions)]


def _terminal(stream: Any) -> list[Any]:
    try:
        tty = bool(stream.isatty())
    except (AttributeError, ValueError):
        tty = False
    return [tty, getattr(stream, "encoding", None), getattr(stream, "errors", None)]


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def key(command_line: Sequence[str]) -> str:
    """Everything a run's output depends on besides its files and project configurations."""
    from trainspec.spec import __version__

    environment = sorted(
        (name, value)
        for name, value in os.environ.items()
        if (name.startswith("TRAINSPEC_") and name not in (cache_store.DIR_VARIABLE, cache_store.OFF_VARIABLE))
        or name in ENVIRONMENT
    )
    parts = [
        FORMAT,
        __version__,
        installation(),
        environment,
        os.getcwd(),
        list(command_line),
        _terminal(sys.stdout),
        _terminal(sys.stderr),
        _cpus(),
    ]
    return _digest(json.dumps(parts).encode("utf-8", "surrogatepass"))


def _folders_above(files: Sequence[str]) -> list[str]:
    """Every folder a project configuration for `files` could be found in, each once."""
    folders: dict[str, None] = {}
    named = dict.fromkeys(map(os.path.dirname, files))  # one abspath a folder as written, not one a file
    for folder in dict.fromkeys(os.path.abspath(d or os.curdir) for d in named):
        while folder not in folders:
            folders[folder] = None
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
    return list(folders)


def _listing(folder: str) -> str:
    """The hash of a folder's entries: each name, and whether it is a folder, a symbolic link or another file
    (what decides whether a walk enters it, takes it as a file, or leaves it)."""
    with os.scandir(folder) as found:
        names = sorted(
            (e.name, "l" if e.is_symlink() else "d" if e.is_dir(follow_symlinks=False) else "f") for e in found
        )
    return _digest(json.dumps(names).encode("utf-8", "surrogatepass"))


def _settled(recorded: list[int], started: int) -> bool:
    return max(recorded[4], recorded[5]) + SETTLED_NS <= started


class Unrecordable(Exception):
    """The run depends on something a record does not hold."""


def _file_entry(path: str) -> list[Any]:
    """[path, status, hash] of a file a check reads: a regular file, not a symbolic link."""
    status = _lstat(path)
    if not stat.S_ISREG(status.st_mode) or status.st_size > cache_store.MAX_PACK_BYTES:
        raise Unrecordable(path)
    data = cache_store.read_regular(path, status.st_size)
    if data is None:
        raise Unrecordable(path)
    return [path, _status(status), _digest(data)]


def _walked(top: str, folders: dict[str, list[Any]]) -> list[str]:
    """The files a check of folder `top` reads, as the run finds them (`read.discovery`), with the status and
    listing of each folder the walk enters added to `folders`, each taken before the walk lists it."""
    from trainspec.read.discovery import expand
    from trainspec.spec.formats import FORMATS, extensions

    def entered(folder: str) -> None:
        status = _lstat(folder)
        folders.setdefault(folder, [folder, _status(status), _listing(folder)])

    problems: list[tuple[str, str]] = []
    found, _, _ = expand([top], extensions(FORMATS), problems, on_folder=entered)
    if problems:  # a folder it could not list: the run reports it, and a record could not tell it was fixed
        raise Unrecordable(top)
    return found


def _project_entries(files: Sequence[str]) -> list[list[Any]]:
    """[path, status or None, hash or None] of each place a project configuration could be read from."""
    entries: list[list[Any]] = []
    for folder in _folders_above(files):
        for name in PROJECT_FILES:
            path = os.path.join(folder, name)
            try:
                status = _lstat(path)
            except FileNotFoundError:
                entries.append([path, None, None])
                continue
            except OSError:
                raise Unrecordable(path) from None
            if stat.S_ISDIR(status.st_mode):
                entries.append([path, _status(status), None])
            else:
                entries.append(_file_entry(path))
    return entries


def _unchanged(entry: list[Any], started: int) -> bool | None:
    """Whether a file or project configuration is as recorded: True by its status alone, None when its status
    changed (or was too recent to trust) but its bytes did not (the record is to be written again), False
    when it differs."""
    path, recorded, digest = entry
    try:
        status = _lstat(path)
    except FileNotFoundError:
        return recorded is None
    except OSError:
        return False
    if recorded is None:
        return False
    now = _status(status)
    if now == recorded and _settled(recorded, started):
        return True
    if digest is None:  # a folder: its type is what matters
        return None if stat.S_ISDIR(status.st_mode) and stat.S_ISDIR(recorded[2]) else False
    if not stat.S_ISREG(status.st_mode) or status.st_size != recorded[3]:
        return False
    data = cache_store.read_regular(path, status.st_size)
    if data is None or _digest(data) != digest:
        return False
    entry[1] = now
    return None


def _folder_unchanged(entry: list[Any], started: int) -> bool | None:
    """`_unchanged` for a folder a walk entered: its listing stands for it when its status changed."""
    path, recorded, listing = entry
    try:
        status = _lstat(path)
        if not stat.S_ISDIR(status.st_mode):
            return False
        if _status(status) == recorded and _settled(recorded, started):
            return True
        if _listing(path) != listing:
            return False
    except OSError:
        return False
    entry[1] = _status(status)
    return None


_TEXT = ("utf-8", "surrogatepass")


def _all_settled(files: list[list[Any]], started: int) -> bool:
    """Whether every file has the status recorded, each last changed long enough before `started` for its
    status to be trusted alone (the one loop every file of a replayed run goes through)."""
    lstat = _lstat
    latest = started - SETTLED_NS
    try:
        for path, recorded, _ in files:
            s = lstat(path)
            if (
                s.st_mtime_ns != recorded[4]
                or s.st_ctime_ns != recorded[5]
                or s.st_size != recorded[3]
                or s.st_ino != recorded[1]
                or s.st_dev != recorded[0]
                or s.st_mode != recorded[2]
                or max(recorded[4], recorded[5]) > latest
            ):
                return False
    except OSError:
        return False
    return True


class Record:
    """What one run printed and returned, and what it depended on."""

    def __init__(
        self,
        run_key: str,
        started: int,
        files: list[list[Any]],
        projects: list[list[Any]],
        folders: list[list[Any]],
    ) -> None:
        self.key = run_key
        self.started = started
        self.files = files
        self.projects = projects
        self.folders = folders

    @classmethod
    def taken(cls, command_line: Sequence[str], paths: Sequence[str]) -> Record:
        """The status of every file, folder and project configuration a run over `paths` reads, taken before it
        reads them; Unrecordable when one is not a regular file (or a folder, for a path given or a
        configuration)."""
        started = _now()
        files: dict[str, list[Any]] = {}
        folders: dict[str, list[Any]] = {}
        for path in paths:
            try:
                named = [path]
                if stat.S_ISDIR(_lstat(path).st_mode):
                    named = _walked(path, folders)
                for file in named:
                    if file not in files:
                        files[file] = _file_entry(file)
            except OSError:
                raise Unrecordable(path) from None
        found = list(files)
        return cls(key(command_line), started, list(files.values()), _project_entries(found), list(folders.values()))

    def settle(self) -> bool:
        """Take the record's time again, after the run: whether every file and project configuration still has
        the status it had when taken (else the run read something that changed, and is not recorded). A file
        whose status was too recent to trust alone when taken but is not now is hashed again, so that the
        record holds what it holds from now on (a file written just before a first run is then trusted by
        the second)."""
        now = _now()
        for path, recorded, listing in self.folders:
            try:
                if _status(_lstat(path)) != recorded:
                    return False
                if not _settled(recorded, self.started) and _settled(recorded, now) and _listing(path) != listing:
                    return False
            except OSError:
                return False
        for entry in (*self.files, *self.projects):
            path, recorded, digest = entry
            try:
                status: list[int] | None = _status(_lstat(path))
            except FileNotFoundError:
                status = None
            except OSError:
                return False
            if status != recorded:
                return False
            if status is None or digest is None or _settled(status, self.started) or not _settled(status, now):
                continue
            data = cache_store.read_regular(path, status[3])
            if data is None or _digest(data) != digest:
                return False
        self.started = now
        return True

    def save(self, store: cache_store.Store, output: str, status: int) -> bool:
        head = {
            "format": FORMAT,
            "key": self.key,
            "started": self.started,
            "status": status,
            "files": self.files,
            "projects": self.projects,
            "folders": self.folders,
            "output": _digest(body := output.encode(*_TEXT)),
        }
        text = json.dumps(head, separators=(",", ":")).encode("ascii") + b"\n" + body
        if len(text) > cache_store.MAX_PACK_BYTES:
            return False
        return store.write(_name(self.key), text, SUFFIX)


def _name(run_key: str) -> str:
    return f"run-{run_key}"


def _store() -> cache_store.Store | None:
    root = cache_store.cache_dir()
    return cache_store.Store(root) if root is not None else None


def replay(command_line: Sequence[str], out: Any = None) -> int | None:
    """Print the stored output of a run of `command_line` (`check ...`) and return its exit status, when a record
    of one with everything it depends on unchanged exists; else None (nothing printed)."""
    if cache_store.turned_off() or "--no-cache" in command_line:  # else the look-up costs a run the key
        return None
    store = _store()
    if store is None:
        return None
    now = _now()  # before any status is read: a file changed after it is newer
    run_key = key(command_line)
    raw = cache_store.read_regular(store.path(_name(run_key), SUFFIX), cache_store.MAX_PACK_BYTES)
    if raw is None:
        return None
    head, _, body = raw.partition(b"\n")
    try:
        data = json.loads(head)
        if type(data) is not dict or data.get("format") != FORMAT or data.get("key") != run_key:
            return None
        started, status, files, projects = data["started"], data["status"], data["files"], data["projects"]
        folders = data["folders"]
        if type(started) is not int or type(status) is not int or type(files) is not list:
            return None
        refresh = False
        for entry in folders:
            same = _folder_unchanged(entry, started)
            if same is False:
                return None
            refresh = refresh or same is None
        for entry in projects if _all_settled(files, started) else (*projects, *files):
            same = _unchanged(entry, started)
            if same is False:
                return None
            refresh = refresh or same is None
        if data["output"] != _digest(body):  # cut short or damaged
            return None
        output = body.decode(*_TEXT)
    except (ValueError, TypeError, KeyError, IndexError, RecursionError):
        return None  # a record of another shape: a miss
    stream = sys.stdout if out is None else out
    stream.write(output)
    stream.flush()
    if refresh:  # a new status for files whose bytes did not change: trusted alone next time
        Record(run_key, now, files, projects, folders).save(store, output, status)
    else:
        store.touch(_name(run_key), SUFFIX)
    return status


class Recorder:
    """A run being recorded: its standard output as written, whether anything reached standard error, and
    whether every result could be stored."""

    def __init__(self, record: Record, store: cache_store.Store) -> None:
        self.record = record
        self.store = store
        self.written: list[str] = []
        self.usable = True
        self.results = 0
        """Results the run reported: each must have come from the store's packs or gone into them."""

    def stdout(self, stream: Any) -> _Tee:
        return _Tee(stream, self.written.append)

    def stderr(self, stream: Any) -> _Tee:
        return _Tee(stream, self._spoiled)

    def _spoiled(self, text: str) -> None:
        if text:
            self.usable = False

    def finish(self, status: int) -> None:
        """Write the record, when the run can be replayed and nothing it read changed while it ran."""
        if self.usable and self.store.hits + self.store.stored == self.results and self.record.settle():
            self.record.save(self.store, "".join(self.written), status)


class _Tee(io.TextIOBase):
    """A text stream that writes through to `stream` and hands each piece of text to `seen`."""

    def __init__(self, stream: Any, seen: Callable[[str], None]) -> None:
        self._stream = stream
        self._seen = seen

    def write(self, text: str) -> int:
        self._seen(text)
        return int(self._stream.write(text))

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return bool(self._stream.isatty())

    @property
    def encoding(self) -> Any:  # type: ignore[override]
        return getattr(self._stream, "encoding", None)

    @property
    def errors(self) -> Any:  # type: ignore[override]
        return getattr(self._stream, "errors", None)


def recorder(command_line: Sequence[str] | None, paths: Sequence[str]) -> Recorder | None:
    """A recorder for a run over `paths`, or None when such a run is never recorded."""
    if command_line is None or not paths or "-" in paths or cache_store.turned_off():
        return None
    store = _store()
    if store is None:
        return None
    try:
        return Recorder(Record.taken(command_line, paths), store)
    except (Unrecordable, OSError):
        return None
