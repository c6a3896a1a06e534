"""Quick fixes, each proven before it is offered: the buffer the fix produces is checked again, and
the fix is shown only when the problem it is for is gone (and, for a changed value, no new error
appears).

- an unknown key renamed to the one its message suggests, or moved to the section it belongs to;
- a value set to the one its message suggests (an enum value a typo meant, the number a quoted
  number holds, the nearest value within a bound);
- a value a rule reads (a parallel degree, a width) set to the nearest value that passes;
- a family's legacy keys migrated, as `trainspec migrate` would;
- a `# trainspec: ignore[rule]` comment, in formats with comments.

Fixes come from what a diagnostic carries (`Diagnostic.suggestion`), never from its English, and
from everything `trainspec check` reports, whatever `rulesOnly` leaves for other servers to publish.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from trainspec.editor.lsp.analysis import Analysis
from trainspec.editor.lsp.convert import to_lsp
from trainspec.editor.lsp.quoting import written
from trainspec.editor.lsp.text import Edit, apply, line_edits
from trainspec.read.suppressions import directive
from trainspec.spec.codes import UNUSED_SUPPRESSION, Flag, has_flag
from trainspec.spec.diagnostics import Diagnostic, Move, SetValue, Severity
from trainspec.spec.document import Document, ReadError
from trainspec.spec.formats import FORMATS, JSON
from trainspec.spec.layout_space import divisors
from trainspec.spec.paths import Path, format_path
from trainspec.spec.schema import get
from trainspec.spec.wording import show
from trainspec.write.migrate import MigrateError, migrate

if TYPE_CHECKING:
    from trainspec.spec.formats import Syntax

LEGACY_RULE = "legacy-key-migrated"
MAX_TRIES = 10
"""Values tried per config path for one diagnostic (each try is one check of the buffer)."""


@dataclass(frozen=True)
class Fix:
    title: str
    edits: tuple[Edit, ...]
    strict: bool = False
    """A changed value: offered only when it brings no new error at all."""
    preferred: bool = False


def code_actions(analysis: Analysis, uri: str, first_line: int, last_line: int) -> list[lsp.CodeAction]:
    """The proven fixes for the diagnostics on lines `first_line`..`last_line` (0-based): for every one
    `trainspec check` reports, published here or left to a schema server (`rulesOnly`)."""
    out: list[lsp.CodeAction] = []
    offered: set[tuple[str, tuple[Edit, ...]]] = set()
    migrated = False
    published = set(map(id, analysis.diagnostics))
    for d in analysis.reported:
        line = (d.line or 1) - 1
        if not first_line <= line <= last_line:
            continue
        shown = [to_lsp(d, analysis.source, uri, analysis.family)] if id(d) in published else None
        fixes = list(_fixes(analysis, d))
        if d.rule == LEGACY_RULE and not migrated:
            fixes[:0] = _migration(analysis)
            migrated = True
        for fix in fixes:
            if (fix.title, fix.edits) not in offered and _proven(analysis, d, fix):
                offered.add((fix.title, fix.edits))
                edit = lsp.WorkspaceEdit(changes={uri: [analysis.source.text_edit(e) for e in fix.edits]})
                out.append(
                    lsp.CodeAction(
                        title=fix.title,
                        kind=lsp.CodeActionKind.QuickFix,
                        diagnostics=shown,
                        edit=edit,
                        is_preferred=fix.preferred or None,
                    )
                )
    return out


def _fixes(analysis: Analysis, d: Diagnostic) -> Iterator[Fix]:
    if d.line is None or has_flag(d.rule, Flag.FILE_NOT_CHECKED) or d.severity is Severity.NOTE:
        return
    if isinstance(d.suggestion, Move):
        yield from _rename(analysis, d, d.suggestion.to)
    elif isinstance(d.suggestion, SetValue):
        yield from _suggested_value(analysis, d, d.suggestion)
    yield from _values(analysis, d)
    if d.rule != UNUSED_SUPPRESSION.id:
        yield from _suppression(analysis, d)


def _proven(analysis: Analysis, d: Diagnostic, fix: Fix) -> bool:
    """The problem is gone from the buffer the fix produces, and nothing broke."""
    after = analysis.recheck(apply(analysis.text, fix.edits))
    problem = (d.rule, d.path)
    if sum((x.rule, x.path) == problem for x in after) >= sum((x.rule, x.path) == problem for x in analysis.reported):
        return False
    before = {(x.rule, x.path) for x in analysis.reported}
    new = [x for x in after if (x.rule, x.path) not in before]
    return not any(has_flag(x.rule, Flag.BREAKS_DOCUMENT) or (fix.strict and x.is_error) for x in new)


# -- unknown keys --------------------------------------------------------------------------------


def _rename(analysis: Analysis, d: Diagnostic, target: Path) -> Iterator[Fix]:
    """The key at the diagnostic's path renamed (a sibling) or moved (elsewhere) to `target`."""
    doc = analysis.resolved.document
    path = d.path
    if doc is None or not path or not target:
        return
    span = doc.positions.get(path)
    if span is None or span.key is None or not isinstance(target[-1], str):
        return
    source = analysis.source
    line, column = span.key.line - 1, span.key.column - 1
    end = source.token_end(line, column)
    written = source.line(line)[column:end]
    name = _key_text(target[-1], written)
    if target[:-1] == path[:-1]:
        edit = Edit(source.offset(line, column), source.offset(line, end), name)
        yield Fix(f"Rename `{path[-1]}` to `{target[-1]}`", (edit,), preferred=True)
        return
    if span.value is None or span.value.line != span.key.line:
        return
    text = source.line(line)
    moved = (text[:column] + name + text[end:]).lstrip()
    insert = _insertion(analysis, doc, target, moved)
    if insert is not None:
        remove = Edit(source.offset(line, 0), source.offset(line + 1, 0), "")
        yield Fix(f"Move `{format_path(path)}` to `{format_path(target)}`", (remove, insert), preferred=True)


def _key_text(key: str, written: str) -> str:
    """`key` written the way the key it replaces was (quoted if that one was, or if it must be)."""
    quote = written[:1] if written[:1] in "\"'" else ""
    if not quote and not re.fullmatch(r"[A-Za-z0-9_-]+", key):
        quote = '"'
    return f"{quote}{key}{quote}"


def _insertion(analysis: Analysis, doc: Document, target: Path, line_text: str) -> Edit | None:
    """An edit adding `line_text` (one entry line) where `target` belongs, as the buffer's format places it."""
    if any(isinstance(p, int) for p in target[:-1]):
        return None
    text = analysis.source.text
    found = _syntax(doc).insertion(text, doc.positions, target, line_text)
    if found is None:
        return None
    at, new = found
    return Edit(at, at, _ending(text, at) + new)


def _syntax(doc: Document) -> Syntax:
    return FORMATS[doc.format].syntax()


def _ending(text: str, at: int) -> str:
    """A line break to put first when inserting at `at` of a text whose last line has none."""
    return "\n" if at == len(text) and text and not text.endswith("\n") else ""


# -- values ------------------------------------------------------------------------------------------


def _suggested_value(analysis: Analysis, d: Diagnostic, suggested: SetValue) -> Iterator[Fix]:
    """The value the diagnostic suggests, written in place of the one there."""
    doc = analysis.resolved.document
    if doc is None or suggested.path not in doc.positions:
        return
    edit = _set_value(analysis, doc, suggested.path, written(analysis.source, doc, suggested.path, suggested.value))
    if edit is not None:
        title = f"Set {format_path(suggested.path)} = {show(suggested.value)}"  # the value, whatever its quoting
        yield Fix(title, (edit,), strict=True, preferred=True)


def _values(analysis: Analysis, d: Diagnostic) -> Iterator[Fix]:
    """The nearest values, per integer the rule reads, that make the rule pass."""
    resolved = analysis.resolved
    family = analysis.family
    rule = next((r for r in family.rules if r.id == d.rule), None) if family is not None else None
    if rule is None or resolved.config is None or resolved.document is None:
        return
    ints: dict[Path, int] = {}
    for path in rule.parsed_paths:
        value = get(resolved.config, path)
        if isinstance(value, int) and not isinstance(value, bool):
            ints[path] = value
    for path, value in ints.items():
        others = [v for p, v in ints.items() if p != path]
        found = 0
        for candidate in _candidates(value, others, resolved.world_size)[:MAX_TRIES]:
            edit = _set_value(analysis, resolved.document, path, str(candidate))
            if edit is None:
                break
            fix = Fix(f"Set {format_path(path)} = {candidate}", (edit,), strict=True)
            if _proven(analysis, d, fix):
                yield fix
                found += 1
                if found == 2:
                    break


def _candidates(value: int, others: Sequence[int], world_size: int | None) -> list[int]:
    """Divisors and nearby multiples of the other values (and the world size), 1 and -1 (a degree some
    families derive), nearest first."""
    found = {1, -1}
    for other in [*others, *([world_size] if world_size else [])]:
        if 0 < other <= 10**9:
            found.update(divisors(other))
            if value > 0:
                found.update(m for m in ((value // other) * other, (value // other + 1) * other) if m > 0)
    if world_size and others and all(o > 0 for o in others) and world_size % math.prod(others) == 0:
        found.add(world_size // math.prod(others))
    found.discard(value)
    return sorted(found, key=lambda c: (abs(c - value), c))


def _set_value(analysis: Analysis, doc: Document, path: Path, value: str) -> Edit | None:
    source = analysis.source
    span = doc.positions.get(path)
    if span is not None and span.value is not None:
        line, column = span.value.line - 1, span.value.column - 1
        return Edit(source.offset(line, column), source.offset(line, source.token_end(line, column)), value)
    return _insertion(analysis, doc, path, _syntax(doc).entry(_key_text(str(path[-1]), ""), value))


# -- legacy keys and suppressions ------------------------------------------------------------------


def _migration(analysis: Analysis) -> list[Fix]:
    family = analysis.family
    if family is None or not family.migrations:
        return []
    try:
        done = migrate(analysis.file, family.id, text=analysis.text)
    except (MigrateError, ReadError):
        return []
    if done.new_text is None or done.failed:
        return []
    return [Fix("Migrate legacy keys to their current place", line_edits(analysis.text, done.new_text))]


def _suppression(analysis: Analysis, d: Diagnostic) -> Iterator[Fix]:
    doc = analysis.resolved.document
    comment = FORMATS.get(doc.format, JSON).comment if doc is not None else None
    if comment is None or d.line is None:
        return
    source = analysis.source
    line = d.line - 1
    text = source.line(line)
    existing = directive(comment).search(text)
    if existing is not None:
        at = source.offset(line, existing.end(1))
        edit = Edit(at, at, f", {d.rule}")
    elif comment not in text:
        at = source.offset(line, len(text))
        edit = Edit(at, at, f"  {comment} trainspec: ignore[{d.rule}]")
    else:
        indent = text[: len(text) - len(text.lstrip())]
        at = source.offset(line, 0)
        edit = Edit(at, at, f"{indent}{comment} trainspec: ignore[{d.rule}]\n")
    yield Fix(f"Suppress `{d.rule}` on this line", (edit,))
