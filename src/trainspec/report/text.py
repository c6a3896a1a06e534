"""One line per problem, `file:line:col: severity[rule-id] message`, then a summary.

On a terminal, or with `--color always` or `--color never`, each located
problem is followed by the lines it points at, as rustc shows them: its own
range underlined with `^`, each related place with `-` and a short label
(`n_heads = 40`). Colour is used on a terminal or with `--color always`,
unless `--color never` or NO_COLOR (https://no-color.org) says otherwise.
Piped output with `--color auto` stays one line per problem, for grep and editors.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TextIO

from trainspec.report.reporters import Tally
from trainspec.spec.diagnostics import Diagnostic, Severity
from trainspec.spec.escaping import terminal
from trainspec.spec.result import Result

_RESET = "\033[0m"
_BOLD = "\033[1m"
_DIM = "\033[2m"
_SEVERITY_COLORS = {Severity.ERROR: "\033[1;31m", Severity.WARNING: "\033[1;33m", Severity.NOTE: "\033[1;36m"}


def format_line(d: Diagnostic, color: bool = False) -> str:
    if not color:
        return d.one_line()
    where = d.location()
    level = f"{_SEVERITY_COLORS[d.severity]}{d.severity.value}{_RESET}"
    return f"{_BOLD}{terminal(where)}{_RESET}: {level}{_DIM}[{d.rule}]{_RESET} {terminal(d.message)}"


@dataclass(frozen=True)
class Mark:
    """One place to underline in an excerpt: `^` for the diagnostic's own, `-` with a label for a related one."""

    line: int
    column: int
    end_line: int | None
    end_column: int | None
    char: str
    label: str = ""

    def width(self, text: str) -> int:
        """How many characters to underline: to the end of the range, or of the line for a range
        that goes on to later lines; at least one; counted as the range is shown (escaped)."""
        stop = self.end_column - 1 if self.end_line == self.line and self.end_column else len(text.rstrip())
        if self.end_line is None:
            return 1
        covered = text[self.column - 1 : stop]
        return max(stop - (self.column - 1), 1) + len(terminal(covered)) - len(covered)


def marks(d: Diagnostic) -> list[Mark]:
    """The diagnostic's own place and each related place in the file, in line order."""
    found = []
    if d.line is not None and d.column is not None:
        found.append(Mark(d.line, d.column, d.end_line, d.end_column, "^"))
    for r in d.related:
        if r.line is not None and r.column is not None and (r.line, r.column) != (d.line, d.column):
            found.append(Mark(r.line, r.column, r.end_line, r.end_column, "-", terminal(r.label or r.config_path)))
    return sorted(found, key=lambda m: (m.line, m.column))


def excerpt(lines: dict[int, str], found: Sequence[Mark], color: bool = False) -> list[str]:
    """Each marked source line, numbered, with its marks underlined below it (tabs kept so they line up,
    control characters escaped and underlined as written); `...` stands for the lines skipped between two
    marked ones."""
    shown = [m for m in found if m.line in lines]
    if not shown:
        return []
    gutter = " " * len(str(max(m.line for m in shown)))
    out = [f" {gutter} |"]
    previous = None
    for m in shown:
        raw = lines[m.line]
        text = terminal(raw)
        if m.line != previous:
            if previous is not None and m.line > previous + 1:
                out.append(f" {gutter} ...")
            out.append(f" {str(m.line).rjust(len(gutter))} | {text}")
            previous = m.line
        before = terminal(raw[: max(m.column - 1, 0)])
        pad = "".join(c if c == "\t" else " " for c in before)
        under = m.char * m.width(raw)
        if color:
            under = f"{_BOLD}{under}{_RESET}"
        out.append(f" {gutter} | {pad}{under}" + (f" {m.label}" if m.label else ""))
    return out


def use_color(choice: str, out: TextIO) -> tuple[bool, bool]:
    """(show excerpts, use colour) for `--color choice` writing to `out`."""
    tty = bool(getattr(out, "isatty", lambda: False)())
    excerpts = choice != "auto" or tty
    colour = choice == "always" or (choice == "auto" and tty and not os.environ.get("NO_COLOR"))
    return excerpts, colour


def report(results: Iterable[Result], out: TextIO, *, color: str = "auto") -> None:
    """Each file's diagnostics as soon as its result arrives, then the summary."""
    excerpts, colour = use_color(color, out)
    counted = Tally()
    for result in map(Result.for_report, results):  # the lines to quote, from a result kept whole too
        for d in sorted(counted.add(result).diagnostics, key=Diagnostic.sort_key):
            out.write(format_line(d, colour) + "\n")
            if excerpts:
                quoted = {m.line: result.lines[m.line] for m in marks(d) if m.line in result.lines}
                shown = excerpt(quoted, marks(d), colour)
                out.write("".join(line + "\n" for line in shown) + ("\n" if shown else ""))
        out.flush()
    out.write(counted.summary() + "\n")
