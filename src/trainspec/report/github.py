"""GitHub Actions workflow commands: one `::error`/`::warning`/`::notice` annotation per diagnostic.

GitHub shows each on the file and line in the pull request, over the
range it covers (`endLine`, and `endColumn` for a range within one line). Values are
escaped as the Actions toolkit does: `%`, CR and LF everywhere, and `:` and
`,` inside properties, which would otherwise end the property; any other
character a log must not receive raw is escaped as in text output
(`escaping.terminal`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TextIO

from trainspec.report.reporters import Tally, relative_path
from trainspec.spec.diagnostics import Diagnostic, Severity
from trainspec.spec.escaping import terminal
from trainspec.spec.result import Result

COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "notice"}


def escape_data(text: str) -> str:
    return terminal(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def format_command(d: Diagnostic) -> str:
    props = [("file", relative_path(d.file))]
    if d.line is not None:
        props.append(("line", str(d.line)))
        if d.end_line is not None:
            props.append(("endLine", str(d.end_line)))
        if d.column is not None:
            props.append(("col", str(d.column)))
            if d.end_line == d.line and d.end_column is not None and d.end_column > d.column:
                props.append(("endColumn", str(d.end_column - 1)))  # GitHub's end column is the last one
    props.append(("title", f"trainspec [{d.rule}]"))
    message = f"{d.origin}: {d.message}" if d.origin else d.message
    joined = ",".join(f"{k}={escape_property(v)}" for k, v in props)
    return f"::{COMMANDS[d.severity]} {joined}::{escape_data(message)}"


def report(results: Iterable[Result], out: TextIO) -> None:
    counted = Tally()
    for result in results:
        for d in sorted(counted.add(result).diagnostics, key=Diagnostic.sort_key):
            out.write(format_command(d) + "\n")
        out.flush()
    out.write(counted.summary() + "\n")
