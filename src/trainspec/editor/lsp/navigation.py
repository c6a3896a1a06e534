"""Go to definition and find references between the keys a rule reads together.

From a key a diagnostic is about, or one of the keys listed as its related places, definition
jumps to the diagnostic's other places (from `distributed.tp` to `model.n_heads` and
`model.n_kv_heads`), and references lists them all. On a key with no diagnostic the rules that
read it lead the same way to the other keys they read that the file writes.
"""

from __future__ import annotations

from lsprotocol import types as lsp

from trainspec.editor.lsp.analysis import Analysis
from trainspec.editor.lsp.convert import span
from trainspec.editor.lsp.hover import key_at
from trainspec.rules.catalogue import family_rules
from trainspec.spec.diagnostics import Diagnostic, Related
from trainspec.spec.paths import Path, parse_path

Place = tuple[int, ...]
"""0-based start line, start column, end line, end column, in code points."""


def related_places(analysis: Analysis, line: int, column: int) -> list[Place]:
    """Every place of the rule inputs that the key at the 0-based position is one of, that one first;
    empty when it is none."""
    for d in analysis.diagnostics:
        places = _places(analysis, d)
        here = next((p for p in places if _inside(p, line, column)), None)
        if here is not None and len(places) > 1:
            return [here, *(p for p in places if p != here)]
    return _rule_inputs(analysis, line, column)


def locations(analysis: Analysis, uri: str, places: list[Place]) -> list[lsp.Location]:
    return [lsp.Location(uri=uri, range=analysis.source.range(*p)) for p in places]


def _places(analysis: Analysis, d: Diagnostic) -> list[Place]:
    out: list[Place] = []
    wheres: list[Diagnostic | Related] = [d, *d.related]
    for where in wheres:
        if where.line is None:
            continue
        place = span(analysis.source, where.line, where.column, (where.end_line, where.end_column))
        if place not in out:
            out.append(place)
    return out


def _inside(place: Place, line: int, column: int) -> bool:
    return (place[0], place[1]) <= (line, column) <= (place[2], place[3])


def _rule_inputs(analysis: Analysis, line: int, column: int) -> list[Place]:
    doc, family = analysis.resolved.document, analysis.family
    if doc is None or family is None:
        return []
    path = key_at(doc, line + 1, column + 1)
    if path is None:
        return []
    name = ".".join(str(p) for p in path)
    inputs: list[Path] = [path]
    for rule in family_rules(family):
        if name in rule.paths:
            for other in rule.paths:
                try:
                    parsed = parse_path(other)
                except ValueError:
                    continue
                if parsed not in inputs and parsed in doc.positions:
                    inputs.append(parsed)
    if len(inputs) == 1:
        return []
    out: list[Place] = []
    for p in inputs:
        where = doc.positions[p]
        start, end = where.key or where.value, where.key_end or where.value_end
        if start is not None:
            stop = (end.line, end.column) if end is not None else (None, None)
            out.append(span(analysis.source, start.line, start.column, stop))
    return out
