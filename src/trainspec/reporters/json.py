"""One JSON document: every diagnostic as an object, plus a summary."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TextIO

from ..result import Result
from . import checked, counts, sorted_diagnostics


def report(results: Iterable[Result], out: TextIO) -> None:
    results = list(results)
    doc = {
        "version": 1,
        "diagnostics": [d.to_dict() for d in sorted_diagnostics(checked(results))],
        "skipped": [{"file": r.file, "reason": r.skipped} for r in results if r.skipped],
        "summary": counts(results),
    }
    json.dump(doc, out, indent=2)
    out.write("\n")
