"""A progress line on stderr for long runs, only where a person watches it (a terminal)."""

from __future__ import annotations

import time
from typing import TextIO

DELAY = 1.0
"""Seconds before the line appears: short runs stay silent."""


class Progress:
    def __init__(self, total: int, stream: TextIO, what: str = "checked {done}/{total} files") -> None:
        self.what = what
        """The line, with `{done}` and `{total}` filled in (a plan counts world sizes, not files)."""
        self.total = total
        self.stream = stream
        self.done = 0
        self.start = time.monotonic()
        self.last = 0.0
        self.shown = False

    @classmethod
    def for_stream(cls, total: int, stream: TextIO, what: str = "checked {done}/{total} files") -> Progress | None:
        """A progress line, or None when `stream` is not a terminal."""
        isatty = getattr(stream, "isatty", None)
        return cls(total, stream, what) if isatty is not None and isatty() else None

    def advance(self) -> None:
        self.done += 1
        now = time.monotonic()
        if now - self.start >= DELAY and now - self.last >= 0.1:
            self.last = now
            self.shown = True
            self.stream.write("\rtrainspec: " + self.what.format(done=f"{self.done:,}", total=f"{self.total:,}"))
            self.stream.flush()

    def clear(self) -> None:
        """Take the line off the screen so output can be written; the next advance writes it again."""
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.last = 0.0

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
