"""Each buffer's parse, kept between checks: after a keystroke only the line it changed is read again.

Parsing a two-thousand-line YAML config takes about 20 ms, most of it building a node and a
position for each of its values (TOML: about 5 ms, positions included); a keystroke almost always
changes one value on one line. When an edit stays on one line of a YAML or TOML buffer, that line
is parsed alone, by the format's own reader, before and after the edit. If both readings have the
same shape (the same keys and collections, the same quoting, only values or their columns differ)
and nothing else in the document can read the line otherwise, the new values and places replace
the old ones in a copy of the last document. Anything else is parsed whole, as `trainspec check`
parses it:

- an edit that adds or removes a line, or changes the last line when no line break ends it (the
  end of a YAML document moves with it), or the line's indentation;
- a line inside a multi-line value or key (a block or quoted scalar continued on the next line, a
  flow collection, array or inline table over several lines, a multi-line string);
- a changed key (a duplicate key may appear or go), a TOML table header or dotted key, a TOML date
  or time (two readers give them different classes), a YAML tag;
- a YAML document with anchors, aliases or merge keys (a value may be read in more than one
  place), a line that is a document marker or directive, or that does not parse alone;
- JSON, which has no lines of its own to re-read.

`tests/test_lsp_reparse.py` holds the result to a whole parse of the same text. Checks change the
document they are given (migrations move keys, overrides replace values), so every check gets a
copy of the data and positions of the parse kept here.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any

from trainspec.editor.lsp.text import changed
from trainspec.read.files import parse
from trainspec.spec.document import Document, LineEdit, Positions, Span
from trainspec.spec.formats import FORMATS, format_of
from trainspec.spec.paths import Path

if TYPE_CHECKING:
    from trainspec.spec.formats import Syntax


class Parses:
    """The parse of one buffer's latest text. `parse` is the check's `Options.parser`: it returns a copy of
    that parse, for the check to change; `document` is the parse itself, to read only."""

    def __init__(self) -> None:
        self._kept: _Kept | None = None
        self._lock = threading.Lock()
        self.reread = 0
        """Edits parsed by re-reading one line (the rest were parsed whole), for the tests."""

    def parse(self, file: str, text: str) -> Document:
        """`text` parsed as the file `file` (ReadError when it does not parse), as a document of the caller's."""
        if not format_of(file).syntax().LINE_REREAD:
            return parse(file, text)
        return self._parsed(file, text).fresh()

    def document(self, file: str, text: str) -> Document | None:
        """The kept parse of `text`, if it is the latest one parsed: not to be changed."""
        kept = self._kept
        return kept.doc if kept is not None and kept.file == file and kept.text == text else None

    def _parsed(self, file: str, text: str) -> _Kept:
        with self._lock:
            kept = self._kept
            if kept is not None and kept.file == file:
                if kept.text == text:
                    return kept
                patched = _reread_line(kept, text)
                if patched is not None:
                    self._kept = patched
                    self.reread += 1
                    return patched
            self._kept = _Kept(file, text, parse(file, text))  # a text that does not parse keeps the last that did
            return self._kept


class _Kept:
    """One parse, never changed once made: an edit makes another. `changed`: the positions an edit moved,
    over those of the whole parse (`base`)."""

    def __init__(
        self,
        file: str,
        text: str,
        doc: Document,
        lines: _Lines | None = None,
        base: Positions | None = None,
        changed: dict[Path, Span] | None = None,
    ) -> None:
        self.file = file
        self.text = text
        self.doc = doc
        self._lines = lines
        self.base = base if base is not None else doc.positions
        self.changed = changed or {}

    def fresh(self) -> Document:
        doc, base, changed = self.doc, self.base, self.changed
        copied = Document(
            doc.file, doc.format, doc.text, _copy(doc.data), lambda: _Overlay(base, dict(changed)), list(doc.problems)
        )
        copied.yaml_1_1 = dict(doc.yaml_1_1)
        return copied

    def edited(self, text: str, edit: LineEdit) -> _Kept:
        """This parse after an edit of one line: its data, and the keys and values moved on that line."""
        doc, moved = self.doc, edit.moved
        changed = {**self.changed, **moved}
        base = self.base
        new = Document(doc.file, doc.format, text, edit.data, lambda: _Overlay(base, changed), list(doc.problems))
        new.yaml_1_1 = doc.yaml_1_1 if edit.yaml_1_1 is None else edit.yaml_1_1
        lines = self.lines
        old = {p: self.doc.positions[p] for p in moved}
        return _Kept(self.file, text, new, lines.moved(old, moved), base, changed)

    @property
    def lines(self) -> _Lines:
        """Where each key and value of the document starts, and the lines no edit may be re-read on."""
        if self._lines is None:
            self._lines = _Lines.of(self.doc)
        return self._lines


class _Overlay(MutableMapping[Path, Span]):
    """Positions: those of a whole parse (never changed), under those edits moved and the check changes."""

    def __init__(self, base: Positions, changed: dict[Path, Span]) -> None:
        self._base = base
        self._changed = changed
        self._removed: set[Path] = set()

    def __getitem__(self, path: Path) -> Span:
        found = self._changed.get(path)
        if found is not None:
            return found
        if path in self._removed:
            raise KeyError(path)
        return self._base[path]

    def get(self, path: Path, default: Any = None) -> Any:
        found = self._changed.get(path)
        if found is not None:
            return found
        return default if path in self._removed else self._base.get(path, default)

    def __contains__(self, path: object) -> bool:
        return path in self._changed or (path not in self._removed and path in self._base)

    def __setitem__(self, path: Path, span: Span) -> None:
        self._changed[path] = span

    def __delitem__(self, path: Path) -> None:
        if path not in self:
            raise KeyError(path)
        self._changed.pop(path, None)
        if path in self._base:
            self._removed.add(path)

    def __iter__(self) -> Iterator[Path]:
        for path in self._base:
            if path in self._changed or path not in self._removed:
                yield path
        for path in self._changed:
            if path not in self._base:
                yield path

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _copy(value: Any) -> Any:
    """Plain data copied down to its scalars (which nothing changes in place)."""
    kind = type(value)
    if kind is dict:
        return {k: _copy(v) for k, v in value.items()}
    if kind is list:
        return [_copy(v) for v in value]
    return value


class _Lines:
    """What re-reading one line of a document needs to know about the rest of it."""

    def __init__(
        self,
        shared: bool,
        keys: dict[tuple[int, int], Path],
        values: dict[tuple[int, int], list[Path]],
        unsafe: frozenset[int],
    ) -> None:
        self.shared = shared
        """Values read in more than one place (YAML anchors, aliases or merge keys), or a byte-order mark."""
        self.keys = keys
        """The path of the key starting at each (line, column), 1-based."""
        self.values = values
        """The paths whose value starts at each (line, column): a block collection's with its first entry's."""
        self.unsafe = unsafe
        """Lines inside a multi-line value or key."""

    @classmethod
    def of(cls, doc: Document) -> _Lines:
        if doc.text.startswith("\ufeff") or _syntax(doc).shares_values(doc.text):
            return cls(True, {}, {}, frozenset())
        keys: dict[tuple[int, int], Path] = {}
        values: dict[tuple[int, int], list[Path]] = {}
        unsafe: set[int] = set()
        lines = doc.text.split("\n")
        containers = set(_containers(doc.data, ()))
        for path, span in doc.positions.items():
            key, value = span.key, span.value
            if key is not None:
                keys[(key.line, key.column)] = path
                if span.key_end is not None and span.key_end.line != key.line:
                    unsafe.update(range(key.line, span.key_end.line + 1))
            if value is None:
                continue
            values.setdefault((value.line, value.column), []).append(path)
            end = span.value_end
            if end is None or end.line == value.line:
                continue
            if path in containers and lines[value.line - 1][value.column - 1 : value.column] not in ("[", "{"):
                continue  # a block collection: its lines are its entries'
            unsafe.update(range(value.line, end.line + (end.column > 1)))  # a block scalar ends a line below
        return cls(False, keys, values, frozenset(unsafe))

    def moved(self, old: Mapping[Path, Span], new: Mapping[Path, Span]) -> _Lines:
        """The index after the keys and values of `old` moved to `new`."""
        if all((old[p].key, old[p].value) == (new[p].key, new[p].value) for p in new):
            return self
        keys, values = dict(self.keys), {k: list(v) for k, v in self.values.items()}
        for path, span in old.items():
            if span.key is not None:
                keys.pop((span.key.line, span.key.column), None)
            if span.value is not None:
                values[(span.value.line, span.value.column)].remove(path)
        for path, span in new.items():
            if span.key is not None:
                keys[(span.key.line, span.key.column)] = path
            if span.value is not None:
                values.setdefault((span.value.line, span.value.column), []).append(path)
        return _Lines(False, keys, values, self.unsafe)


def _containers(data: Any, path: Path) -> Iterator[Path]:
    if isinstance(data, dict):
        yield path
        for k, v in data.items():
            yield from _containers(v, (*path, k))
    elif isinstance(data, list):
        yield path
        for i, v in enumerate(data):
            yield from _containers(v, (*path, i))


def _reread_line(kept: _Kept, text: str) -> _Kept | None:
    """`kept` after the edit that made `text`, with only the edited line parsed again; None when the whole
    text must be parsed (see the module's docstring)."""
    old = kept.text
    start, old_end, new_end = changed(old, text)
    if "\n" in old[start:old_end] or "\n" in text[start:new_end]:
        return None
    begin = old.rfind("\n", 0, start) + 1
    old_stop = old.find("\n", old_end)
    if old_stop < 0:
        return None
    before, after = old[begin:old_stop], text[begin : old_stop + new_end - old_end]
    if _indent(before) != _indent(after) and before.strip() and after.strip():
        return None  # the indentation may say which collection the line belongs to
    lines = kept.lines
    line = old.count("\n", 0, begin) + 1
    if lines.shared or line in lines.unsafe:
        return None
    edit = _syntax(kept.doc).reread_line(kept.doc, line, before, after, lines.keys, lines.values)
    return kept.edited(text, edit) if edit is not None else None


def _syntax(doc: Document) -> Syntax:
    return FORMATS[doc.format].syntax()


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]
