"""A buffer's text: positions in code points inside, in the client's units on the wire, and edits.

trainspec's columns count code points; LSP clients count UTF-16 units unless
they agreed on another encoding. Everything in this package works in code
points and converts only when it builds a protocol value.
"""

from __future__ import annotations

import bisect
import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate

from lsprotocol import types as lsp

_QUOTED = {'"': re.compile(r'"(?:[^"\\]|\\.)*"?'), "'": re.compile(r"'[^']*'?")}
_KEY = re.compile(r"[^\s=:,#\[\]{}]+")
_BRACKETS = {"[": "]", "{": "}"}


@dataclass(frozen=True)
class Edit:
    """Replace the code points from `start` to `end` (offsets into the text) by `new`."""

    start: int
    end: int
    new: str


class Source:
    """A buffer's text, split into lines on `\\n` as trainspec's readers count them."""

    def __init__(self, text: str, encoding: str = lsp.PositionEncodingKind.Utf16) -> None:
        self.text = text
        self.encoding = encoding
        self.lines = text.split("\n")
        self._starts = [0, *accumulate(len(line) + 1 for line in self.lines[:-1])]

    def line(self, n: int) -> str:
        """Line `n` (0-based) without its line break; "" past the end."""
        return self.lines[n].rstrip("\r") if 0 <= n < len(self.lines) else ""

    def offset(self, line: int, column: int) -> int:
        """The offset of a 0-based line and code-point column (clamped to the text)."""
        if line >= len(self.lines):
            return len(self.text)
        line = max(line, 0)
        return self._starts[line] + min(max(column, 0), len(self.lines[line]))

    def place(self, offset: int) -> tuple[int, int]:
        """The 0-based line and code-point column of an offset."""
        line = bisect.bisect_right(self._starts, max(offset, 0)) - 1
        return line, offset - self._starts[line]

    def position(self, line: int, column: int) -> lsp.Position:
        """A code-point position as the client counts it (past the end: the end of the text)."""
        if line >= len(self.lines):
            line, column = len(self.lines) - 1, len(self.lines[-1])
        text = self.lines[line][:column] if line >= 0 else ""
        return lsp.Position(line=max(line, 0), character=len(text) if text.isascii() else _units(text, self.encoding))

    def range(self, line: int, column: int, end_line: int, end_column: int) -> lsp.Range:
        return lsp.Range(start=self.position(line, column), end=self.position(end_line, end_column))

    def edit_range(self, edit: Edit) -> lsp.Range:
        return self.range(*self.place(edit.start), *self.place(edit.end))

    def from_client(self, position: lsp.Position) -> tuple[int, int]:
        """A client position as a 0-based line and code-point column."""
        text = self.lines[position.line] if 0 <= position.line < len(self.lines) else ""
        units = 0
        for column, char in enumerate(text):
            if units >= position.character:
                return position.line, column
            units += _units(char, self.encoding)
        return position.line, len(text)

    def text_edit(self, edit: Edit) -> lsp.TextEdit:
        return lsp.TextEdit(range=self.edit_range(edit), new_text=edit.new)

    def token_end(self, line: int, column: int) -> int:
        """The code-point column just after the key or value token starting at `column` of `line`.

        A quoted string ends at its closing quote, a bracketed value at its matching
        bracket on the line, anything else at the first character that cannot be in
        a bare key or a plain scalar; an empty token covers the rest of the line.
        """
        text = self.line(line)
        rest = text[column:]
        if not rest.strip():
            return max(len(text), column)
        first = rest[0]
        if first in _QUOTED:
            m = _QUOTED[first].match(rest)
            return column + (m.end() if m else len(rest))
        if first in _BRACKETS:
            depth = 0
            for i, char in enumerate(rest):
                depth += (char == first) - (char == _BRACKETS[first])
                if depth == 0:
                    return column + i + 1
            return column + len(rest.rstrip())
        m = _KEY.match(rest)
        if m is None:
            return column + 1
        end = m.end()
        if end < len(rest) and rest[end] == " " and not re.match(r"\s*[=:#]", rest[end:]):
            end = len(rest.split(" #")[0].rstrip())  # a plain YAML scalar with spaces, up to a comment
        return column + end


def apply(text: str, edits: Sequence[Edit]) -> str:
    """`text` with non-overlapping edits applied."""
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        text = text[: edit.start] + edit.new + text[edit.end :]
    return text


def changed(old: str, new: str) -> tuple[int, int, int]:
    """(start, old end, new end): `old[start:old end]` became `new[start:new end]`, the rest of the two texts
    is alike. The common prefix and suffix are found by halving, each step one comparison of two slices."""
    most = min(len(old), len(new))
    low, high = 0, most  # the common prefix is at least `low` long and at most `high`
    while low < high:
        mid = (low + high + 1) // 2
        if old[:mid] == new[:mid]:
            low = mid
        else:
            high = mid - 1
    start = low
    low, high = 0, most - start
    while low < high:
        mid = (low + high + 1) // 2
        if old[len(old) - mid :] == new[len(new) - mid :]:
            low = mid
        else:
            high = mid - 1
    return start, len(old) - low, len(new) - low


def line_edits(old: str, new: str) -> tuple[Edit, ...]:
    """Edits turning `old` into `new`, one per run of changed lines, so unchanged lines stay untouched."""
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    starts = [0]
    for line in a:
        starts.append(starts[-1] + len(line))
    return tuple(
        Edit(starts[i1], starts[i2], "".join(b[j1:j2]))
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
        if tag != "equal"
    )


def _units(text: str, encoding: str) -> int:
    if encoding == lsp.PositionEncodingKind.Utf32:
        return len(text)
    if encoding == lsp.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8"))
    return len(text.encode("utf-16-le")) // 2
