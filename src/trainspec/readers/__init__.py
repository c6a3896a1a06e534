"""Readers turn a file into a Document; one small module per format (see `formats`).

The format is chosen by the file extension (case-insensitive); anything that
is not TOML or YAML is read as JSON, and a JSON parse error says so.
"""

from __future__ import annotations

import os
import stat

from ..codes import FILE_NOT_FOUND, FILE_NOT_READABLE, SYNTAX_ERROR
from ..diagnostics import Diagnostic, Severity
from ..document import Document
from ..errors import TrainspecError
from ..formats import format_of
from ..result import Outcome


class ReadError(TrainspecError):
    """The file could not be read or parsed; carries the located diagnostic, and what it means for the check."""

    def __init__(self, diagnostic: Diagnostic, outcome: Outcome = Outcome.SYNTAX) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic
        self.outcome = outcome


def read_text(path: str) -> str:
    try:
        if not stat.S_ISREG(os.stat(path).st_mode) and not os.path.isdir(path):
            raise _unreadable(path, FILE_NOT_READABLE.id, "is not a regular file (a pipe or device?)")
        with open(path, "rb") as file:
            raw = file.read()
    except FileNotFoundError:
        if os.path.islink(path):
            message = f"a symbolic link to {os.readlink(path)}, which does not exist"
            raise _unreadable(path, FILE_NOT_FOUND.id, message) from None
        raise _unreadable(path, FILE_NOT_FOUND.id, "no such file") from None
    except IsADirectoryError:
        raise _unreadable(path, FILE_NOT_READABLE.id, "is a directory, not a config file") from None
    except OSError as exc:
        raise _unreadable(path, FILE_NOT_READABLE.id, f"cannot read: {exc.strerror}") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ReadError(
            file_error(path, SYNTAX_ERROR.id, f"not UTF-8 text (byte {exc.start + 1} is invalid)")
        ) from None


def _unreadable(path: str, rule: str, message: str) -> ReadError:
    return ReadError(file_error(path, rule, message), Outcome.UNREADABLE)


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
        message=message,
    )
