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

from ..checker import Result
from ..diagnostics import Diagnostic, Severity
from . import sorted_diagnostics, summary

_RESET = "\033[0m"
_BOLD = "\033[1m"
_DIM = "\033[2m"
_SEVERITY_COLORS = {Severity.ERROR: "\033[1;31m", Severity.WARNING: "\033[1;33m", Severity.NOTE: "\033[1;36m"}


def format_line(d: Diagnostic, color: bool = False) -> str:
    if d.line is not None:
        where = f"{d.file}:{d.line}:{d.column}"
    elif d.origin:
        where = f"{d.file}: {d.origin}"
    else:
        where = d.file
    if not color:
        return f"{where}: {d.severity.value}[{d.rule}] {d.message}"
    level = f"{_SEVERITY_COLORS[d.severity]}{d.severity.value}{_RESET}"
    return f"{_BOLD}{where}{_RESET}: {level}{_DIM}[{d.rule}]{_RESET} {d.message}"


def excerpt(line_text: str, line: int, column: int, color: bool = False) -> list[str]:
    """The source line, numbered, and a caret under `column` (tabs kept so the caret lines up)."""
    number = str(line)
    pad = "".join(c if c == "\t" else " " for c in line_text[: max(column - 1, 0)])
    caret = f"{_BOLD}^{_RESET}" if color else "^"
    return [f" {number} | {line_text}", f" {' ' * len(number)} | {pad}{caret}"]


class _Sources:
    """Lines of the files shown, read once each; a file that cannot be read shows no excerpt."""

    def __init__(self) -> None:
        self.lines: dict[str, list[str] | None] = {}

    def line(self, file: str, number: int) -> str | None:
        if file not in self.lines:
            try:
                with open(file, encoding="utf-8-sig", errors="replace") as f:
                    self.lines[file] = f.read().splitlines()
            except OSError:
                self.lines[file] = None
        lines = self.lines[file]
        return lines[number - 1] if lines is not None and 0 < number <= len(lines) else None


def use_color(choice: str, out: TextIO) -> tuple[bool, bool]:
    """(show excerpts, use colour) for `--color choice` writing to `out`."""
    tty = bool(getattr(out, "isatty", lambda: False)())
    excerpts = choice == "always" or (choice == "auto" and tty)
    colour = choice == "always" or (choice == "auto" and tty and not os.environ.get("NO_COLOR"))
    return excerpts, colour


def report(results: Sequence[Result], out: TextIO, *, color: str = "auto") -> None:
    excerpts, colour = use_color(color, out)
    sources = _Sources()
    for d in sorted_diagnostics(results):
        out.write(format_line(d, colour) + "\n")
        if excerpts and d.line is not None and d.column is not None:
            text = sources.line(d.file, d.line)
            if text is not None:
                out.write("\n".join(excerpt(text, d.line, d.column, colour)) + "\n")
    out.write(summary(results) + "\n")
