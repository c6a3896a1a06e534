"""Every combination of a sweep checked in one process (`trainspec check CONFIG --sweep PATH=V1,V2,...`).

What does not depend on the swept values is done once: the file is read,
parsed and located, its family detected, the file alone checked (for
families whose loader checks it before overrides), validators built. Each
variant then starts from a copy of the parsed document and runs only the
per-override part of a file's check: overrides, schema, defaults, rules,
world-size rules at each size. A variant's diagnostics are exactly what
`trainspec check` reports for the file with that variant's `--set`s.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path as FsPath

from trainspec.engine.checker import check_document
from trainspec.engine.pipeline import as_overrides, check_overridden, world_sizes_of
from trainspec.engine.runner import Options, as_reported, check_file
from trainspec.read.directives import directives_of
from trainspec.read.files import parse
from trainspec.spec.device import Device
from trainspec.spec.diagnostics import Diagnostic, Severity
from trainspec.spec.document import Document
from trainspec.spec.errors import TrainspecError
from trainspec.spec.family import Family
from trainspec.spec.limits import SWEEP_RUNS
from trainspec.spec.overrides import Override
from trainspec.spec.result import Result


class SweepError(TrainspecError):
    """A sweep that cannot be run as written (bad axis syntax, too many variants)."""


@dataclass(frozen=True)
class Axis:
    """One `--sweep PATH=V1,V2,...`: a config path and the values (as written) it takes."""

    path: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class Variant:
    """One combination: the values it assigns, in axis order, and its result as `check` reports it."""

    assignments: tuple[tuple[str, str], ...]
    result: Result

    @property
    def ok(self) -> bool:
        return self.result.ok


@dataclass
class Sweep:
    """Every variant of one file, in the order of the axes' product (the last axis varies fastest).

    `base` is the file checked with the fixed overrides only: when its family is
    unknown or it cannot be read, it is the whole answer and `variants` is empty.
    `world_sizes`: the sizes each variant was checked at; a variant fails if it fails at any of them.
    """

    file: str
    axes: tuple[Axis, ...]
    base: Result
    variants: list[Variant] = field(default_factory=list)
    world_sizes: tuple[int, ...] = ()

    @property
    def failing(self) -> list[Variant]:
        return [v for v in self.variants if not v.ok]

    def passes_at(self, variant: Variant) -> tuple[int, ...]:
        """The world sizes at which the variant has no error (an error of no particular size fails them all)."""
        failed = {s for d in variant.result.diagnostics if d.is_error for s in d.world_sizes or (d.world_size,)}
        return () if None in failed else tuple(s for s in self.world_sizes if s not in failed)


def parse_axis(text: str) -> Axis:
    """`PATH=V1,V2,...`; commas inside brackets, braces or quotes belong to the value (`betas=[0.9,0.95],[0.8,0.9]`)."""
    path, eq, rest = text.partition("=")
    if not eq or not path.strip():
        raise SweepError(f"`{text}`: a sweep is PATH=V1,V2,... (e.g. optimizer.lr=1e-4,3e-4)")
    values, depth, quote, start = [], 0, "", 0
    for n, char in enumerate(rest):
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
        elif char == "," and depth == 0:
            values.append(rest[start:n])
            start = n + 1
    values.append(rest[start:])
    if any(not v.strip() for v in values):
        raise SweepError(f"`{text}`: an empty value in the list (write PATH=V1,V2 with no empty item)")
    return Axis(path.strip(), tuple(v.strip() for v in values))


def sweep(
    path: str | FsPath,
    axes: Axis | str | Iterable[Axis | str],
    *,
    family: str | Family | None = None,
    overrides: str | Iterable[str | Override] = (),
    world_size: int | Sequence[int] | None = None,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    warnings_as_errors: bool = False,
    fallback_sizes: bool = False,
    gpu: Device | None = None,
    sizes_given: bool = False,
) -> Sweep:
    """Check every combination of the axes' values on top of `overrides`, the file read once.

    The keywords mean what they mean to `runner.Options` (`fallback_sizes`: the world
    sizes are for files that state none; `sizes_given`: they are the command line's, which a file directive
    does not replace). One string is one axis, and one override. Raises
    SweepError for an unusable axis or more variants × world sizes than `limits.SWEEP_RUNS`, ValueError for a world
    size below 1.
    """
    if isinstance(axes, (str, Axis)):  # one axis, not the characters of one
        axes = [axes]
    parsed = tuple(a if isinstance(a, Axis) else parse_axis(a) for a in axes)
    paths = [a.path for a in parsed]
    twice = sorted({p for p in paths if paths.count(p) > 1})
    if twice:
        raise SweepError(f"`{twice[0]}` is swept twice: give all its values in one --sweep {twice[0]}=V1,V2,...")
    count = math.prod([len(a.values) for a in parsed])
    sizes = world_sizes_of(world_size)
    _within_budget(count, sizes)
    fixed = as_overrides(overrides)
    options = Options(
        family=family,
        overrides=tuple(fixed),
        world_sizes=sizes,
        select=tuple(select),
        ignore=tuple(ignore),
        warnings_as_errors=warnings_as_errors,
        layout_hints=False,  # a sweep leaves layouts to `plan`
        fallback_sizes=fallback_sizes,
        gpu=gpu,
        sizes_given=sizes_given,
    )
    base = check_file(str(path), options)
    found = Sweep(str(path), parsed, base.for_report())
    if base.family is None or base.document is None:
        return found
    own = directives_of(base.document)[0].world_sizes  # the file's own directive, unless the command line gave sizes
    if own and not (sizes_given and sizes):
        options = replace(options, world_sizes=own, fallback_sizes=False)
        _within_budget(count, own)
    found.world_sizes = options.world_sizes
    sizes, fallback = options.world_sizes, options.fallback_sizes
    checker = _VariantChecker(base.document, base.family, fixed, sizes, fallback, base.device)  # a directive's GPU too
    for values in itertools.product(*(a.values for a in parsed)):
        assignments = tuple((a.path, v) for a, v in zip(parsed, values, strict=True))
        result = as_reported(checker.check(assignments), options).for_report()
        found.variants.append(Variant(assignments, result))
    return found


def _within_budget(variants: int, sizes: Sequence[int]) -> None:
    """SweepError when the sweep would run more checks than `limits.SWEEP_RUNS`."""
    if variants * max(len(sizes), 1) > SWEEP_RUNS.value:
        found = f"{variants:,} variants" + (f" × {len(sizes):,} world sizes" if len(sizes) > 1 else "")
        raise SweepError(SWEEP_RUNS.exceeded(found))


class _VariantChecker:
    """The per-override part of `pipeline.check_path`, from one parsed document and one check of the file alone."""

    def __init__(
        self,
        checked: Document,
        family: Family,
        fixed: list[Override],
        sizes: tuple[int, ...],
        fallback: bool,
        device: Device | None,
    ) -> None:
        self.family, self.fixed, self.sizes, self.fallback, self.device = family, fixed, sizes, fallback, device
        self.pristine = parse(checked.file, checked.text)
        self.pristine.problems = list(checked.problems)  # what reading it found, and the loader-format verdict
        self.pristine.positions  # noqa: B018 (a cached property: computed once, copied by each snapshot)
        self.alone = (
            check_document(self.pristine.snapshot(), family, (), sizes) if family.checks_file_before_overrides else None
        )

    def check(self, assignments: tuple[tuple[str, str], ...]) -> Result:
        first = max((o.index for o in self.fixed), default=0) + 1  # numbered after the command line's own
        overrides = [*self.fixed, *(Override(n, f"{p}={v}") for n, (p, v) in enumerate(assignments, first))]
        doc = self.pristine.snapshot()
        return check_overridden(doc, self.family, overrides, self.sizes, self.fallback, self.alone, device=self.device)


def reported(variant: Variant) -> Iterator[Diagnostic]:
    """A variant's errors and warnings (its notes say nothing a reader of a sweep needs)."""
    return (d for d in variant.result.diagnostics if d.severity is not Severity.NOTE)
