"""What a family declares so `plan` and `show` can answer for it: plain data and small functions.

A family names the config paths that choose its parallel layout and yields
the candidate values at a world size (`divisors` and `factorings` help); the
engine keeps the candidates the family's own rules accept (`layout_search.py`).
Derived quantities (`provenance.py`) are computed by the family from the
resolved config.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

from trainspec.spec.errors import InvalidValue
from trainspec.spec.paths import Path, parse_path


@dataclass(frozen=True)
class Quantity:
    """A value computed from the resolved config, with how it was computed.

    `value` is None when it cannot be computed (a world size is needed, or an
    input is unusable); `how` then says why. `reads`: the config paths it is
    computed from (None: the whole config), so that an error elsewhere in the
    config does not withhold it.
    """

    name: str
    value: int | float | str | None
    unit: str = ""
    how: str = ""
    reads: tuple[str, ...] | None = None


@dataclass(frozen=True, eq=False)
class LayoutSpace:
    """The parallel layouts of one family (each one its own: it keys the caches of its rules).

    - `paths`: the config paths a layout sets, in the order its values come.
    - `candidates(config, world_size)`: value tuples worth trying at that size
      (for example every way to factor it); the family's rules decide which pass.
    - `rank(config, world_size, gpus_per_node)`: sort key of a config with a
      candidate applied, lower first; `heuristic` says in words what it prefers.
    - `auto`: path -> the value that makes that path follow the others at any
      world size (KempnerForge's `dp_shard = -1`); a file holding that value
      needs no override for the path.
    - `per_node`: the path whose value is the processes started on one node,
      if the config states it (SpecForge's `nproc_per_node`): with
      `--gpus-per-node K`, a layout starting more than K is never offered.
    - `describe(config, world_size)`: what a config with a passing candidate
      applied resolves to, in the trainer's words, for a family whose layout
      values leave degrees to the trainer to infer (an unset degree that
      takes the ranks left over); `plan` shows it in place of the values.
    - `undone_by`: ids of warning rules that tell the user to undo the very
      layout they judge (KempnerForge's `cp-becomes-data-parallel`: "set
      cp = 1"): a candidate drawing one is not offered, nor named nearest.
    """

    paths: tuple[str, ...]
    candidates: Callable[[Mapping[str, Any], int], Iterable[tuple[Any, ...]]]
    rank: Callable[[Mapping[str, Any], int, int | None], tuple[Any, ...]]
    heuristic: str
    auto: Mapping[str, Any] = field(default_factory=dict)
    per_node: str | None = None
    describe: Callable[[Mapping[str, Any], int], str] | None = None
    undone_by: frozenset[str] = frozenset()

    @cached_property
    def parsed_paths(self) -> tuple[Path, ...]:
        """`paths` as tuples: a family declares them as text, read once."""
        return tuple(parse_path(p) for p in self.paths)


@dataclass(frozen=True)
class MemoryEstimate:
    """A family's estimate of the memory one rank needs under a layout: its parts (each a Quantity in
    bytes, with how it is counted) and what the whole estimate assumes. A part that cannot be known is
    None and counts as nothing in the total. `beside`: figures shown with the parts but not summed into
    the total (a peak made of some of them, a bound on one)."""

    parts: tuple[Quantity, ...]
    assumptions: str
    beside: tuple[Quantity, ...] = ()

    @property
    def total(self) -> int:
        return sum(int(q.value) for q in self.parts if isinstance(q.value, int | float))

    @property
    def largest(self) -> Quantity:
        return max(self.parts, key=lambda q: q.value if isinstance(q.value, int | float) else 0)


Memory = Callable[[Mapping[str, Any], int], MemoryEstimate | None]
"""A family's memory estimate of a resolved config at a world size (None: the layout does not resolve)."""

Derive = Callable[[Mapping[str, Any], int | None], list[Quantity]]
"""A family's derived quantities of a resolved config at a world size (None: not known)."""


@lru_cache(maxsize=1024)
def divisors(n: int) -> tuple[int, ...]:
    """The divisors of n, ascending (asked again and again for the same world sizes and degrees: remembered)."""
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return tuple(sorted({*small, *(n // d for d in small)}))


def factorings(n: int, parts: int) -> Iterator[tuple[int, ...]]:
    """Every ordered way to write n as a product of `parts` whole numbers (the candidates of a layout whose
    degrees multiply to the world size), smallest first factor first, made one at a time: a world size
    with many divisors has hundreds of millions of six-degree layouts, and a search stops at its budget.
    Those of a small world size (a few thousand at most) are listed once and remembered."""
    if n <= _LISTED_UP_TO:
        return iter(_listed(n, parts))
    return _factorings(n, parts)


_LISTED_UP_TO = 64


@lru_cache(maxsize=256)
def _listed(n: int, parts: int) -> tuple[tuple[int, ...], ...]:
    return tuple(_factorings(n, parts))


def _factorings(n: int, parts: int) -> Iterator[tuple[int, ...]]:
    if parts == 1:
        yield (n,)
        return
    for first in divisors(n):
        for rest in _factorings(n // first, parts - 1):
            yield (first, *rest)


UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12}
UNITS.update({"kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40})
SIZE = re.compile(r"^\s*([0-9]{1,20}(?:\.[0-9]{1,20})?)\s*([a-zA-Z]*)\s*$")
"""A memory size as `--gpu-memory` and the project's `gpu-memory` take it: a number and a unit."""


def parse_size(text: str) -> int:
    """Bytes in `80GiB`, `141 GB`, `85899345920`; ValueError for anything else."""
    found = SIZE.match(text)
    unit = found.group(2).lower() if found else ""
    from decimal import Decimal

    size = int(Decimal(found.group(1)) * UNITS[unit]) if found and unit in UNITS else 0
    if size < 1:
        raise InvalidValue(f"{text!r} is not a memory size (for example 80GiB, 141GB or a number of bytes)")
    return size
