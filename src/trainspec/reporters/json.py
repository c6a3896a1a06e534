"""One JSON document: every diagnostic as an object, plus a summary."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TextIO

from ..result import Result
from . import counts, sorted_diagnostics


def report(results: Sequence[Result], out: TextIO) -> None:
    doc = {
        "version": 1,
        "diagnostics": [d.to_dict() for d in sorted_diagnostics(results)],
        "summary": counts(results),
    }
    json.dump(doc, out, indent=2)
    out.write("\n")
