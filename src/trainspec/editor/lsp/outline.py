"""The outline of a buffer (document symbols): its sections and keys as the file writes them, nested,
each with its value when it is a scalar, so an editor can list and jump to them."""

from __future__ import annotations

from typing import Any

from lsprotocol import types as lsp

from trainspec.editor.lsp.text import Source
from trainspec.read.files import parse
from trainspec.spec.document import Document, Pos, ReadError
from trainspec.spec.paths import Path
from trainspec.spec.schema import get

MAX_SYMBOLS = 5000
"""Keys listed at most; a generated file of more is outlined in part."""
_SCALARS = {None: "null", True: "true", False: "false"}
_KINDS = {bool: lsp.SymbolKind.Boolean, int: lsp.SymbolKind.Number, float: lsp.SymbolKind.Number}


def outline(file: str, source: Source) -> list[lsp.DocumentSymbol]:
    """The buffer's keys as a tree; empty while it does not parse (an editor keeps the last outline)."""
    try:
        doc = parse(file, source.text)
    except ReadError:
        return []
    nodes: dict[Path, lsp.DocumentSymbol] = {}
    roots: list[lsp.DocumentSymbol] = []
    ends = _ends(doc)
    for path, span in list(doc.positions.items())[:MAX_SYMBOLS]:
        value = get(doc.data, path) if path else None
        if not path or (span.key is None and not isinstance(value, dict | list)):
            continue  # the document itself, or a scalar in a list
        start = span.key or span.value
        if start is None:
            continue
        name_end = span.key_end or (span.value_end if span.value_end and span.value_end.line == start.line else start)
        symbol = lsp.DocumentSymbol(
            name=str(path[-1]) if span.key is not None else f"[{path[-1]}]",
            detail=_detail(value),
            kind=_kind(value),
            range=_range(source, start, ends.get(path, name_end)),
            selection_range=_range(source, start, name_end),
        )
        nodes[path] = symbol
        parent = next((nodes[path[:n]] for n in range(len(path) - 1, 0, -1) if path[:n] in nodes), None)
        if parent is None:
            roots.append(symbol)
        else:
            parent.children = [*(parent.children or []), symbol]
    return roots


def _ends(doc: Document) -> dict[Path, Pos]:
    """Where each entry ends: after its last descendant (a TOML table's header ends on its own line)."""
    ends: dict[Path, Pos] = {}
    for path, span in doc.positions.items():
        end = span.value_end or span.key_end
        if end is None:
            continue
        for n in range(1, len(path) + 1):
            known = ends.get(path[:n])
            if known is None or (end.line, end.column) > (known.line, known.column):
                ends[path[:n]] = end
    return ends


def _range(source: Source, start: Pos, end: Pos) -> lsp.Range:
    if (end.line, end.column) < (start.line, start.column):
        end = start
    return source.range(start.line - 1, start.column - 1, end.line - 1, end.column - 1)


def _kind(value: Any) -> lsp.SymbolKind:
    if isinstance(value, dict):
        return lsp.SymbolKind.Module
    if isinstance(value, list):
        return lsp.SymbolKind.Array
    if value is None:
        return lsp.SymbolKind.Null
    return _KINDS.get(type(value), lsp.SymbolKind.String)


def _detail(value: Any) -> str | None:
    if isinstance(value, dict | list):
        return None
    text = _SCALARS.get(value, "") if value is None or isinstance(value, bool) else str(value)
    text = f'"{text}"' if isinstance(value, str) else text
    return text if len(text) <= 60 else text[:57] + "…"
