"""Reporters turn results into output; the checker never formats anything."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TextIO

from ..checker import Result
from ..diagnostics import Diagnostic, Severity

Reporter = Callable[[Sequence[Result], TextIO], None]


def sorted_diagnostics(results: Sequence[Result]) -> list[Diagnostic]:
    return sorted((d for r in results for d in r.diagnostics), key=Diagnostic.sort_key)


def counts(results: Sequence[Result]) -> dict[str, int]:
    ds = [d for r in results for d in r.diagnostics]
    return {
        "files": len(results),
        "errors": sum(d.severity is Severity.ERROR for d in ds),
        "warnings": sum(d.severity is Severity.WARNING for d in ds),
        "files_with_errors": sum(not r.ok for r in results),
    }


def get_reporter(name: str) -> Reporter:
    if name == "json":
        from .json import report
    else:
        from .text import report  # type: ignore[assignment]
    return report
