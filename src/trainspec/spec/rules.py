"""The rule API: what JSON Schema cannot say, as small named functions.

A rule declares the config paths it reads; the engine passes their values
(defaults filled) as arguments, in order. Declaring the paths lets the engine
skip a rule whose inputs already failed the schema, point the diagnostic at
the keys involved, and list every rule with what it touches.

    @rule("tp-divides-heads", "error", "model.n_heads", "distributed.tp")
    def tp_divides_heads(n_heads: int, tp: int) -> Iterator[str]:
        "Tensor parallelism splits attention heads across ranks."
        if tp > 1 and n_heads % tp:
            yield f"model.n_heads = {n_heads} is not divisible by distributed.tp = {tp}"

A rule yields messages (placed at the first of its paths the file writes,
with its other paths as related locations) or `Violation`s that name their
own place and the paths they involve: the engine never reads the message to
find them. World-size rules take the world size as a keyword argument
`world_size` and are skipped, with a note, when none is known; device rules
take the target GPU (a `device.Device`) as `device`, and are skipped, with a
note, when no target is given (`--gpu h100`). A path
declared `optional` does not stop the rule when it failed the schema: the
rule receives ABSENT for it and checks the rest.
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from trainspec.spec.device import Device
from trainspec.spec.diagnostics import Severity
from trainspec.spec.errors import InvalidValue
from trainspec.spec.layout_space import divisors
from trainspec.spec.paths import Path, parse_path

MIRRORS = re.compile(r"Mirrors `(\w+)\.(\w+)`\.")
"""The last line of the documentation of a rule that reproduces one check of the trainer's own loader."""


def mirrored(doc: str) -> str | None:
    """The `Class.method` (or `module.function`) of the loader a rule's or notice's documentation names on its
    last line ("Mirrors `Class.method`."), None when it names none."""
    lines = doc.strip().splitlines()
    match = MIRRORS.fullmatch(lines[-1].strip()) if lines else None
    return f"{match[1]}.{match[2]}" if match else None


ABSENT: Any = type("Absent", (), {"__repr__": lambda self: "ABSENT", "__bool__": lambda self: False})()
"""Passed to `raw` rules for a key the file does not write."""


@dataclass(frozen=True)
class Violation:
    """A rule's finding; `at` is the config path to point at (default: the first of the rule's paths
    the file writes).

    `related` are the other paths it involves, shown beside it (and named when an override set
    them); by default, every path the rule reads. A finding about some of its inputs says which.
    """

    message: str
    at: Path | None = None
    related: tuple[Path, ...] | None = None


@dataclass(frozen=True)
class Context:
    """What a check knows besides the config, for the rules that ask: the world sizes it runs at, the
    target device, the extra names a project overlay registers (`registries`)."""

    world_sizes: tuple[int, ...] = ()
    device: Device | None = None
    registries: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def world_size(self) -> int | None:
        """The one world size a rule runs at; None with none, or several (each is run on its own)."""
        return self.world_sizes[0] if len(self.world_sizes) == 1 else None

    def at(self, world_size: int | None) -> Context:
        """This context at one world size (or none)."""
        return replace(self, world_sizes=() if world_size is None else (world_size,))


@dataclass(frozen=True)
class Rule:
    id: str
    severity: Severity
    paths: tuple[str, ...]
    check: Callable[..., Iterable[str | Violation]]
    needs_world_size: bool = False
    needs_registries: bool = False
    needs_device: bool = False
    raw: bool = False
    at_launch: bool = False
    summary: str = ""
    doc: str = ""
    parsed_paths: tuple[Path, ...] = field(default=(), compare=False)
    optional: frozenset[Path] = field(default=frozenset(), compare=False)

    @property
    def mirrors(self) -> str | None:
        """The check of the trainer's loader this rule reproduces, as its documentation names it."""
        return mirrored(self.doc)

    def run(self, values: list[Any], context: Context) -> list[Violation]:
        """The rule's findings on `values` (in the order of its paths), given what the check knows."""
        if self.needs_world_size or self.needs_registries or self.needs_device:
            kwargs: dict[str, Any] = {}
            if self.needs_world_size:
                kwargs["world_size"] = context.world_size
            if self.needs_registries:
                kwargs["registries"] = context.registries
            if self.needs_device:
                kwargs["device"] = context.device
            found = self.check(*values, **kwargs)
        else:
            found = self.check(*values)
        return [f if type(f) is Violation or isinstance(f, Violation) else Violation(f) for f in found] if found else []


def rule(
    rule_id: str,
    severity: str,
    *paths: str,
    raw: bool = False,
    at_launch: bool = False,
    optional: tuple[str, ...] = (),
) -> Callable[[Callable[..., Iterable[str | Violation]]], Rule]:
    """Declare a rule. `raw=True` passes the values as written (ABSENT when not written);
    `at_launch=True` marks a rule the family's own trainer applies at launch, to the final config
    (after overrides), rather than when it loads the file (a rule that reads the world size or the
    device is: they are known only there); `optional` names paths (among `paths`)
    the rule still runs without, when their values failed the schema (it receives ABSENT)."""
    if not set(optional) <= set(paths):
        raise InvalidValue(f"rule {rule_id}: optional paths must be among its paths")

    def wrap(fn: Callable[..., Iterable[str | Violation]]) -> Rule:
        doc = inspect.getdoc(fn) or ""
        params = inspect.signature(fn).parameters  # once: every family's rules are declared at import
        if not doc:
            raise InvalidValue(f"rule {rule_id} needs a docstring: it is the rule's documentation")
        return Rule(
            id=rule_id,
            severity=Severity(severity),
            paths=paths,
            check=fn,
            needs_world_size="world_size" in params,
            needs_registries="registries" in params,
            needs_device="device" in params,
            raw=raw,
            at_launch=at_launch or "world_size" in params or "device" in params,
            summary=first_paragraph(doc),
            doc=doc,
            parsed_paths=tuple(parse_path(p) for p in paths),
            optional=frozenset(parse_path(p) for p in optional),
        )

    return wrap


def passing_divisors(*numbers: int) -> str:
    """The values that divide every one of `numbers`, in words: `1, 2, 4 or 8`.

    A long list keeps its first few and its last (`1, 2, 3, 4, 6, 8, … or 96`); past 10**8 the
    divisors are not searched for (`a divisor of 123456789012`).
    """
    g = math.gcd(*numbers)
    if g > 10**8 or g < 1:
        return f"a divisor of {g}" if g else "any"
    shown = [str(v) for v in divisors(g)]
    if len(shown) > 8:
        shown = [*shown[:6], "…", shown[-1]]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"


def first_paragraph(doc: str) -> str:
    """A docstring's first paragraph on one line: `trainspec rules` lists it, and a summary wrapped over two
    lines of the docstring is one sentence, not its first line."""
    return " ".join(doc.strip().split("\n\n")[0].split())
