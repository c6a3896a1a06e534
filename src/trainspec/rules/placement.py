"""Where a diagnostic points: the override that set a value, the key or value itself, or the nearest
place the user can see, and the other keys it involves, each labelled with its value."""

from __future__ import annotations

from typing import Any

from trainspec.spec.diagnostics import Diagnostic, Related, Severity, Suggestion
from trainspec.spec.document import Document
from trainspec.spec.formats import FORMATS
from trainspec.spec.paths import Path
from trainspec.spec.rules import ABSENT
from trainspec.spec.wording import show


def place(
    doc: Document,
    path: Path,
    rule: str,
    severity: Severity,
    message: str,
    *,
    at_key: bool = True,
    related: tuple[Related, ...] = (),
    anchor: Path | None = None,
    fallback: Path | None = None,
    entry: bool = False,
    suggestion: Suggestion | None = None,
) -> Diagnostic:
    """A diagnostic about `path`, placed where the user can see the cause.

    In order: the override `path` came from; `path` itself; `anchor` (for a
    missing key, the key whose value requires it); the nearest written
    ancestor of `path`; `fallback` (another key the rule read); where a new
    top-level entry goes (`where_to_add`).
    The range covers the key (`at_key`), the value, or with `entry` both.
    """
    part = "entry" if entry else "key" if at_key else "value"
    origin = doc.origin(path)
    pos = None
    if origin is None and not doc.is_written(path):
        for other in (anchor, None, fallback):
            if other is None:  # the nearest written ancestor
                pos = doc.range_of(path, part)
            elif doc.is_written(other) or doc.origin_within(other):
                origin = doc.origin_within(other)
                pos = None if origin else doc.range_of(other, part)
            if origin or pos:
                break
    elif origin is None:
        pos = doc.range_of(path, part)
    line, column = (pos.start.line, pos.start.column) if pos else (None, None) if origin else where_to_add(doc)
    end = pos.end if pos else None
    return Diagnostic(
        doc.file,
        line,
        column,
        path,
        rule,
        severity,
        message,
        origin=origin,
        related=related,
        end_line=end.line if end else None,
        end_column=end.column if end else None,
        suggestion=suggestion,
    )


def where_to_add(doc: Document) -> tuple[int, int]:
    """Where a key none of whose sections the file has would be written: just after the file's last
    line of content (TOML, YAML), or at what closes the top-level mapping there (a JSON object's brace,
    `Syntax.CLOSING`); line 1 of an empty file."""
    lines = doc.text.splitlines()
    last = next((n for n in range(len(lines), 0, -1) if lines[n - 1].strip()), 0)
    if not last:
        return 1, 1
    text = lines[last - 1].rstrip()
    fmt = FORMATS.get(doc.format)  # None for data handed over in memory, which has no text
    closing = fmt.syntax().CLOSING if fmt is not None else ""
    return last, (len(text) - len(closing) + 1 if closing and text.endswith(closing) else len(text) + 1)


def related_place(doc: Document, path: Path, value: Any) -> Related:
    """`path` as a related location, labelled `key = value`, or with the override that set it."""
    origin = doc.origin(path)
    found = None if origin else doc.range_of(path, "entry")
    key = path[-1] if path else ""
    label = f"{key} = {show(value)}" if not isinstance(value, (dict, list)) and value is not ABSENT else str(key)
    if origin:
        label += f", from {origin}"
    start, end = (found.start, found.end) if found else (None, None)
    return Related(
        path,
        start.line if start else None,
        start.column if start else None,
        end.line if end else None,
        end.column if end else None,
        label,
    )


def first_written(doc: Document, paths: tuple[Path, ...]) -> Path:
    """The first of a rule's paths the user wrote (or overrode); else its first path."""
    for path in paths:
        if doc.is_written(path) or doc.origin_within(path):
            return path
    return paths[0]
