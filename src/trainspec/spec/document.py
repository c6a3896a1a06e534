"""A config document: plain data plus where each key and value was written; or why a file gave none."""

from __future__ import annotations

import bisect
import copy
import sys
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass
from functools import cached_property
from itertools import accumulate
from typing import Any

from trainspec.spec.diagnostics import Diagnostic
from trainspec.spec.errors import TrainspecError
from trainspec.spec.paths import Path
from trainspec.spec.result import Outcome


@dataclass(frozen=True, slots=True)
class Pos:
    """A 1-based line and column in the file."""

    line: int
    column: int

    def __init__(self, line: int, column: int) -> None:
        # Scanners make one for each end of each key and value. The generated __init__ sets fields
        # through object.__setattr__ (the class is frozen), at about half the speed of their slots.
        _set_line(self, line)
        _set_column(self, column)


_set_line, _set_column = (vars(Pos)[name].__set__ for name in ("line", "column"))


@dataclass(frozen=True, slots=True)
class Span:
    """Where a mapping key and its value start (the key is None for list items), and where each ends.

    An end is the position just after the last character (exclusive), on the same line or a later
    one; None when the reader did not record it.
    """

    key: Pos | None
    value: Pos | None
    key_end: Pos | None = None
    value_end: Pos | None = None

    def __init__(
        self, key: Pos | None, value: Pos | None, key_end: Pos | None = None, value_end: Pos | None = None
    ) -> None:
        # as in Pos: one made for each path of the file
        _set_key(self, key)
        _set_value(self, value)
        _set_key_end(self, key_end)
        _set_value_end(self, value_end)


_set_key, _set_value, _set_key_end, _set_value_end = (
    vars(Span)[name].__set__ for name in ("key", "value", "key_end", "value_end")
)


@dataclass(frozen=True)
class Range:
    """A stretch of the file: from `start` to `end` (exclusive), both 1-based."""

    start: Pos
    end: Pos | None


Positions = MutableMapping[Path, Span]
"""Where each path of a document is written (a plain dict, or `Located` from offsets)."""

Offsets = tuple[int | None, int | None, int | None, int | None]
"""A Span still as character offsets: key, value, key end, value end (see `LineIndex.span`)."""


class Unreadable(str):
    """A plain YAML scalar PyYAML's safe loader fails on (`2024-13-45` resolves as a date, then is none)."""


class LineIndex:
    """Turns character offsets of a text into 1-based line and column positions."""

    def __init__(self, text: str) -> None:
        ends = [len(line) + 1 for line in text.split("\n")]  # each line with its newline; the last has none
        ends[-1:] = []
        self.starts = [0, *accumulate(ends)]

    def pos(self, offset: int) -> Pos:
        line = bisect.bisect_right(self.starts, offset)
        return Pos(line, offset - self.starts[line - 1] + 1)

    def span(self, key: int | None, value: int | None, key_end: int | None, value_end: int | None) -> Span:
        """The Span of these offsets (None stays None), the first given first.

        Most entries sit on one line: one lookup then serves all their offsets.
        """
        starts = self.starts
        first = value if key is None else key
        assert first is not None, "a key or a value"
        line = bisect.bisect_right(starts, first)
        before = starts[line - 1] - 1
        after = starts[line] if line < len(starts) else sys.maxsize
        return Span(
            None if key is None else Pos(line, key - before),
            None if value is None else Pos(line, value - before) if value < after else self.pos(value),
            None if key_end is None else Pos(line, key_end - before) if key_end < after else self.pos(key_end),
            None if value_end is None else Pos(line, value_end - before) if value_end < after else self.pos(value_end),
        )


class Located(MutableMapping[Path, Span]):
    """Positions a scanner recorded as character offsets, made lines and columns only for the paths asked
    about: a file with one error needs a few of its hundreds of positions, and the scan is cheaper
    without the rest."""

    def __init__(self, offsets: dict[Path, Offsets], index: LineIndex) -> None:
        self._spans: dict[Path, Span | Offsets] = dict(offsets)
        self._index = index

    def __getitem__(self, path: Path) -> Span:
        found = self._spans[path]
        if type(found) is tuple:
            found = self._spans[path] = self._index.span(*found)
        return found  # type: ignore[return-value]

    def get(self, path: Path, default: Any = None) -> Any:
        return self[path] if path in self._spans else default

    def __contains__(self, path: object) -> bool:
        return path in self._spans

    def __setitem__(self, path: Path, span: Span) -> None:
        self._spans[path] = span

    def __delitem__(self, path: Path) -> None:
        del self._spans[path]

    def __iter__(self) -> Iterator[Path]:
        return iter(self._spans)

    def __len__(self) -> int:
        return len(self._spans)


@dataclass(frozen=True)
class LineEdit:
    """A document after an edit of one line, re-read alone (a format's `Syntax.reread_line`)."""

    data: Any
    """The data with the line's new values (containers copied only on the way to them)."""
    moved: dict[Path, Span]
    """The keys and values of the line, at their new places."""
    yaml_1_1: dict[Path, Any] | None = None
    """The document's YAML 1.1 readings after the edit, where the format keeps them; None: unchanged."""


class Document:
    """What a reader produced from one file.

    Positions may be computed lazily (`locate`), because most files are clean
    and never need them. `origins` marks values that did not come from the file
    (overrides), so diagnostics can say where they really came from.
    """

    def __init__(
        self,
        file: str,
        fmt: str,
        text: str,
        data: Any,
        locate: Callable[[], Positions],
        problems: list[Diagnostic] | None = None,
    ) -> None:
        self.file = file
        self.format = fmt
        self.text = text
        self.data = data
        self._locate = locate
        self.problems: list[Diagnostic] = problems or []
        self.origins: dict[Path, str] = {}
        self.yaml_1_1: dict[Path, Any] = {}
        """Plain YAML scalars that YAML 1.1 (PyYAML's safe loader) reads differently, with that reading."""

    @cached_property
    def positions(self) -> Positions:
        return self._locate()

    def snapshot(self) -> Document:
        """A copy of the document as it is now, to check apart: its own data and positions."""
        positions = dict(self.positions)
        copied = Document(
            self.file, self.format, self.text, copy.deepcopy(self.data), lambda: positions, list(self.problems)
        )
        copied.yaml_1_1 = dict(self.yaml_1_1)  # the loader's readings judge the copy too
        return copied

    def origin(self, path: Path) -> str | None:
        """The override a value came from, if it (or an ancestor) was overridden."""
        for n in range(len(path), -1, -1):
            found = self.origins.get(path[:n])
            if found is not None:
                return found
        return None

    def origin_within(self, path: Path) -> str | None:
        """The override that set `path`, an ancestor, or (failing those) something inside it."""
        found = self.origin(path)
        if found is None:
            found = next((o for p, o in self.origins.items() if p[: len(path)] == path), None)
        return found

    def where(self, path: Path, *, key: bool = True) -> Pos | None:
        """Position of `path` (its key, or its value), else of its nearest written ancestor."""
        positions = self.positions
        for n in range(len(path), 0, -1):
            span = positions.get(path[:n])
            if span is not None:
                first, second = (span.key, span.value) if key else (span.value, span.key)
                return first or second
        return None

    def range_of(self, path: Path, part: str = "key") -> Range | None:
        """Where `path` is written, else its nearest written ancestor: its "key", its "value", or
        the whole "entry" (key and value). A part the reader has no position for falls back to the
        other (a list item has no key)."""
        positions = self.positions
        for n in range(len(path), 0, -1):
            span = positions.get(path[:n])
            if span is None:
                continue
            key = Range(span.key, span.key_end) if span.key else None
            value = Range(span.value, span.value_end) if span.value else None
            if part == "entry" and key and value:
                return Range(key.start, value.end or key.end)
            return (value or key) if part == "value" else (key or value)
        return None

    def is_written(self, path: Path) -> bool:
        return path in self.positions

    def move(self, old: Path, new: Path) -> None:
        """Re-home the positions of `old` (and below) to `new` after a migration."""
        self.yaml_1_1 = {(new + p[len(old) :] if p[: len(old)] == old else p): v for p, v in self.yaml_1_1.items()}
        positions = self.positions
        for path in [p for p in positions if p[: len(old)] == old]:
            positions[new + path[len(old) :]] = positions.pop(path)

    def mark_origin(self, path: Path, origin: str) -> None:
        """Record that the value at `path` comes from `origin`, not from the file."""
        positions = self.positions
        for p in [p for p in positions if p[: len(path)] == path]:
            del positions[p]
        self.origins = {p: o for p, o in self.origins.items() if p[: len(path)] != path}
        self.origins[path] = origin
        self.yaml_1_1 = {p: v for p, v in self.yaml_1_1.items() if p[: len(path)] != path}


class ReadError(TrainspecError):
    """The file could not be read or parsed; carries the located diagnostic, and what it means for the check."""

    def __init__(self, diagnostic: Diagnostic, outcome: Outcome = Outcome.SYNTAX) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic
        self.outcome = outcome
