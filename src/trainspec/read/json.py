"""JSON: parsed by the standard library, located by a small scanner on demand.

Duplicate keys are detected while parsing (the standard library would keep
the last one silently); positions are computed only when needed. An integer
too long for Python to write in decimal is a syntax error (see
`digits.in_digit_limit`).

What editing asks of JSON (`formats.Syntax`) follows the reader: the key or
value typed at a cursor (inside the objects and arrays open before it), keys
and values as JSON writes them, and the whole document written back with
two-space indents; JSON takes no inserted lines.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from trainspec.read import syntax
from trainspec.read.files import file_error
from trainspec.spec.codes import DUPLICATE_KEY, SYNTAX_ERROR
from trainspec.spec.diagnostics import Diagnostic, Related, Severity
from trainspec.spec.digits import too_many_digits
from trainspec.spec.document import Document, LineEdit, LineIndex, Located, Offsets, Pos, Positions, ReadError
from trainspec.spec.formats import FORMATS, JSON, in_words
from trainspec.spec.paths import Path
from trainspec.spec.wording import show

if TYPE_CHECKING:
    from trainspec.spec.formats import Place, Tree


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
        hint = "" if file.lower().endswith(JSON.extensions) else f" (files that are not {_others()} are read as JSON)"
        raise ReadError(
            file_error(file, SYNTAX_ERROR.id, syntax.json(exc.msg, text, exc.pos) + hint, exc.lineno, exc.colno)
        ) from None
    except ValueError:  # the standard library's int() of an integer too long to write in decimal
        raise ReadError(_too_long(file, text)) from None
    doc = Document(file, "json", text, data, lambda: locate(text))
    if duplicates:
        doc.problems.extend(_duplicate_diagnostics(file, text))
    return doc


def _others() -> str:
    return in_words(ext for fmt in FORMATS.values() if fmt is not JSON for ext in fmt.extensions)


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


# -- editing: what completion, quick fixes, `plan --apply` and `migrate` ask of JSON (`formats.Syntax`) ------------
# Patterns as text: `re` compiles them on first use, so a check, which never edits, does not pay for them.

CLOSING = "}"
DIRECTIVE_ANYWHERE = False
EDITOR_SETTINGS: tuple[str, ...] = ("yaml.schemas", "json.schemas")
"""The YAML extension validates JSON files too."""
LANGUAGE_SERVER = "vscode-json-languageserver"

_TYPED = r'"(?:[^"\\]|\\.)*("?)|[{}\[\],:]|[^\s{}\[\],:"]+|\s+'


class _Frame:
    """An open JSON object or array, and where the scan is inside it."""

    __slots__ = ("array", "index", "key", "state")

    def __init__(self, array: bool, state: str) -> None:
        self.array = array
        self.key: str | None = None
        self.index = 0
        self.state = state
        """"key" (a key may start), "colon", "value" (a value may start), "after" (a value ended)."""


def place(lines: Sequence[str], line: int, column: int) -> Place | None:
    """The key or value typed at the cursor: inside the objects and arrays open before it."""
    if line >= len(lines):
        before = "\n".join(lines)
    else:
        line = max(line, 0)
        before = "\n".join([*lines[:line], lines[line][: max(column, 0)]])
    return _place(before)


def _place(text: str) -> Place | None:
    """Where the end of `text` (the JSON before the cursor) is: a key or a value, at which path."""
    stack: list[_Frame] = []
    typed = ""
    for m in re.finditer(_TYPED, text):
        token, top = m.group(), stack[-1] if stack else None
        typed = ""
        if token in "{[" and token:
            if top is not None:
                top.state = "after"
            stack.append(_Frame(array=token == "[", state="value" if token == "[" else "key"))
        elif token in "}]" and token:
            if stack:
                stack.pop()
        elif token == "," and top is not None:
            top.index += top.array
            top.state, top.key = ("value", top.key) if top.array else ("key", None)
        elif token == ":" and top is not None:
            top.state = "value"
        elif token.startswith('"') and not m.group(1) and m.end() == len(text):
            typed = token  # an unterminated string under the cursor
        elif not token.isspace() and top is not None:
            if not top.array and top.state == "key" and token.startswith('"'):
                top.key, top.state = json.loads(token), "colon"
            elif m.end() == len(text) and top.state == "value":
                typed = token
            else:
                top.state = "after"
    if not stack or stack[-1].state not in ("key", "value"):
        return None
    path = tuple(0 if f.array else f.key or "" for f in stack[:-1])
    top = stack[-1]
    if top.state == "key":
        return "key", path, typed
    return "value", (*path, 0 if top.array else top.key or ""), typed


def key_text(name: str, *, table: bool, section: bool) -> str:
    return f"{json.dumps(name)}: "


def value_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def value_lead(before: str) -> str:
    return ""


def entry(key: str, value: str) -> str:
    return f"{key}: {value}"


def insertion(text: str, positions: Positions, target: Path, line: str) -> tuple[int, str] | None:
    """None: a line added to JSON would need commas and braces mended around it."""
    return None


def string_text(value: str, replaced: str | None, styles: Callable[[], Counter[str]]) -> str:
    """JSON writes every string one way."""
    return show(value)


LINE_REREAD = False
"""JSON's lines are not its own: a value may span several, and commas join them."""


def shares_values(text: str) -> bool:
    return False


def reread_line(
    doc: Document,
    line: int,
    before: str,
    after: str,
    keys: Mapping[tuple[int, int], Path],
    values: Mapping[tuple[int, int], Sequence[Path]],
) -> LineEdit | None:
    return None


def set_values(doc: Document, values: Mapping[Path, Any]) -> str:
    """JSON has no comments to keep: the data, with the values set, written with two-space indents."""
    from trainspec.read.plain_data import put

    data = json.loads(doc.text)
    for path, value in values.items():
        put(data, path, value)
    return _dump(data)


def tree(doc: Document) -> Tree:
    return _Tree(doc.data)


class _Tree:
    """JSON as plain data (`formats.Tree`): nothing is attached to a key, and no mapping is shared."""

    shares_mappings = False

    def __init__(self, data: Any) -> None:
        self.data = data

    def shared(self, path: Path) -> bool:
        return False

    def dump(self, data: Any) -> str:
        return _dump(data)

    def settle(self) -> None:
        pass


def _dump(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


if TYPE_CHECKING:  # the type checker holds this module to what the engine asks of a format
    from trainspec.read import json as _this
    from trainspec.spec.formats import Reader, Rewriter, Syntax

    _asked: tuple[Reader, Syntax, Rewriter] = (_this, _this, _this)
