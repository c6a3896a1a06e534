"""What the server knows about one buffer: the settings it is checked with, what `trainspec check`
reports for its text, and (when asked) the document and resolved config behind that report.

Every check goes through `runner.check_file` with the buffer's text in
`Options.texts`, so whatever decides the options of a file on the command line
decides them here too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

from ..catalogue import family_rules
from ..codes import Flag, has_flag
from ..diagnostics import Diagnostic
from ..errors import TrainspecError
from ..families import Family
from ..pipeline import check_path
from ..result import Result
from ..runner import Options, check_file
from ..world_sizes import MAX_WORLD_SIZES
from .anchor import anchored
from .scope import is_config
from .text import Source


@dataclass(frozen=True)
class Settings:
    """The client's `trainspec` settings; values of the wrong type are ignored, not fatal."""

    family: str | None = None
    world_sizes: tuple[int, ...] = ()
    overrides: tuple[str, ...] = ()
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    rules_only: bool = False
    """Publish only what a schema server cannot (rules, hooks, dialect notes), and complete nothing."""
    debounce: float = 0.03
    """Seconds of quiet after a change before the buffer is checked."""
    inlay_hints: bool = False
    """Show each section's unwritten keys and their resolved values as inlay hints."""

    @classmethod
    def from_client(cls, raw: Any) -> Settings:
        """Settings from `{"trainspec": {...}}` or the bare `{...}` a client sends."""
        if isinstance(raw, Mapping) and isinstance(raw.get("trainspec"), Mapping):
            raw = raw["trainspec"]
        if not isinstance(raw, Mapping):
            return cls()
        sizes = raw.get("worldSize", ())
        sizes = [sizes] if isinstance(sizes, int) else sizes
        debounce = raw.get("debounceMs")
        return cls(
            family=raw["family"] if isinstance(raw.get("family"), str) and raw["family"] else None,
            world_sizes=tuple(s for s in sizes if isinstance(s, int) and not isinstance(s, bool) and s >= 1)[
                :MAX_WORLD_SIZES
            ]
            if isinstance(sizes, list)
            else (),
            overrides=_strings(raw.get("set")),
            select=_strings(raw.get("select")),
            ignore=_strings(raw.get("ignore")),
            rules_only=raw.get("rulesOnly") is True,
            inlay_hints=raw.get("inlayHints") is True,
            debounce=debounce / 1000 if isinstance(debounce, int | float) and 0 <= debounce <= 5000 else 0.03,
        )

    def options(self, file: str, text: str) -> Options:
        """The options `trainspec check FILE` would use, with the buffer's text: the project configuration
        governing the file applies, and these settings act as the command line's."""
        return Options(
            family=self.family,
            overrides=self.overrides,
            world_sizes=self.world_sizes,
            select=self.select,
            ignore=self.ignore,
            texts={file: text},
            use_project=True,
            fallback_sizes=True,
        )


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


class Analysis:
    """One version of one buffer, checked once; the resolved document is computed when a feature needs it."""

    def __init__(self, file: str, text: str, settings: Settings, encoding: str) -> None:
        self.file = file
        self.text = text
        self.settings = settings
        self.source = Source(text, encoding)
        self.options = settings.options(file, text)
        result = check_file(file, self.options)
        self.family: Family | None = result.family
        self.reported = result.diagnostics
        """What `trainspec check` reports."""
        self.diagnostics = (
            self._shown(anchored(result.diagnostics, file, text)) if is_config(file, text, result) else []
        )
        """What the client is shown: nothing for a file that is no config, notes at the keys they are about,
        and `rulesOnly` leaves out what the schema servers report."""

    def _shown(self, found: list[Diagnostic]) -> list[Diagnostic]:
        if not self.settings.rules_only:
            return found
        schema = {r.id for r in family_rules(self.family) if r.source == "schema"} if self.family else set()
        return [d for d in found if not has_flag(d.rule, Flag.SCHEMA_SERVERS_REPORT) and d.rule not in schema]

    @cached_property
    def resolved(self) -> Result:
        """The file's document, family and resolved config (defaults and derived values filled)."""
        return self._resolve(self.text)

    def without_line(self, line: int) -> Result:
        """The resolved check of the text with 0-based `line` emptied: where a half-typed line is all that
        keeps the buffer from parsing, this still finds its family and config."""
        lines = self.text.split("\n")
        if 0 <= line < len(lines):
            lines[line] = ""
        return self._resolve("\n".join(lines))

    def _resolve(self, text: str) -> Result:
        try:
            options = self.options.for_file(self.file)
        except TrainspecError:  # an unusable project configuration: the diagnostics already say so
            options = self.options
        return check_path(
            self.file,
            family=self.family or options.family,
            overrides=options.overrides,
            world_size=options.world_sizes,
            text=text,
            fallback_sizes=options.fallback_sizes,
        )

    def recheck(self, text: str) -> list[Diagnostic]:
        """What `trainspec check` reports for another text of the same file (to prove a fix)."""
        return check_file(self.file, replace(self.options, texts={self.file: text})).diagnostics
