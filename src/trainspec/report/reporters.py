"""Reporters turn results into output; the checker never formats anything.

text (people), json (scripts), github (workflow annotations), sarif (code
scanning) and junit (CI test reports). Each is a function
`report(results, out)` over an iterable of results, which may include
skipped files; text and github print each file's diagnostics as soon as its
result arrives, the others build one document at the end. `get_reporter`
picks one by name.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import TextIO

from trainspec.spec.codes import WORLD_SIZE_UNKNOWN
from trainspec.spec.diagnostics import Diagnostic, Severity
from trainspec.spec.errors import InvalidValue
from trainspec.spec.escaping import terminal
from trainspec.spec.result import Result
from trainspec.spec.world_sizes import sizes_text

Reporter = Callable[[Iterable[Result], TextIO], None]


def _reporters() -> tuple[str, ...]:
    """The modules of this package besides this one, `text` first: each is a reporter (its `report`), so a new
    output format is one new module. Read from the folder, not imported: the command line lists them."""
    names = sorted(n[:-3] for n in os.listdir(os.path.dirname(__file__)) if n.endswith(".py") and n[0] != "_")
    return ("text", *(n for n in names if n not in ("text", "reporters")))


NAMES = _reporters()
"""The reporters, each a module of this package: `--format` offers exactly these."""


def sorted_diagnostics(results: Sequence[Result]) -> list[Diagnostic]:
    return sorted((d for r in results for d in r.diagnostics), key=Diagnostic.sort_key)


class Tally:
    """Counts for the summary line, kept as results stream past (nothing else is held)."""

    def __init__(self) -> None:
        self.files = self.errors = self.warnings = self.files_with_errors = 0
        self.skipped: list[tuple[str, str]] = []
        self.world_sizes: set[int] = set()
        self.sizeless = 0
        """Files whose world-size rules did not run for want of a size."""

    def add(self, result: Result) -> Result:
        if result.skipped:
            self.skipped.append((result.file, result.skipped))
            return result
        self.files += 1
        self.errors += sum(d.severity is Severity.ERROR for d in result.diagnostics)
        self.warnings += sum(d.severity is Severity.WARNING for d in result.diagnostics)
        self.files_with_errors += not result.ok
        self.world_sizes.update(result.world_sizes)
        self.sizeless += any(d.rule == WORLD_SIZE_UNKNOWN.id for d in result.diagnostics)
        return result

    def counts(self) -> dict[str, int]:
        return {
            "files": self.files,
            "errors": self.errors,
            "warnings": self.warnings,
            "files_with_errors": self.files_with_errors,
            "skipped": len(self.skipped),
        }

    def summary(self) -> str:
        files = f"{self.files} file{'s' if self.files != 1 else ''}"
        line = (
            f"{self.errors} error(s), {self.warnings} warning(s) in {files}"
            if self.errors or self.warnings
            else f"{files} checked, no problems"
        )
        if self.world_sizes:
            many = len(self.world_sizes) > 1
            line += f"; world size{'s' * many} {sizes_text(sorted(self.world_sizes))}"
            line += f" ({self.sizeless} file{'s' * (self.sizeless > 1)} without one)" if self.sizeless else ""
        elif self.sizeless:
            line += "; no world size, world-size rules not checked"
        if self.skipped:
            paths = ", ".join(terminal(relative_path(file)) for file, _ in self.skipped[:SKIPS_LISTED])
            more = f" and {len(self.skipped) - SKIPS_LISTED} more" if len(self.skipped) > SKIPS_LISTED else ""
            line += f"; {len(self.skipped)} skipped, no known family: {paths}{more}"
        return line


SKIPS_LISTED = 10
"""Skipped files named in the summary line; JSON lists them all, with the reason for each."""


def tally(results: Iterable[Result]) -> Tally:
    counted = Tally()
    for result in results:
        counted.add(result)
    return counted


def counts(results: Iterable[Result]) -> dict[str, int]:
    return tally(results).counts()


def summary(results: Iterable[Result]) -> str:
    return tally(results).summary()


def checked(results: Iterable[Result]) -> list[Result]:
    """The results of files that were checked (skipped ones left out)."""
    return [r for r in results if not r.skipped]


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
        raise InvalidValue(f"unknown output format {name!r}; known: {', '.join(NAMES)}")
    report = importlib.import_module(f"trainspec.report.{name}").report
    return partial(report, color=color) if name == "text" else report
