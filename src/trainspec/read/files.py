"""Readers turn a file into a Document; one small module per format (see `formats`).

The format is chosen by the file extension (case-insensitive); anything that
is not TOML or YAML is read as JSON, and a JSON parse error says so.
"""

from __future__ import annotations

import io
import os
import stat
from typing import BinaryIO, Protocol

from trainspec.spec.codes import FILE_NOT_FOUND, FILE_NOT_READABLE, SYNTAX_ERROR
from trainspec.spec.diagnostics import Diagnostic, Severity
from trainspec.spec.document import Document, ReadError
from trainspec.spec.formats import format_of
from trainspec.spec.limits import FILE_BYTES
from trainspec.spec.result import Outcome


def read_text(path: str) -> str:
    """The text of a config file, through `read_bytes`; a ReadError says why there is none."""
    return _decoded(path, read_bytes(path))


def read_bytes(path: str) -> bytes:
    """The bytes of a regular file of at most `limits.FILE_BYTES`: the one way trainspec reads an input
    file (configs, project configurations, overlays). Opened without blocking, so a FIFO planted where a
    config should be cannot hang a run, and refused unless regular, so a device cannot exhaust memory."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        if os.path.islink(path):
            message = f"a symbolic link to {os.readlink(path)}, which does not exist"
            raise _unreadable(path, FILE_NOT_FOUND.id, message) from None
        raise _unreadable(path, FILE_NOT_FOUND.id, "no such file") from None
    except OSError as exc:
        raise _unreadable(path, FILE_NOT_READABLE.id, f"cannot read: {exc.strerror}") from None
    try:
        status = os.fstat(fd)
        if stat.S_ISDIR(status.st_mode):
            raise _unreadable(path, FILE_NOT_READABLE.id, "is a directory, not a config file")
        if not stat.S_ISREG(status.st_mode):
            raise _unreadable(path, FILE_NOT_READABLE.id, "is not a regular file (a pipe or device?)")
        return _bounded(_Descriptor(fd), path, status.st_size)
    finally:
        os.close(fd)


class _Descriptor:
    """`read(n)` of an open file descriptor as a file object has it (up to `n` bytes, fewer only at the end),
    without the buffered file object a regular file of a few kilobytes does not need."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def read(self, n: int) -> bytes:
        first = os.read(self.fd, n)
        if len(first) == n or not first:
            return first
        parts = [first]
        left = n - len(first)
        while left and (more := os.read(self.fd, left)):
            parts.append(more)
            left -= len(more)
        return b"".join(parts)


def read_stream(stream: BinaryIO, name: str) -> str:
    """The text piped to trainspec (`check -`): a pipe or a file, never a terminal or a device,
    and no more than `limits.FILE_BYTES`."""
    try:
        mode = os.fstat(stream.fileno()).st_mode
    except (OSError, ValueError, io.UnsupportedOperation):
        mode = stat.S_IFIFO  # not a real file descriptor (a test's buffer): bounded all the same
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        raise _unreadable(name, FILE_NOT_READABLE.id, "standard input is a terminal or a device, not a config")
    return _decoded(name, _bounded(stream, name), "standard input")


def within_limit(path: str, text: str) -> str:
    """`text` given for `path` rather than read (an editor's buffer, the API's `text=`), held to the
    same size limit as a file; ReadError past it."""
    if len(text) > FILE_BYTES.value // 4 and len(text.encode("utf-8", "surrogatepass")) > FILE_BYTES.value:
        raise _too_large(path)
    return text


class _Readable(Protocol):
    def read(self, size: int, /) -> bytes: ...


def _bounded(file: _Readable, path: str, size: int | None = None) -> bytes:
    """At most the limit's bytes of `file`: one more than that is an error, and nothing past it is read.
    `size`: what the file holds, as far as its status says: asking for the limit's bytes at once costs a
    buffer that large per file (a file that grew meanwhile is read on to the limit all the same)."""
    limit = FILE_BYTES.value
    try:
        if size is not None and size < limit:
            raw = file.read(size + 1)
            if len(raw) > size:
                raw += file.read(limit - len(raw) + 1)
        else:
            raw = file.read(limit + 1)
    except OSError as exc:
        raise _unreadable(path, FILE_NOT_READABLE.id, f"cannot read: {exc.strerror}") from None
    if len(raw) > limit:
        raise _too_large(path)
    return raw


def _decoded(path: str, raw: bytes, what: str = "") -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        message = f"{f'{what} is ' if what else ''}not UTF-8 text (byte {exc.start + 1} is invalid)"
        raise ReadError(file_error(path, SYNTAX_ERROR.id, message)) from None


def _unreadable(path: str, rule: str, message: str) -> ReadError:
    return ReadError(file_error(path, rule, message), Outcome.UNREADABLE)


def _too_large(path: str) -> ReadError:
    return ReadError(
        file_error(path, FILE_NOT_READABLE.id, FILE_BYTES.exceeded("is too large to check")), Outcome.OVER_LIMIT
    )


def read(path: str) -> Document:
    """Read and parse one file into a Document."""
    return parse(path, read_text(path))


def parse(path: str, text: str) -> Document:
    """Parse `text` as the file `path` (its extension names the format) into a Document."""
    document: Document = format_of(path).parser().parse(path, text)
    return document


def file_error(path: str, rule: str, message: str, line: int | None = None, column: int | None = None) -> Diagnostic:
    return Diagnostic(
        file=path,
        line=line,
        column=column,
        path=(),
        rule=rule,
        severity=Severity.ERROR,
        text=message,
    )
