"""A string value written the way the file writes its strings, for the fixes that set one.

A YAML file may write its strings plain (`norm_type: rmsnorm`), in single or in double quotes. A
value that replaces another keeps that one's quoting: plain when YAML reads the new value plain as
the same string (not `on`, `1e-4` or `null`), else in the quotes most of the file's quoted strings
use; a quoted value keeps its quotes. A value written where there was none follows the file's most
common way of writing strings. A TOML literal string (`'...'`) stays one when the new value can be
one. Everything else is written as `show` writes values (JSON's double quotes).
"""

from __future__ import annotations

import json
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
    if doc.format == "toml":
        return f"'{value}'" if replaced == "'" and _literal_toml(value) else show(value)
    if doc.format != "yaml":
        return show(value)
    plain = FORMATS["yaml"].syntax().value_text(value) == value
    if replaced in _QUOTES:
        return _quoted(value, replaced)
    styles = _styles(source, doc)
    if replaced is None or replaced == "":  # nothing written there: as most of the file's strings
        most = styles.most_common(1)
        if most and most[0][0] in _QUOTES:
            return _quoted(value, most[0][0])
    if plain:
        return value
    return _quoted(value, "'" if styles["'"] > styles['"'] else '"')


def _quoted(value: str, quote: str) -> str:
    if quote == "'" and value.isprintable():
        return "'" + value.replace("'", "''") + "'"
    return json.dumps(value, ensure_ascii=False)  # JSON's escapes are YAML's double-quoted ones


def _literal_toml(value: str) -> bool:
    return "'" not in value and value.isprintable()


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
