"""GitHub Actions workflow commands: one `::error`/`::warning`/`::notice` annotation per diagnostic.

GitHub shows each on the file and line in the pull request. Values are
escaped as the Actions toolkit does: `%`, CR and LF everywhere, and `:` and
`,` inside properties, which would otherwise end the property.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from ..diagnostics import Diagnostic, Severity
from ..result import Result
from . import relative_path, sorted_diagnostics, summary

COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def format_command(d: Diagnostic) -> str:
    props = [("file", relative_path(d.file))]
    if d.line is not None:
        props.append(("line", str(d.line)))
        if d.column is not None:
            props.append(("col", str(d.column)))
    props.append(("title", f"trainspec [{d.rule}]"))
    message = f"{d.origin}: {d.message}" if d.origin else d.message
    joined = ",".join(f"{k}={escape_property(v)}" for k, v in props)
    return f"::{COMMANDS[d.severity]} {joined}::{escape_data(message)}"


def report(results: Sequence[Result], out: TextIO) -> None:
    for d in sorted_diagnostics(results):
        out.write(format_command(d) + "\n")
    out.write(summary(results) + "\n")
