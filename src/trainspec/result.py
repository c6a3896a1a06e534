"""What checking one file came to: the one result type of the API, the runner and every reporter."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from .diagnostics import Diagnostic

if TYPE_CHECKING:
    from .document import Document
    from .families import Family


@dataclass
class Result:
    """One file's diagnostics, and (in the process that checked it) the config it resolved to.

    `world_size` is the size the world-size rules ran at when there was one
    (given, or derived from the config). `lines` holds the source lines the
    diagnostics point at, so a reporter can quote them without reading the
    file again. `skipped` says why a file a directory walk or glob found was not
    checked (it belongs to no known family); reports list it apart, never as a problem.
    """

    file: str
    family: Family | None
    diagnostics: list[Diagnostic]
    config: dict[str, Any] | None = None
    world_size: int | None = None
    document: Document | None = field(default=None, repr=False, compare=False)
    lines: dict[int, str] = field(default_factory=dict, repr=False)
    skipped: str = ""

    @property
    def ok(self) -> bool:
        return not any(d.is_error for d in self.diagnostics)

    def for_report(self) -> Result:
        """The part a report needs, light enough to send between processes: no config, no document."""
        lines = dict(self.lines)
        if self.document is not None:
            text = self.document.text.splitlines()
            wanted = {n for d in self.diagnostics for n in d.lines() if 0 < n <= len(text)}
            lines.update((n, text[n - 1]) for n in wanted)
        return replace(self, config=None, document=None, lines=lines)
