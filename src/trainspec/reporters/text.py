"""One line per problem, `file:line:col: severity[rule-id] message`, then a summary.

On a terminal (or with `--color always`) each located problem is followed by
its source line with a caret under the column, and colour is used unless
`--color never` or NO_COLOR (https://no-color.org) says otherwise. Piped
output stays one line per problem, for grep and editors.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TextIO

from ..diagnostics import Diagnostic, Severity
from ..result import Result
from . import sorted_diagnostics, summary

_RESET = "\033[0m"
_BOLD = "\033[1m"
_DIM = "\033[2m"
_SEVERITY_COLORS = {Severity.ERROR: "\033[1;31m", Severity.WARNING: "\033[1;33m", Severity.NOTE: "\033[1;36m"}


def format_line(d: Diagnostic, color: bool = False) -> str:
    if not color:
        return d.one_line()
    where = d.location()
    level = f"{_SEVERITY_COLORS[d.severity]}{d.severity.value}{_RESET}"
    return f"{_BOLD}{where}{_RESET}: {level}{_DIM}[{d.rule}]{_RESET} {d.message}"


def excerpt(line_text: str, line: int, column: int, color: bool = False) -> list[str]:
    """The source line, numbered, and a caret under `column` (tabs kept so the caret lines up)."""
    number = str(line)
    pad = "".join(c if c == "\t" else " " for c in line_text[: max(column - 1, 0)])
    caret = f"{_BOLD}^{_RESET}" if color else "^"
    return [f" {number} | {line_text}", f" {' ' * len(number)} | {pad}{caret}"]


def use_color(choice: str, out: TextIO) -> tuple[bool, bool]:
    """(show excerpts, use colour) for `--color choice` writing to `out`."""
    tty = bool(getattr(out, "isatty", lambda: False)())
    excerpts = choice == "always" or (choice == "auto" and tty)
    colour = choice == "always" or (choice == "auto" and tty and not os.environ.get("NO_COLOR"))
    return excerpts, colour


def report(results: Sequence[Result], out: TextIO, *, color: str = "auto") -> None:
    excerpts, colour = use_color(color, out)
    lines = {(r.file, n): text for r in results for n, text in r.lines.items()}
    for d in sorted_diagnostics(results):
        out.write(format_line(d, colour) + "\n")
        if excerpts and d.line is not None and d.column is not None:
            text = lines.get((d.file, d.line))
            if text is not None:
                out.write("\n".join(excerpt(text, d.line, d.column, colour)) + "\n")
    out.write(summary(results) + "\n")
