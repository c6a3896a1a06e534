"""Reporters turn results into output; the checker never formats anything.

text (people), json (scripts), github (workflow annotations), sarif (code
scanning) and junit (CI test reports). Each is a function
`report(results, out)`; `get_reporter` picks one by name.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TextIO

from ..diagnostics import Diagnostic, Severity
from ..result import Result

Reporter = Callable[[Sequence[Result], TextIO], None]

NAMES = ("text", "json", "github", "sarif", "junit")
"""The reporters, each a module of this package: `--format` offers exactly these."""


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


def summary(results: Sequence[Result]) -> str:
    c = counts(results)
    files = f"{c['files']} file{'s' if c['files'] != 1 else ''}"
    if c["errors"] or c["warnings"]:
        return f"{c['errors']} error(s), {c['warnings']} warning(s) in {files}"
    return f"{files} checked, no problems"


def relative_path(file: str) -> str:
    """`file` relative to the working directory when it lies below it, with forward slashes."""
    path = Path(file)
    if path.is_absolute():
        try:
            path = path.relative_to(Path.cwd())
        except ValueError:
            return path.as_posix()
    return Path(os.path.normpath(path)).as_posix()


def get_reporter(name: str, *, color: str = "auto") -> Reporter:
    if name not in NAMES:
        raise ValueError(f"unknown output format {name!r}; known: {', '.join(NAMES)}")
    report = importlib.import_module(f"{__name__}.{name}").report
    return partial(report, color=color) if name == "text" else report
