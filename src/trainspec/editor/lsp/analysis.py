"""What the server knows about one buffer: the settings it is checked with, and its one check: what
`trainspec check` reports for its text, with the document and resolved config behind that report.

Every check goes through `runner.check_file` with the buffer's text in
`Options.texts`, so whatever decides the options of a file on the command line
decides them here too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

from trainspec.editor.lsp.anchor import anchored
from trainspec.editor.lsp.carry import carried
from trainspec.editor.lsp.reparse import Parses
from trainspec.editor.lsp.schema_servers import Association, Left, associations, left, without_left
from trainspec.editor.lsp.scope import is_config
from trainspec.editor.lsp.text import Source
from trainspec.engine.runner import Options, check_file
from trainspec.spec.diagnostics import Diagnostic
from trainspec.spec.family import Family
from trainspec.spec.result import Outcome, Result
from trainspec.spec.world_sizes import MAX_WORLD_SIZES


@dataclass(frozen=True)
class Settings:
    """The client's `trainspec` settings; values of the wrong type are ignored, not fatal."""

    family: str | None = None
    world_sizes: tuple[int, ...] = ()
    overrides: tuple[str, ...] = ()
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    rules_only: bool | None = None
    """True: publish only what a schema server cannot (rules, hooks, dialect notes), and complete nothing;
    False: publish everything; None (not set): leave to a schema server what it reports for the buffer
    (`schema_servers.left`)."""
    schema_servers: frozenset[str] = frozenset()
    """The formats a schema server serves beside trainspec in the client (`schemaServers`)."""
    associations: tuple[Association, ...] = ()
    """The files the client's schema settings tie to a schema (`yaml.schemas` and the like)."""
    debounce: float = 0.03
    """Seconds of quiet after a change before the buffer's diagnostics are published (it is checked meanwhile)."""
    inlay_hints: bool = False
    """Show each section's unwritten keys and their resolved values as inlay hints."""

    @classmethod
    def from_client(cls, raw: Any, before: Settings | None = None) -> Settings:
        """Settings from `{"trainspec": {...}}` or the bare `{...}` a client sends (beside `trainspec`, the
        sections of the schema servers' settings). The formats the client said it serves with a schema
        server (`schemaServers`, in its initialization options) stay when settings that do not name
        them change (`before`)."""
        found = associations(raw) if isinstance(raw, Mapping) else ()
        if isinstance(raw, Mapping) and isinstance(raw.get("trainspec"), Mapping):
            raw = raw["trainspec"]
        if not isinstance(raw, Mapping):
            return cls(schema_servers=before.schema_servers if before else frozenset(), associations=found)
        servers = raw.get("schemaServers")
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
            rules_only=raw["rulesOnly"] if isinstance(raw.get("rulesOnly"), bool) else None,
            schema_servers=frozenset(s for s in servers if isinstance(s, str))
            if isinstance(servers, list)
            else before.schema_servers
            if before is not None
            else frozenset(),
            associations=found,
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
    """One version of one buffer, checked once: its diagnostics, document and resolved config all come from
    that one check."""

    def __init__(
        self, file: str, text: str, settings: Settings, encoding: str, previous: Analysis | None = None
    ) -> None:
        self.file = file
        self.text = text
        self.settings = settings
        self.source = Source(text, encoding)
        self.options = settings.options(file, text)
        self.parses: Parses = previous.parses if previous is not None and previous.file == file else Parses()
        """The buffer's parse, kept from the analysis of its `previous` version: an edit of one line of a
        YAML buffer re-reads that line only (`reparse`)."""
        self.checked = check_file(file, replace(self.options, parser=self.parses.parse))
        """The buffer's check: what `trainspec check` reports, with the document and config behind it."""
        self.family: Family | None = self.checked.family
        self.reported = self.checked.diagnostics
        """What `trainspec check` reports."""
        as_read = self.parses.document(file, text)
        self.left: Left = left(
            settings.rules_only, settings.schema_servers, settings.associations, file, as_read, self.family
        )
        """What a schema server beside trainspec reports for this buffer, which trainspec then does not."""
        found = (
            self._shown(anchored(self.checked.diagnostics, file, text, as_read))
            if is_config(file, text, self.checked)
            else []
        )
        kept = previous.good if previous is not None and previous.file == file else None
        self.good: tuple[str, list[Diagnostic]] | None
        if self.checked.document is None and self.checked.outcome is Outcome.SYNTAX:
            self.good = kept if kept is not None and previous is not None and previous.settings == settings else None
            if self.good is not None:
                found = [*found, *carried(self.good[1], self.good[0], text)]
        else:
            self.good = (text, found)
        """The text of the last version that parsed, and what was shown for it (kept while the buffer does
        not parse, for `carry`)."""
        self.diagnostics = found
        """What the client is shown: nothing for a file that is no config, notes at the keys they are about,
        what a schema server reports left to it; while the buffer does not parse, its syntax error and the
        diagnostics of the last version that did, but those on the lines changed since."""

    def _shown(self, found: list[Diagnostic]) -> list[Diagnostic]:
        return without_left(found, self.left, self.family)

    @cached_property
    def resolved(self) -> Result:
        """The file's document, family and resolved config (defaults and derived values filled): the check's
        own, unless the project configuration could not be applied, when it is the buffer checked without it."""
        if self._project_unusable:
            return check_file(self.file, replace(self.options, use_project=False))
        return self.checked

    def without_line(self, line: int) -> Result:
        """The check of the text with 0-based `line` emptied, as this buffer's family: where a half-typed line
        is all that keeps the buffer from parsing, this still finds its family and config."""
        lines = self.text.split("\n")
        if 0 <= line < len(lines):
            lines[line] = ""
        text = "\n".join(lines)
        options = replace(
            self.options,
            family=self.family or self.options.family,
            texts={self.file: text},
            use_project=not self._project_unusable,
            layout_hints=False,  # completion reads the config, not the diagnostics
        )
        return check_file(self.file, options)

    @property
    def _project_unusable(self) -> bool:
        return self.checked.outcome is Outcome.UNUSABLE_SETTINGS and self.checked.document is None

    def recheck(self, text: str) -> list[Diagnostic]:
        """What `trainspec check` reports for another text of the same file (to prove a fix)."""
        return check_file(self.file, replace(self.options, texts={self.file: text})).diagnostics
