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

from trainspec.codes import DUPLICATE_KEY, SYNTAX_ERROR
from trainspec.diagnostics import Diagnostic, Related, Severity
from trainspec.paths import Path
from trainspec.read import syntax
from trainspec.read.digits import too_many_digits
from trainspec.read.document import Document, LineIndex, Located, Offsets, Pos, Positions
from trainspec.read.files import ReadError, file_error


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
            file_error(file, SYNTAX_ERROR.id, syntax.json(exc.msg, text, exc.pos) + hint, exc.lineno, exc.colno)
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
    return file_error(file, SYNTAX_ERROR.id, too_many_digits(), pos.line, pos.column)


def _duplicate_diagnostics(file: str, text: str) -> list[Diagnostic]:
    out, duplicates = _scan(text)
    return [
        Diagnostic(
            file,
            pos.line,
            pos.column,
            path,
            DUPLICATE_KEY.id,
            Severity.ERROR,
            f"duplicate key `{path[-1]}` (first written at line {first.line}); keep one of them",
            related=(_first_written(out, path),),
            end_line=end.line,
            end_column=end.column,
        )
        for path, pos, end, first in duplicates
    ]


def _first_written(out: Positions, path: Path) -> Related:
    """Where a key that is written again was first written."""
    span = out[path]
    assert span.key is not None
    end = span.key_end or span.key
    return Related(path, span.key.line, span.key.column, end.line, end.column, "first written here")


def locate(text: str) -> Positions:
    return _scan(text)[0]


_STRING = r'"(?:[^"\\]++|\\.)*+"'
_TOKEN = re.compile(
    r"[ \t\r\n,]*+"
    rf"(?:({_STRING})[ \t\r\n]*+:[ \t\r\n]*+)?"  # a key, and the value it is the key of:
    rf"(?:([\[{{])|([\]}}])|({_STRING}|[^,\]}}\s]++))",  # [ or {, ] or }, or a string, number, true, false, null
    re.S,
)
"""The next token after spaces and commas; a key with its value (what is between follows from the brackets)."""


def _scan(text: str) -> tuple[Positions, list[tuple[Path, Pos, Pos, Pos]]]:
    """Where each path of JSON text that `json.loads` accepted is first written, and the keys written
    again: (path, where the repeated key starts, where it ends, where the first one starts).

    One regex match per value (with its key), the open arrays and objects on a stack.
    """
    index = LineIndex(text)
    pos = index.pos
    out: dict[Path, Offsets] = {}
    duplicates: list[tuple[Path, Pos, Pos, Pos]] = []
    stack: list[tuple[Path, int, Path, int, int | None, int | None, bool]] = []
    path: Path = ()  # of the array or object the cursor is in
    items = -1  # values so far in the array the cursor is in (-1: outside any, at the top)
    for m in _TOKEN.finditer(text):
        kind = m.lastindex
        if kind == 3:  # ] or }
            child, items, path, value, key, key_end, first = stack.pop()
            if first:
                out[child] = (key, value, key_end, m.end())
            continue
        raw = m[1]
        if raw is not None:
            child = (*path, raw[1:-1] if "\\" not in raw else json.loads(raw))
            key, key_end = m.span(1)
            seen = out.get(child)
            if seen is not None and seen[0] is not None:
                duplicates.append((child, pos(key), pos(key_end), pos(seen[0])))
        else:
            child = (*path, items) if items >= 0 else ()
            key = key_end = None
            items += 1
        if kind == 2:  # [ or {: recorded after what it holds
            stack.append((child, items, path, m.start(2), key, key_end, child not in out))
            path, items = child, 0
        elif child not in out:
            start, end = m.span(4)
            out[child] = (key, start, key_end, end)
    return Located(out, index), duplicates
