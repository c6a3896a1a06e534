"""Rewrite a user's file without ever losing it: the one writer of `trainspec migrate` and `trainspec editor`.

The new text goes to a temporary file next to the target, which is then
renamed over it: a reader sees the old file or the new one, never half of
one, and an error, Ctrl-C, SIGTERM or SIGHUP at any point leaves the original
as it was and removes the temporary file (the two signals then end the
process with their usual status, 128 + the signal's number). The rename makes a new inode, so what belonged
to the old one is carried over, or the write is refused (`WriteRefused`,
nothing written) when it cannot be:

- a symbolic link is followed: its target is rewritten and the link stays a
  link; `within` confines the target to a directory (links planted in a
  cloned workspace must not reach `~/.bashrc`);
- mode, owner and group are copied; a leading UTF-8 byte-order mark is kept;
- a read-only file is refused: its mode says it is not to be changed;
- a file with other hard links is refused: the other names would keep the old text;
- a file that no longer holds what the caller read is refused, checked again
  (content, inode, size, mtime) just before the rename, so a concurrent edit
  is not lost silently. Only the instant between that check and the rename
  is unguarded: files are not locked.

What an edit leaves alone stays as written: `keep_original_lines` takes every
line an emitter wrote unchanged from the original, byte for byte.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import stat
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from trainspec.spec.errors import TrainspecError
from trainspec.spec.limits import FILE_BYTES

BOM = b"\xef\xbb\xbf"

_HINTS = {
    errno.ENOSPC: "free some disk space and run again",
    errno.EDQUOT: "free some space within your disk quota and run again",
    errno.EFBIG: "raise the file size limit (ulimit -f) and run again",
    errno.EROFS: "the file system is mounted read-only",
}


class WriteRefused(TrainspecError):
    """Nothing was written; the message names the file, why, and what to do."""


@dataclass(frozen=True)
class _Seen:
    """A file as it was read; seen again just before the rename, it must be equal."""

    data: bytes
    inode: int
    size: int
    mtime_ns: int
    info: os.stat_result = field(compare=False)


def read_text(path: Path, within: Path | None = None) -> str | None:
    """The text of the file `path` leads to (without a byte-order mark), or None when there is none.

    This is the text `write_text` expects back as `expected`.
    """
    seen = _read(_target(path, within), path)
    if seen is None:
        return None
    try:
        return seen.data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise WriteRefused(f"{path}: not UTF-8 text (byte {exc.start + 1} is invalid)") from None


def write_text(path: Path, text: str, *, expected: str | None, within: Path | None = None) -> None:
    """Replace the file `path` leads to by `text`, if it still holds `expected` (None: if there still is none)."""
    target = _target(path, within)
    before = _read(target, path)
    held = None if before is None else before.data.removeprefix(BOM)
    if held != (None if expected is None else expected.encode()):
        raise _changed(path)
    if before is not None:
        _check_rewritable(path, target, before.info)
    bom = BOM if before is not None and before.data.startswith(BOM) else b""
    tmp = target.parent / f".{target.name}.{os.urandom(4).hex()}.tmp"
    with _ending_signals_raise():
        _write_through(tmp, target, path, before, bom + text.encode())


def _write_through(tmp: Path, target: Path, path: Path, before: _Seen | None, data: bytes) -> None:
    """Write `data` to `tmp` and rename it over `target`; `tmp` is gone afterwards, whatever happens."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        # O_EXCL: never through a link planted at the temporary name; 0o666 lets the umask decide a new file's mode
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                out.flush()
                if before is not None:
                    _copy_owner_and_mode(out.fileno(), before.info, path)
                os.fsync(out.fileno())
            if _read(target, path) != before:
                raise _changed(path)
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise
    except OSError as exc:
        raise WriteRefused(f"cannot write {path}: {exc.strerror or exc}; {_what_to_do(exc, target.parent)}") from None


ENDING_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))
"""What ends a process that is writing (a CI timeout, a closed terminal) besides Ctrl-C."""


@contextlib.contextmanager
def _ending_signals_raise() -> Iterator[None]:
    """While a temporary file exists, SIGTERM and SIGHUP raise SystemExit(128 + N), as Ctrl-C raises
    KeyboardInterrupt, so the write's cleanup runs; outside the main thread signals cannot be handled."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def leave(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    previous = {signum: signal.signal(signum, leave) for signum in ENDING_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _target(path: Path, within: Path | None) -> Path:
    """The file a write to `path` lands in, all symbolic links followed; with `within`, it must lie there."""
    target = Path(os.path.realpath(path))
    if within is not None:
        root = Path(os.path.realpath(within))
        if not target.is_relative_to(root):
            link = _link_leaving(path, within, root)
            raise WriteRefused(
                f"{link} is a symbolic link leading out of {within} (to {os.path.realpath(link)}); "
                "trainspec does not write through it: remove the link, or point it inside"
            )
    return target


def _link_leaving(path: Path, within: Path, root: Path) -> Path:
    """The first symbolic link below `within` on the way to `path` that leads out of `root`, to name it."""
    base = Path(os.path.abspath(within))
    full = Path(os.path.abspath(path))
    below = [step for step in [*reversed(full.parents), full] if step != base and step.is_relative_to(base)]
    return next((s for s in below if s.is_symlink() and not Path(os.path.realpath(s)).is_relative_to(root)), path)


def _read(target: Path, path: Path) -> _Seen | None:
    """The file as it is now, or None when there is none; O_NONBLOCK so that a planted FIFO cannot hang us."""
    try:
        with os.fdopen(os.open(target, os.O_RDONLY | os.O_NONBLOCK), "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise WriteRefused(f"{path}: not a regular file (a pipe or device?); trainspec does not touch it")
            data = f.read(FILE_BYTES.value + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise WriteRefused(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > FILE_BYTES.value:
        raise WriteRefused(f"{path}: {FILE_BYTES.exceeded('is too large to rewrite')}; nothing was written")
    return _Seen(data, st.st_ino, st.st_size, st.st_mtime_ns, st)


def _check_rewritable(path: Path, target: Path, st: os.stat_result) -> None:
    if not st.st_mode & 0o222 or not os.access(target, os.W_OK):
        raise WriteRefused(f"{path}: read-only; nothing was written (make it writable first if it should change)")
    if st.st_nlink > 1:
        raise WriteRefused(
            f"{path}: has {st.st_nlink} hard links; nothing was written, as a rewrite would leave the other "
            "names with the old text (copy the file to break the links first)"
        )


def _copy_owner_and_mode(fd: int, st: os.stat_result, path: Path) -> None:
    """Give the new file the old one's owner, group and mode (owner first: chown clears set-id bits)."""
    mine = os.fstat(fd)
    if (mine.st_uid, mine.st_gid) != (st.st_uid, st.st_gid):
        try:
            os.fchown(fd, st.st_uid, st.st_gid)
        except PermissionError:
            raise WriteRefused(
                f"{path}: owned by {st.st_uid}:{st.st_gid}, which a rewrite by this user cannot keep; "
                "nothing was written (run as its owner)"
            ) from None
    os.fchmod(fd, stat.S_IMODE(st.st_mode))


def _what_to_do(exc: OSError, directory: Path) -> str:
    if exc.errno in (errno.EACCES, errno.EPERM):
        return f"it is unchanged (make {directory} writable and run again)"
    return f"it is unchanged ({_HINTS[exc.errno]})" if exc.errno in _HINTS else "it is unchanged"


def _changed(path: Path) -> WriteRefused:
    return WriteRefused(f"{path}: changed since trainspec read it; nothing was written (run the command again)")
