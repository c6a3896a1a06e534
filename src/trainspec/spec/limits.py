"""Budgets: how much work a few bytes of input may ask of trainspec.

A config, a project file or an overlay comes from whoever opened the pull request,
so every place where the work grows faster than the input is bounded here. Each
limit has a default well above what a real training run needs and one way to raise
it, the same for the command line, the language server and the Python API: an
environment variable (`TRAINSPEC_MAX_FILE_BYTES=67108864 trainspec check big.yaml`).
docs/guarantees.md lists them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from trainspec.spec.errors import TrainspecError


class LimitExceeded(TrainspecError):
    """A budget ran out; the message names the limit, its value and how to raise it (exit status 2)."""


@dataclass(frozen=True)
class Limit:
    """One budget: `variable` raises it, `what` says in words what it counts."""

    variable: str
    default: int
    what: str

    @property
    def value(self) -> int:
        """The limit in force: the environment variable when set, else the default."""
        text = os.environ.get(self.variable, "").strip().replace("_", "")
        if not text:
            return self.default
        if not (text.isascii() and text.isdigit()) or len(text.lstrip("0")) > 18 or int(text) < 1:
            shown = os.environ[self.variable]
            shown = repr(shown) if len(shown) <= 40 else f"{shown[:20]!r}… ({len(shown):,} characters)"
            raise LimitExceeded(f"{self.variable}={shown} must be a whole number from 1 to 10^18")
        return int(text)

    def exceeded(self, found: str) -> str:
        """A sentence for input over the limit: what was found, the limit, and how to raise it."""
        return f"{found}, over the limit of {self.value:,} {self.what} (set {self.variable} to raise it)"

    def check(self, amount: int, found: str) -> None:
        """Raise LimitExceeded when `amount` is over the limit; `found` says what it is."""
        if amount > self.value:
            raise LimitExceeded(self.exceeded(found))


FILE_BYTES = Limit("TRAINSPEC_MAX_FILE_BYTES", 1024 * 1024, "bytes")
"""One input file: a config, standard input, a project configuration or an overlay (1 MiB; real
configs are a few kilobytes, and a mebibyte of unknown keys already takes about two seconds of CPU)."""
KEY_PARTS = Limit("TRAINSPEC_MAX_KEY_PARTS", 100, "parts in one dotted key, table header or override path")
"""TOML dotted keys (`a.b.c = 1`): the standard library's reader spends memory quadratic in their length."""
DIAGNOSTICS = Limit("TRAINSPEC_MAX_DIAGNOSTICS", 1000, "diagnostics per file")
"""Reported per file, and schema problems explained per file; the rest are counted in one diagnostic."""
LAYOUTS = Limit("TRAINSPEC_MAX_LAYOUTS", 200_000, "candidate layouts")
"""Tried by one `plan` (over all its world sizes) or one nearest-layout hint: a world size with many
divisors (735,134,400 has over 700 million ways to split into six degrees) would search for hours."""
LAYOUT_WORLD_SIZE = Limit("TRAINSPEC_MAX_LAYOUT_WORLD_SIZE", 1 << 24, "GPUs")
"""The largest world size a layout is searched at (finding its divisors takes time growing with its root)."""
SWEEP_RUNS = Limit("TRAINSPEC_MAX_SWEEP", 10_000, "variant checks")
"""`check --sweep`: variants × world sizes."""
LSP_MESSAGE_BYTES = Limit("TRAINSPEC_LSP_MAX_MESSAGE_BYTES", 64 * 2**20, "bytes")
"""One language-server message's body (64 MiB): far above any config (a message carries at most one
buffer's text); a longer one is skipped unread."""

SCHEMA_NODES = Limit("TRAINSPEC_MAX_SCHEMA_NODES", 200_000, "schema nodes (each `$ref` counted as what it refers to)")
"""An overlay's patched schema, with every `$ref` expanded: what one value may be checked against.
Forty `anyOf`s of two references to the next would otherwise ask for 2^40 checks of one value."""

VALUES = Limit("TRAINSPEC_MAX_VALUES", 50_000, "values in one YAML document")
"""Values of one YAML document, aliases expanded (real configs hold a few hundred): PyYAML composes each
into a node before trainspec reads it, about 30 µs a value, and aliases that repeat aliases (a "billion
laughs" file) would ask for billions."""
PROJECT_ENTRIES = Limit("TRAINSPEC_MAX_PROJECT_ENTRIES", 1000, "items in one list of a project configuration")
"""`configs`, `exclude`, and each `set`, `paths`, `select` and `ignore` of a project configuration: every
entry, override and glob costs work for each file a run checks."""
PROJECT_WORLD_SIZES = Limit("TRAINSPEC_MAX_PROJECT_WORLD_SIZES", 262_144, "world sizes in one project configuration")
"""All the world sizes of a project configuration's entries together (each list holds at most 65,536):
3,000 entries of `"1..65536"` would otherwise hold 200 million numbers."""

ALL = (
    FILE_BYTES,
    KEY_PARTS,
    DIAGNOSTICS,
    LAYOUTS,
    LAYOUT_WORLD_SIZE,
    SWEEP_RUNS,
    LSP_MESSAGE_BYTES,
    SCHEMA_NODES,
    PROJECT_ENTRIES,
    PROJECT_WORLD_SIZES,
)
