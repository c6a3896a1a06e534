"""Diagnostics: what trainspec says about a config, as plain data.

Detection (readers, schema, rules) produces diagnostics; ranking and
presentation live elsewhere (reporters), so every stage can collect all
problems instead of stopping at the first.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from trainspec.spec.escaping import terminal
from trainspec.spec.paths import Path, format_path, parse_path


class Severity(enum.StrEnum):
    """How much a diagnostic matters: only errors fail a check."""

    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


class Move(NamedTuple):
    """The key a diagnostic is about belongs at `to` (a rename when only its last key differs)."""

    to: Path


class SetValue(NamedTuple):
    """The value at `path` should be `value`: the allowed value a typo meant, the number a quoted number
    holds, the nearest value within a bound."""

    path: Path
    value: Any


Suggestion = Move | SetValue
"""What a message proposes, as data: an editor offers it as a fix without reading the English."""


def suggestion_data(suggestion: Suggestion | None) -> dict[str, Any] | None:
    """A suggestion as the JSON and SARIF reports write it (docs/ci.md): `{"kind": "move", "to": PATH}`
    or `{"kind": "set-value", "config_path": PATH, "value": VALUE}`; None for none."""
    if isinstance(suggestion, Move):
        return {"kind": "move", "to": shown_path(suggestion.to)}
    if isinstance(suggestion, SetValue):
        return {"kind": "set-value", "config_path": shown_path(suggestion.path), "value": suggestion.value}
    return None


def shown_path(path: Path) -> str:
    """A diagnostic's path as reports print it: the dotted path, or nothing for the whole document."""
    return format_path(path) if path else ""


def read_shown_path(text: str) -> Path:
    """A path as `shown_path` printed it (a report read back, e.g. another rank's)."""
    return parse_path(text) if text else ()


@dataclass(frozen=True)
class Related:
    """Another place a diagnostic involves (e.g. the second key of a rule).

    `label` says in a few words what is there (`n_heads = 40`); reporters print it
    beside the place. The end is exclusive, as in `Diagnostic`.
    """

    path: Path
    line: int | None
    column: int | None
    end_line: int | None = None
    end_column: int | None = None
    label: str = ""

    @property
    def config_path(self) -> str:
        """The path as text, as every report prints it."""
        return shown_path(self.path)

    def to_dict(self) -> dict[str, object]:
        return {
            "config_path": self.config_path,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "label": self.label,
        }


class Join(enum.StrEnum):
    """Where a clause stands in the message, and so how it reads."""

    BEFORE = "before"
    """`clause: finding`: what the finding holds under (at world size 8, on ranks 1, 3)."""
    ASIDE = "aside"
    """`finding (clause)`: a remark on it (what the loader reads, which override set a value)."""
    AFTER = "after"
    """`finding; clause`: a sentence that follows from it (the nearest layout that passes)."""


class Clause(NamedTuple):
    """Words a later stage adds to a finding. Kept apart from the finding's own text, so that a stage adds
    without rewriting the English and an output can tell the finding from what was said about it."""

    text: str
    join: Join = Join.ASIDE


def at_world_size(size: int) -> Clause:
    """What a finding of a check at several world sizes starts with."""
    return Clause(f"at world size {size}", Join.BEFORE)


def _render(text: str, clauses: tuple[Clause, ...]) -> str:
    """A finding's text with its clauses: each clause before it wraps what was there when it was added
    (the last added comes first); the others follow in the order they were added."""
    before = "".join(f"{c.text}: " for c in reversed(clauses) if c.join is Join.BEFORE)
    after = "".join(
        f" ({c.text})" if c.join is Join.ASIDE else f"; {c.text}" for c in clauses if c.join is not Join.BEFORE
    )
    return before + text + after


@dataclass(frozen=True)
class Diagnostic:
    """One problem (or note) in one config file.

    `line`/`column` are 1-based and point into `file`; both are None when the
    problem has no place in the file (then `origin` says where it came from,
    e.g. an override on the command line). `end_line`/`end_column` close the
    range the diagnostic covers (the key or value it is about), exclusive: the
    position just after its last character. `world_size` is set when a check
    ran at several world sizes and this diagnostic holds at one of them.
    `path` is the config path it is about (empty: the whole document);
    `suggestion` is the change its message proposes, if any. `text` is the finding
    in its own words and `clauses` what later stages said about it; `message`
    renders the two, and is what every output prints.
    """

    file: str
    line: int | None
    column: int | None
    path: Path
    rule: str
    severity: Severity
    text: str
    origin: str | None = None
    related: tuple[Related, ...] = field(default=())
    world_size: int | None = None
    end_line: int | None = None
    end_column: int | None = None
    suggestion: Suggestion | None = field(default=None, compare=False)  # what the message says, as data
    clauses: tuple[Clause, ...] = ()
    world_sizes: tuple[int, ...] = ()
    """Every size a finding holds at, when a check at many sizes reports it once (`world_size` is the first)."""

    @property
    def message(self) -> str:
        """The whole message: the finding's text with its clauses (just the text when it has none)."""
        return _render(self.text, self.clauses) if self.clauses else self.text

    @property
    def names_world_size(self) -> bool:
        """The message starts with its world size (a check at several sizes), so a display need not add it."""
        return self.world_size is not None and at_world_size(self.world_size) in self.clauses

    def adding(self, *clauses: Clause) -> Diagnostic:
        """This finding with more said about it (the text stays as the finding's own)."""
        return replace(self, clauses=(*self.clauses, *clauses))

    @property
    def config_path(self) -> str:
        """The path as text, as every report prints it."""
        return shown_path(self.path)

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def location(self) -> str:
        """`file:line:col`, or `file: <origin>` for a value from elsewhere, or just the file."""
        if self.line is not None:
            return f"{self.file}:{self.line}:{self.column}"
        return f"{self.file}: {self.origin}" if self.origin else self.file

    def one_line(self) -> str:
        """`location: severity[rule] message`, the line every plain output uses, escaped for a terminal
        (a key or file name holding a newline or an escape sequence cannot start a line or move the cursor)."""
        return terminal(f"{self.location()}: {self.severity.value}[{self.rule}] {self.message}")

    def lines(self) -> set[int]:
        """Every line of the file this diagnostic points at: its own and its related locations'."""
        return {n for n in (self.line, *(r.line for r in self.related)) if n is not None}

    def sort_key(self) -> tuple[str, bool, int, int, str, int, str]:
        """By file, then position; diagnostics without a place in the file come last."""
        return (
            self.file,
            self.line is None,
            self.line or 0,
            self.column or 0,
            self.rule,
            self.world_size or 0,
            self.message,
        )

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "config_path": self.config_path,
            "rule": self.rule,
            "severity": self.severity.value,
            "message": self.message,
            "origin": self.origin,
            "related": [r.to_dict() for r in self.related],
        }
        if self.world_size is not None:
            out["world_size"] = self.world_size
        if self.world_sizes:
            out["world_sizes"] = list(self.world_sizes)
        return out
