"""What trainspec raises: every exception derives from `TrainspecError`, so one `except` catches them all.

Config problems are not exceptions inside trainspec (they are diagnostics,
collected); `ConfigError` exists for callers who want a typed model or
nothing, and carries every diagnostic.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # every module raises these errors, so this one imports nothing of trainspec
    from trainspec.spec.diagnostics import Diagnostic

SHOWN_ERRORS = 20


class TrainspecError(Exception):
    """The base of every exception trainspec raises on purpose."""

    @property
    def lines(self) -> tuple[str, ...]:
        """The message as the lines it is made of: a caller escapes each one, so a newline inside a value
        a repository wrote stays inside its line (`cli.complain`)."""
        return (str(self),)


class InvalidValue(TrainspecError, ValueError):
    """A value trainspec was handed cannot be used (a config path, a world size, a GPU, a memory size, an
    output format); a ValueError too, for callers that catch those."""


class InvalidType(TrainspecError, TypeError):
    """An argument of the wrong type (a config that is not a mapping, a path that is not a path); a
    TypeError too."""


class ConfigError(TrainspecError):
    """A config has errors; `diagnostics` holds all of them (and any warnings)."""

    def __init__(self, diagnostics: Sequence[Diagnostic]) -> None:
        self.diagnostics = list(diagnostics)
        errors = [d for d in self.diagnostics if d.is_error]
        lines = [d.one_line() for d in errors[:SHOWN_ERRORS]]
        more = [f"... and {len(errors) - SHOWN_ERRORS} more"] if len(errors) > SHOWN_ERRORS else []
        self._lines = (f"{len(errors)} error(s) in config:", *lines, *more)
        super().__init__("\n".join(self._lines))

    @property
    def lines(self) -> tuple[str, ...]:
        return self._lines


class RewriteError(TrainspecError):
    """Values cannot be written into a file without disturbing what is there."""


class ConfigWarning(UserWarning):
    """A warning diagnostic of a config that loaded: `trainspec.load` issues one per warning."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.one_line())
        self.diagnostic = diagnostic
