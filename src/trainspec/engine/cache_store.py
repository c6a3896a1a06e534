"""Where `trainspec check` keeps the results of files it has checked (`cache_codec`: how one is written down).

The store is a folder of the user's own (`TRAINSPEC_CACHE_DIR`, else `$XDG_CACHE_HOME/trainspec`,
else `~/.cache/trainspec`), never one inside the checked repository unless the user names it so.
It holds packs: one JSON file per folder of checked files, project configuration and run settings,
mapping each file as it was named to the key of the check that produced its result and the result
itself, as JSON data (nothing is ever unpickled or imported from it). A pack is written whole to a
temporary file in the same folder and moved into place (`os.replace`), so a reader sees an old pack
or a new one, never a half-written one; a run adds its entries to the pack as it is on disk when it
writes, and when two runs write at once the one that moves its file last wins, which costs the
other's new entries a later check, never a wrong result. A pack that is a symbolic link, not a
regular file, larger than `MAX_PACK_BYTES`, unreadable or malformed in any way is read as empty, and
a result that does not decode into exactly the types a check produces is a miss. The folder is held
to `MAX_PACKS` packs and `MAX_BYTES` bytes, the packs used longest ago removed first.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys
import time
from collections.abc import Iterable
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a replayed check never needs it)
if TYPE_CHECKING:
    from typing import Any

FORMAT = 1
"""The layout of packs and entries; a change gets a folder of its own (`v2`)."""
DIR_VARIABLE = "TRAINSPEC_CACHE_DIR"
OFF_VARIABLE = "TRAINSPEC_NO_CACHE"
MAX_PACK_BYTES = 64 * 2**20
"""A pack larger than this is neither read nor written (ten thousand results take about 6 MiB)."""
MAX_PACKS = 4096
MAX_BYTES = 512 * 2**20
STALE_TEMPORARY = 3600.0
"""Seconds after which a temporary file is taken for the leftover of a run that was killed while writing."""
TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# trainspec's result cache (`trainspec check --no-cache`)\n"
"""CACHEDIR.TAG (https://bford.info/cachedir/): backup tools leave the folder out."""

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_BINARY = getattr(os, "O_BINARY", 0)


class Uncachable(Exception):
    """A result that does not travel through JSON unchanged: it is checked again next time instead."""


def turned_off() -> bool:
    """`TRAINSPEC_NO_CACHE=1` (any value but empty or `0`): as `--no-cache`."""
    return os.environ.get(OFF_VARIABLE, "") not in ("", "0")


def cache_dir() -> Path | None:
    """The store's folder: `TRAINSPEC_CACHE_DIR`, else the user's cache folder (`$XDG_CACHE_HOME/trainspec`,
    `~/.cache/trainspec`; `%LOCALAPPDATA%\\trainspec` on Windows); None when there is none (no home)."""
    given = os.environ.get(DIR_VARIABLE, "")
    if given:
        return Path(os.path.abspath(os.path.expanduser(given)))
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if xdg and os.path.isabs(xdg):  # a relative one is to be ignored (XDG Base Directory specification)
        return Path(xdg) / "trainspec"
    if sys.platform == "win32" and os.path.isabs(os.environ.get("LOCALAPPDATA", "")):
        return Path(os.environ["LOCALAPPDATA"]) / "trainspec"
    home = os.path.expanduser("~")
    return Path(home) / ".cache" / "trainspec" if os.path.isabs(home) else None


def read_regular(path: str | Path, limit: int) -> bytes | None:
    """The bytes of `path` when it is a regular file (not a symbolic link) of at most `limit` bytes, else None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | _NOFOLLOW | _BINARY)
    except OSError:
        return None
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode) or status.st_size > limit:
            return None
        wanted = status.st_size + 1
        data = os.read(fd, wanted)
        if len(data) == wanted:  # it grew since: read on to the end, or past the limit
            more = [data]
            while (chunk := os.read(fd, 1 << 16)) and sum(map(len, more)) <= limit:
                more.append(chunk)
            data = b"".join(more)
        return data if len(data) <= limit else None
    except OSError:
        return None
    finally:
        os.close(fd)


KEY_LENGTH = 40
"""Hexadecimal digits of a key (`blake2b`, 20 bytes)."""


class Pack:
    """The entries of one pack: the file as named -> its key followed by its result as JSON text (one string
    each, which the garbage collector need not follow); `written`: those this run adds."""

    def __init__(self, name: str, entries: dict[str, Any]) -> None:
        self.name = name
        self.entries = entries
        self.written: dict[str, str] = {}

    def get(self, file: str, key: str) -> str | None:
        """The result stored for `file` under `key` (as JSON text), or None."""
        entry = self.entries.get(file)
        if type(entry) is str and entry.startswith(key) and len(key) == KEY_LENGTH:
            return entry[KEY_LENGTH:]
        return None

    def put(self, file: str, key: str, encoded: str) -> None:
        if len(key) == KEY_LENGTH:
            self.written[file] = key + encoded


class Store:
    """The packs under `root`, one folder per `FORMAT`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.folder = root / f"v{FORMAT}"
        self.read_packs = self.hits = self.stored = 0
        """Packs read, results taken from them and results added to them, in this process."""

    def path(self, name: str, suffix: str = ".json") -> Path:
        return self.folder / f"{name}{suffix}"

    def load(self, name: str, context: str) -> Pack:
        """The pack `name` of `context` (empty when there is none, or it cannot be used)."""
        entries = self._entries(name, context)
        if entries is None:
            return Pack(name, {})
        self.read_packs += 1
        return Pack(name, entries)

    def _entries(self, name: str, context: str) -> dict[str, Any] | None:
        data = read_regular(self.path(name), MAX_PACK_BYTES)
        if data is None:
            return None
        try:
            pack = json.loads(data)
        except (ValueError, RecursionError):
            return None
        if (
            type(pack) is not dict
            or pack.get("format") != FORMAT
            or pack.get("context") != context
            or type(pack.get("entries")) is not dict
        ):
            return None
        entries: dict[str, Any] = pack["entries"]
        return entries

    def save(self, packs: Iterable[Pack], context: str) -> set[str]:
        """Write each pack with entries to add (over what the pack on disk holds now), then prune; the names
        of the packs written."""
        wrote: set[str] = set()
        for pack in packs:
            if not pack.written:
                continue
            current = self._entries(pack.name, context) or {}  # what another run may have added meanwhile
            current.update(pack.written)
            text = _pack_text(context, current)
            if len(text) > MAX_PACK_BYTES:  # this run's entries alone, else none
                text = _pack_text(context, pack.written)
            if len(text) <= MAX_PACK_BYTES and self._write(pack.name, text.encode("ascii")):
                wrote.add(pack.name)
            pack.entries.update(pack.written)
            pack.written = {}
        if wrote:
            self.prune()
        return wrote

    def touch(self, name: str, suffix: str = ".json") -> None:
        """Mark a pack (or a run's record) used now (pruning removes those used longest ago first)."""
        nofollow = os.utime in os.supports_follow_symlinks
        with contextlib.suppress(OSError, NotImplementedError):
            os.utime(self.path(name, suffix), follow_symlinks=not nofollow)

    def write(self, name: str, data: bytes, suffix: str) -> bool:
        """Write a file of the store whole (a run's record), then prune; whether it was written."""
        if not self._write(name, data, suffix):
            return False
        self.prune()
        return True

    def _write(self, name: str, data: bytes, suffix: str = ".json") -> bool:
        try:
            made = not self.folder.is_dir()
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            if made:
                self._tag()
        except OSError:
            return False
        temporary = self.folder / f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
        try:
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _BINARY, 0o600)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            os.replace(temporary, self.path(name, suffix))
            return True
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            return False

    def _tag(self) -> None:
        try:
            fd = os.open(self.root / "CACHEDIR.TAG", os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
        except OSError:
            return
        try:
            os.write(fd, TAG.encode("ascii"))
        finally:
            os.close(fd)

    def prune(self, max_packs: int = MAX_PACKS, max_bytes: int = MAX_BYTES) -> None:
        """Remove the packs and runs' records (`cache_run`) used longest ago while there are more than `max_packs`
        or they hold more than `max_bytes` (down to nine tenths of each, so pruning is not needed again at once),
        and the temporary files of runs that died writing."""
        packs: list[tuple[float, int, str]] = []
        now = time.time()
        try:
            with os.scandir(self.folder) as found:
                for entry in found:
                    try:
                        status = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if entry.name.endswith(".tmp"):
                        if now - status.st_mtime > STALE_TEMPORARY:
                            _remove(entry.path)
                    elif entry.name.endswith((".json", ".run")):
                        packs.append((status.st_mtime, status.st_size, entry.path))
        except OSError:
            return
        total = sum(size for _, size, _ in packs)
        if len(packs) <= max_packs and total <= max_bytes:
            return
        packs.sort()
        count = len(packs)
        for _, size, path in packs:
            if count <= max_packs * 9 // 10 and total <= max_bytes * 9 // 10:
                break
            if _remove(path):
                count -= 1
                total -= size


def _pack_text(context: str, entries: dict[str, Any]) -> str:
    return json.dumps({"format": FORMAT, "context": context, "entries": entries}, separators=(",", ":"))


def _remove(path: str) -> bool:
    try:
        os.unlink(path)
        return True
    except OSError:
        return False
