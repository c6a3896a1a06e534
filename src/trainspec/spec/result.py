"""What checking one file came to: the one result type of the API, the runner and every reporter."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from trainspec.spec.diagnostics import Diagnostic

if TYPE_CHECKING:
    from trainspec.spec.device import Device
    from trainspec.spec.document import Document
    from trainspec.spec.family import Family


class Outcome(enum.Enum):
    """Whether the file was checked, and if not, what stopped it: set where that is found, so the runner
    and the commands read it instead of looking for ids among the diagnostics."""

    CHECKED = "checked"
    """Its family checked the document (it may have errors)."""
    UNREADABLE = "unreadable"
    """The file is missing or cannot be read."""
    SYNTAX = "syntax"
    """The text does not parse (or is not UTF-8)."""
    OVER_LIMIT = "over a limit"
    """The file is beyond a limit an untrusted input is held to (its size, a dotted key's parts): not parsed."""
    TOO_LARGE = "too large"
    """The document expands to more values than any config holds (YAML aliases repeating aliases)."""
    NOT_A_MAPPING = "not a mapping"
    """It parses, but its top level is not a table of sections."""
    UNCLAIMED = "unclaimed"
    """No family claims it (none was named)."""
    UNKNOWN_FAMILY = "unknown family"
    """The family named for it does not exist."""
    WRONG_FORMAT = "wrong format"
    """Its family does not read its format."""
    UNUSABLE_SETTINGS = "unusable settings"
    """The project configuration that governs it cannot be used."""
    UNUSABLE_DIRECTIVE = "unusable directive"
    """Its family directive names a family that does not exist or does not read its format."""
    UNUSABLE_SCHEMA = "unusable schema"
    """Its family's schema is not a usable JSON Schema."""
    CRASHED = "crashed"
    """trainspec failed while checking it (a bug)."""
    UNATTRIBUTED = "unattributed"
    """A walk, a glob or a hook found it, and it looks like a family's config, but no family claims it: not
    checked, and reported with an `unclaimed-config` warning (which fails the run only as an error, under
    --warnings-as-errors)."""
    SKIPPED = "skipped"
    """Left out on purpose (a directory walk found it, or --skip-unknown): `Result.skipped` says why."""

    @property
    def usage(self) -> bool:
        """The file was not checked for a reason outside its config (it is missing, unreadable or too large
        to read, no family is named or claims it, its project configuration or family schema is unusable):
        a usage problem, so the command exits with status 2 rather than 1."""
        return self in _USAGE


_USAGE = frozenset(
    {
        Outcome.UNREADABLE,
        Outcome.OVER_LIMIT,
        Outcome.UNCLAIMED,
        Outcome.UNKNOWN_FAMILY,
        Outcome.WRONG_FORMAT,
        Outcome.UNUSABLE_SETTINGS,
        Outcome.UNUSABLE_SCHEMA,
    }
)


def exit_status(outcome: Outcome, ok: bool) -> int:
    """A command's exit status for one file: 2 for a usage problem, else 1 when the file has errors or was
    not checked (even when --ignore hid why), else 0. A run's status is the highest of its files'."""
    if outcome.usage:
        return 2
    return 0 if ok and outcome in (Outcome.CHECKED, Outcome.SKIPPED, Outcome.UNATTRIBUTED) else 1


@dataclass
class Result:
    """One file's diagnostics, and (in the process that checked it) the config it resolved to.

    `world_size` is the size the world-size rules ran at when there was one
    (given, or derived from the config). `lines` holds the source lines the
    diagnostics point at, so a reporter can quote them without reading the
    file again. `skipped` says why a file a directory walk or glob found was not
    checked (it belongs to no known family); reports list it apart, never as a problem.
    `outcome` says whether the file was checked; when it was not, `reason` is what the
    diagnostic that stopped it says. `device` is the target GPU the check knew, if any.
    """

    file: str
    family: Family | None
    diagnostics: list[Diagnostic]
    config: dict[str, Any] | None = None
    world_size: int | None = None
    document: Document | None = field(default=None, repr=False, compare=False)
    lines: dict[int, str] = field(default_factory=dict, repr=False)
    skipped: str = ""
    outcome: Outcome = Outcome.CHECKED
    reason: str = ""
    device: Device | None = None
    world_sizes: tuple[int, ...] = ()
    """Every size the world-size rules ran at (none when they did not run), for the summary a report prints."""

    @property
    def ok(self) -> bool:
        return not any(d.is_error for d in self.diagnostics)

    @classmethod
    def not_checked(
        cls,
        outcome: Outcome,
        stopped: Diagnostic,
        before: list[Diagnostic] | None = None,
        document: Document | None = None,
        lines: dict[int, str] | None = None,
        family: Family | None = None,
    ) -> Result:
        """A file that could not be checked: what was found `before`, then the diagnostic that `stopped` it."""
        return cls(
            stopped.file,
            family,
            [*(before or ()), stopped],
            document=document,
            lines=lines or {},
            outcome=outcome,
            reason=stopped.message,
        )

    @property
    def exit_status(self) -> int:
        return exit_status(self.outcome, self.ok)

    def skip(self, why: str) -> Result:
        """This file left out of the report, with `why`."""
        return Result(self.file, None, [], skipped=why, outcome=Outcome.SKIPPED)

    def for_report(self) -> Result:
        """The part a report needs, light enough to send between processes: no config, no document."""
        if self.document is None and self.config is None:
            return self  # light already (a worker's result, or one that stopped before reading)
        lines = dict(self.lines)
        if self.document is not None:
            text = self.document.text.splitlines()
            wanted = {n for d in self.diagnostics for n in d.lines() if 0 < n <= len(text)}
            lines.update((n, text[n - 1]) for n in wanted)
        return replace(self, config=None, document=None, lines=lines)
