"""Notes about the whole file placed at the keys they are about: `trainspec check` prints a file-level
note without a line, but an editor shows it at line 1, far from the keys that make it (the world size
SpecForge derives from `deployment.trainer`)."""

from __future__ import annotations

import re
from dataclasses import replace

from trainspec.read.files import parse
from trainspec.spec.diagnostics import Diagnostic, Severity
from trainspec.spec.document import Document, ReadError
from trainspec.spec.paths import parse_path

_PATH = re.compile(r"(?<![\w.`])[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)+")


def anchored(found: list[Diagnostic], file: str, text: str, doc: Document | None = None) -> list[Diagnostic]:
    """`found`, each file-level note moved to the key of the first config path its message names that
    the file `text` writes (or that path's nearest written section). `doc`: `text` parsed already."""
    if not any(_placeable(d) for d in found):
        return found  # then no parse is needed
    if doc is None:
        try:
            doc = parse(file, text)
        except ReadError:
            return found
    return [_anchor(d, doc) if _placeable(d) else d for d in found]


def _placeable(d: Diagnostic) -> bool:
    """A file-level note whose message names a config path."""
    return d.line is None and d.severity is Severity.NOTE and _PATH.search(d.message) is not None


def _anchor(d: Diagnostic, doc: Document) -> Diagnostic:
    for m in _PATH.finditer(d.message):
        try:
            path = parse_path(m.group())
        except ValueError:
            continue
        for n in range(len(path), 0, -1):
            where = doc.positions.get(path[:n])
            start = where.key or where.value if where is not None else None
            if start is not None:
                return replace(d, line=start.line, column=start.column)
    return d
