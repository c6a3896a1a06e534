"""JSON: parsed by the standard library, located by a small scanner on demand.

Duplicate keys are detected while parsing (the standard library would keep
the last one silently); positions are computed only when needed. An integer
too long for Python to write in decimal is a syntax error (see
`digits.in_digit_limit`).
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from ..diagnostics import Diagnostic, Related, Severity
from ..digits import too_many_digits
from ..document import Document, LineIndex, Pos, Positions, Span
from ..paths import Path, format_path
from . import ReadError, file_error, syntax

_SCALAR = re.compile(r"[^,\]}\s]+")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)


def parse(file: str, text: str) -> Document:
    duplicates: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(items)
        if len(out) != len(items):
            seen: set[str] = set()
            duplicates.extend(k for k, _ in items if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        return out

    try:
        data = json.loads(text, object_pairs_hook=pairs)
    except json.JSONDecodeError as exc:
        hint = "" if file.lower().endswith(".json") else " (files that are not .toml, .yaml or .yml are read as JSON)"
        raise ReadError(
            file_error(file, "syntax-error", syntax.json(exc.msg, text, exc.pos) + hint, exc.lineno, exc.colno)
        ) from None
    except ValueError:  # the standard library's int() of an integer too long to write in decimal
        raise ReadError(_too_long(file, text)) from None
    doc = Document(file, "json", text, data, lambda: locate(text))
    if duplicates:
        doc.problems.extend(_duplicate_diagnostics(file, text))
    return doc


_STRING_OR_INTEGER = re.compile(r'"(?:[^"\\]++|\\.)*+"|(?<![\d.eE+-])-?\d++(?![.eE])', re.S)
"""A string (matched only to be skipped) or an integer; possessive, so a hostile number costs linear time."""


def _too_long(file: str, text: str) -> Diagnostic:
    """The diagnostic at the first integer too long to write in decimal (see `digits.in_digit_limit`).

    `json.loads` read the text up to that integer, so the strings before it are tokenized as it did.
    """
    limit = sys.get_int_max_str_digits()
    found = next(m for m in _STRING_OR_INTEGER.finditer(text) if m[0][0] != '"' and len(m[0].lstrip("-")) > limit)
    pos = LineIndex(text).pos(found.start())
    return file_error(file, "syntax-error", too_many_digits(), pos.line, pos.column)


def _duplicate_diagnostics(file: str, text: str) -> list[Diagnostic]:
    scanner = _Scanner(text)
    scanner.run()
    return [
        Diagnostic(
            file,
            pos.line,
            pos.column,
            format_path(path),
            "duplicate-key",
            Severity.ERROR,
            f"duplicate key `{path[-1]}` (first written at line {first.line}); keep one of them",
            related=(_first_written(scanner, path),),
            end_line=end.line,
            end_column=end.column,
        )
        for path, pos, end, first in scanner.duplicates
    ]


def _first_written(scanner: _Scanner, path: Path) -> Related:
    """Where a key that is written again was first written."""
    span = scanner.out[path]
    assert span.key is not None
    end = span.key_end or span.key
    return Related(format_path(path), span.key.line, span.key.column, end.line, end.column, "first written here")


def locate(text: str) -> Positions:
    scanner = _Scanner(text)
    scanner.run()
    return scanner.out


class _Scanner:
    """Walks JSON text that `json.loads` already accepted."""

    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0
        self.pos = LineIndex(text).pos
        self.out: Positions = {}
        self.duplicates: list[tuple[Path, Pos, Pos, Pos]] = []
        """(path, where the repeated key starts, where it ends, where the first one starts)"""

    def ws(self) -> None:
        while self.i < len(self.s) and self.s[self.i] in " \t\r\n":
            self.i += 1

    def run(self) -> None:
        self.ws()
        self.value((), None)

    def value(self, path: Path, key: tuple[int, int] | None) -> None:
        """Scan the value at the cursor; `key` is where its key starts and ends."""
        start = self.i
        first = path not in self.out
        self.scan(path)
        if first:
            self.out[path] = Span(
                self.pos(key[0]) if key is not None else None,
                self.pos(start),
                self.pos(key[1]) if key is not None else None,
                self.pos(self.i),
            )

    def scan(self, path: Path) -> None:
        s = self.s
        start = self.i
        c = s[start]
        if c == "{":
            self.i += 1
            while True:
                self.ws()
                if s[self.i] == "}":
                    self.i += 1
                    return
                if s[self.i] == ",":
                    self.i += 1
                    continue
                key_start = self.i
                m = _STRING.match(s, self.i)
                assert m is not None
                name = json.loads(m.group())
                self.i = m.end()
                self.ws()
                self.i += 1  # :
                self.ws()
                child = (*path, name)
                if child in self.out and self.out[child].key is not None:
                    first = self.out[child].key
                    assert first is not None
                    self.duplicates.append((child, self.pos(key_start), self.pos(m.end()), first))
                self.value(child, (key_start, m.end()))
        elif c == "[":
            self.i += 1
            index = 0
            while True:
                self.ws()
                if s[self.i] == "]":
                    self.i += 1
                    return
                if s[self.i] == ",":
                    self.i += 1
                    continue
                self.value((*path, index), None)
                index += 1
        elif c == '"':
            m = _STRING.match(s, self.i)
            assert m is not None
            self.i = m.end()
        else:
            m = _SCALAR.match(s, self.i)
            assert m is not None
            self.i = m.end()
