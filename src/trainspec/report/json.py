"""One JSON document: every diagnostic as an object (with the change its message suggests, as data), plus
a summary."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TextIO

from trainspec.report.reporters import checked, counts, sorted_diagnostics
from trainspec.spec.diagnostics import Diagnostic, suggestion_data
from trainspec.spec.escaping import json_text
from trainspec.spec.result import Result


def report(results: Iterable[Result], out: TextIO) -> None:
    results = list(results)
    doc = {
        "version": 1,
        "diagnostics": [diagnostic_json(d) for d in sorted_diagnostics(checked(results))],
        "skipped": [{"file": r.file, "reason": r.skipped} for r in results if r.skipped],
        "world_sizes": {r.file: list(r.world_sizes) for r in checked(results) if r.world_sizes},
        "summary": counts(results),
    }
    out.write(json_text(doc, indent=2) + "\n")


def diagnostic_json(d: Diagnostic) -> dict[str, object]:
    """One diagnostic as `check --format json` writes it (a sweep's variants included)."""
    return {**d.to_dict(), "suggestion": suggestion_data(d.suggestion)}
