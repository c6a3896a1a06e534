"""A string value written the way the file writes its strings, for the fixes that set one.

The format decides (`Syntax.string_text`): YAML keeps the replaced value's quoting, or the file's most
common way of writing strings; TOML keeps a literal string literal. Other values are written as `show`
writes them (JSON's double quotes).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from trainspec.editor.lsp.text import Source
from trainspec.spec.document import Document
from trainspec.spec.formats import FORMATS
from trainspec.spec.paths import Path
from trainspec.spec.wording import show

_QUOTES = ("'", '"')


def written(source: Source, doc: Document, path: Path, value: Any) -> str:
    """`value` as the file would write it at `path` (replacing the value written there, if any)."""
    if not isinstance(value, str):
        return show(value)
    span = doc.positions.get(path)
    at = span.value if span is not None else None
    replaced = source.line(at.line - 1)[at.column - 1 : at.column] if at is not None else None
    return FORMATS[doc.format].syntax().string_text(value, replaced, lambda: _styles(source, doc))


def _styles(source: Source, doc: Document) -> Counter[str]:
    """How many of the file's strings are written plain (""), in single and in double quotes."""
    found: Counter[str] = Counter()
    positions = doc.positions
    for path in _strings(doc.data, ()):
        span = positions.get(path)
        if span is not None and span.value is not None:
            first = source.line(span.value.line - 1)[span.value.column - 1 : span.value.column]
            found[first if first in _QUOTES else ""] += 1
    return found


def _strings(data: Any, path: Path) -> Iterator[Path]:
    if isinstance(data, str):
        yield path
    elif isinstance(data, dict):
        for k, v in data.items():
            yield from _strings(v, (*path, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            yield from _strings(v, (*path, i))
