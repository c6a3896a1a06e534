"""Hover: what a key means (documentation, type, default, bounds), the rules that read it, the value it
resolves to in this config, and the explanation of any diagnostic under the cursor."""

from __future__ import annotations

import json
from dataclasses import replace
from functools import cache
from typing import Any

from lsprotocol import types as lsp

from trainspec.editor.lsp.analysis import Analysis
from trainspec.editor.lsp.convert import SEVERITY_NAMES, severity_of, span
from trainspec.report.sarif import help_markdown
from trainspec.rules.catalogue import family_rules, lookup
from trainspec.spec.diagnostics import Diagnostic
from trainspec.spec.document import Document
from trainspec.spec.family import Family
from trainspec.spec.paths import Path, format_path
from trainspec.spec.schema import get
from trainspec.validate.fields import Field, fields

MAX_RESOLVED = 24
"""Unwritten keys of a section listed with their resolved values."""


def hover(analysis: Analysis, line: int, column: int) -> lsp.Hover | None:
    """Markdown for the 0-based code-point position, or None when there is nothing to say."""
    parts = [_explain(analysis, d) for d in _diagnostics_at(analysis, line, column)]
    doc = analysis.resolved.document
    found = key_at(doc, line + 1, column + 1) if doc is not None else None
    if found is not None and analysis.family is not None:
        parts.append(describe(analysis, analysis.family, found))
    parts = [p for p in dict.fromkeys(parts) if p]
    if not parts:
        return None
    return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value="\n\n---\n\n".join(parts)))


def _diagnostics_at(analysis: Analysis, line: int, column: int) -> list[Any]:
    out = []
    for d in analysis.diagnostics:
        if d.line is None:
            continue
        start_line, start, end_line, end = span(
            analysis.source, d.line, d.column, (getattr(d, "end_line", None), getattr(d, "end_column", None))
        )
        if (start_line, start) <= (line, column) <= (end_line, end):
            out.append(d)
    return out


def _explain(analysis: Analysis, d: Diagnostic) -> str:
    """The rule's documentation under the severity the diagnostic is published with, and its example only
    when that is a config of the buffer's family and format (an engine rule's example is one family's)."""
    info = lookup(d.rule, analysis.family)
    if info is None:
        return ""
    family, doc = analysis.family, analysis.resolved.document
    example = family.examples.get(d.rule) if family is not None else None
    if example is not None and (doc is None or example.fmt != doc.format):
        example = None
    severity = SEVERITY_NAMES[severity_of(d)]
    return f"**{severity}[{info.id}]**\n\n{help_markdown(replace(info, example=example))}"


def key_at(doc: Document, line: int, column: int) -> Path | None:
    """The config path whose key (or list item) is written on `line` at or before `column` (1-based)."""
    best: tuple[int, Path] | None = None
    for path, where in doc.positions.items():
        start = where.key or where.value
        if start is None or start.line != line or start.column > column or not path:
            continue
        if best is None or start.column > best[0] or (start.column == best[0] and len(path) > len(best[1])):
            best = (start.column, path)
    return best[1] if best else None


@cache
def _fields(family: Family) -> dict[str, Field]:
    out: dict[str, Field] = {}
    for row in fields(family.schema):
        out.setdefault(row.path, row)
    return out


def _row_path(path: Path) -> str:
    return format_path(path, pattern=True)


def describe(analysis: Analysis, family: Family, path: Path) -> str:
    """The field's documentation, the rules that read it and its value in this config."""
    name = _row_path(path)
    row = _fields(family).get(name)
    lines = [f"**`{format_path(path)}`**"]
    if row is not None:
        facts = [f"`{row.type}`"]
        if row.default:
            facts.append(f"default `{row.default}`")
        if row.bounds:
            facts.append(row.bounds)
        if row.variant:
            facts.append(f"when {row.variant}")
        lines[0] += " · " + " · ".join(facts)
        node = family.schema.node_at(path, analysis.resolved.config)
        text = (node or {}).get("markdownDescription") or row.description
        if text:
            lines.append(str(text))
    config = analysis.resolved.config
    if config is not None:
        value = get(config, path)
        if isinstance(value, dict):
            lines.extend(_unwritten(analysis, family, path, value))
        elif value is not None or _has(config, path):
            lines.append(f"In this config: `{show(value)}`")
    readers = [r for r in family_rules(family) if name in r.paths]
    if readers:
        lines.append("Rules reading it: " + ", ".join(f"`{r.id}`" for r in readers))
    return "\n\n".join(lines)


def unwritten(analysis: Analysis, family: Family, path: Path, section: dict[str, Any]) -> list[tuple[str, Any, str]]:
    """The keys of a section the file does not write: (key, resolved value, "default" or "derived")."""
    doc = analysis.resolved.document
    rows = _fields(family)
    out = []
    for key, value in section.items():
        child = (*path, key)
        if doc is not None and child in doc.positions:
            continue
        row = rows.get(_row_path(child))
        default = row.default if row is not None else ""
        out.append((key, value, "default" if default and default == json.dumps(value) else "derived"))
    return out


def _unwritten(analysis: Analysis, family: Family, path: Path, section: dict[str, Any]) -> list[str]:
    out = [f"- `{key}` = `{show(value)}` ({how})" for key, value, how in unwritten(analysis, family, path, section)]
    if not out:
        return []
    more = [f"- … {len(out) - MAX_RESOLVED} more"] if len(out) > MAX_RESOLVED else []
    return ["Not written, resolved to:\n" + "\n".join(out[:MAX_RESOLVED] + more)]


def _has(config: Any, path: Path) -> bool:
    parent = get(config, path[:-1]) if path[:-1] else config
    return isinstance(parent, dict) and path[-1] in parent


def show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "…"
