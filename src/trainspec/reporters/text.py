"""One line per problem, `file:line:col: severity[rule-id] message`, then a summary."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from ..checker import Result
from ..diagnostics import Diagnostic
from . import counts, sorted_diagnostics


def format_line(d: Diagnostic) -> str:
    if d.line is not None:
        where = f"{d.file}:{d.line}:{d.column}"
    elif d.origin:
        where = f"{d.file}: {d.origin}"
    else:
        where = d.file
    return f"{where}: {d.severity.value}[{d.rule}] {d.message}"


def report(results: Sequence[Result], out: TextIO) -> None:
    for d in sorted_diagnostics(results):
        out.write(format_line(d) + "\n")
    c = counts(results)
    files = f"{c['files']} file{'s' if c['files'] != 1 else ''}"
    if c["errors"] or c["warnings"]:
        out.write(f"{c['errors']} error(s), {c['warnings']} warning(s) in {files}\n")
    else:
        out.write(f"{files} checked, no problems\n")
