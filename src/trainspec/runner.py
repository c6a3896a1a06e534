"""Checking many files: one file's whole pipeline, run serially or in a process pool.

`check_file` does everything for one file (each world size, suppression
comments, --select/--ignore, --warnings-as-errors) and returns plain,
picklable data, so a worker process and the serial loop produce the same
thing, and the pool's ordered `map` keeps the order of the files.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from functools import partial

from . import suppressions
from .api import check_path
from .catalogue import engine_rules, family_rules
from .checker import Result
from .diagnostics import Diagnostic, Severity
from .families import Family, all_families, get_family
from .overrides import Override
from .progress import Progress

FILE_LEVEL = frozenset(
    {
        "file-not-found",
        "file-not-readable",
        "syntax-error",
        "unknown-family",
        "not-a-mapping",
        "invalid-family-schema",
    }
)
"""The file could not be checked at all: reported whatever --select/--ignore say, so CI never passes it."""

PARALLEL_MIN_FILES = 24
"""Below this many files a process pool costs more than it saves."""


@dataclass(frozen=True)
class Options:
    family: str | None = None
    overrides: tuple[str | Override, ...] = ()
    world_sizes: tuple[int, ...] = ()
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    warnings_as_errors: bool = False
    skip_unknown: bool = False
    expanded: frozenset[str] = frozenset()
    """Files found by expanding a directory or glob: those of no known family are skipped."""


@dataclass(frozen=True)
class Checked:
    """What one file came to; `family` by name, so it travels between processes."""

    file: str
    family: str | None
    diagnostics: tuple[Diagnostic, ...]
    skipped: bool = False


def check_file(file: str, options: Options) -> Checked:
    sizes: Sequence[int | None] = options.world_sizes or (None,)
    runs = [check_path(file, family=options.family, overrides=options.overrides, world_size=n) for n in sizes]
    first = runs[0]
    if first.family is None and options.family is None:
        unknown = any(d.rule == "unknown-family" for d in first.diagnostics)
        unreadable = any(d.rule == "syntax-error" for d in first.diagnostics)
        if (unknown and file in options.expanded) or (options.skip_unknown and (unknown or unreadable)):
            return Checked(file, None, (), skipped=True)
    found = _per_size(runs, options.world_sizes) if len(sizes) > 1 else first.diagnostics
    if first.document is not None and first.document.format in suppressions.COMMENT_FORMATS:
        known, checked = _suppression_checks(first.family, bool(options.world_sizes) or first.world_size is not None)
        found = suppressions.apply(found, first.document.text, file, known=known, checked=checked)
    kept = [d for d in found if d.rule in FILE_LEVEL or selected(d.rule, options.select, options.ignore)]
    if options.warnings_as_errors:
        kept = [replace(d, severity=Severity.ERROR) if d.severity is Severity.WARNING else d for d in kept]
    return Checked(file, first.family.name if first.family else None, tuple(kept))


def selected(rule_id: str, select: Sequence[str], ignore: Sequence[str]) -> bool:
    """--select keeps only matching ids (all when empty); --ignore then drops matching ids."""
    if select and not any(suppressions.matches(rule_id, p) for p in select):
        return False
    return not any(suppressions.matches(rule_id, p) for p in ignore)


def _per_size(runs: list[Result], sizes: Sequence[int]) -> list[Diagnostic]:
    """Diagnostics of world-size rules once per size, saying which (or a note that the size passes); the others
    once."""
    family = runs[0].family

    def sized(d: Diagnostic) -> bool:
        rule = family.rule(d.rule) if family is not None else None
        return rule is not None and rule.needs_world_size

    out = [d for d in runs[0].diagnostics if not sized(d)]
    for size, run in zip(sizes, runs, strict=True):
        found = [
            replace(d, world_size=size, message=f"at world size {size}: {d.message}")
            for d in run.diagnostics
            if sized(d)
        ]
        if not found and family is not None and any(r.needs_world_size for r in family.rules):
            found = [
                Diagnostic(
                    run.file,
                    None,
                    None,
                    "",
                    "world-size-checked",
                    Severity.NOTE,
                    f"at world size {size}: every world-size rule passes",
                    world_size=size,
                )
            ]
        out.extend(found)
    return out


def _suppression_checks(
    family: Family | None, world_size_known: bool
) -> tuple[Callable[[str], bool], Callable[[str], bool]]:
    """(is the id a rule id, could such a rule have fired): world-size rules need a world size."""
    infos = [*(family_rules(family) if family is not None else ()), *engine_rules()]
    ids = [r.id for r in infos]
    notes = {r.id for r in infos if r.severity is Severity.NOTE}  # never suppressed: notes fail nothing
    skipped = set() if world_size_known or family is None else {r.id for r in family.rules if r.needs_world_size}

    def known(pattern: str) -> bool:
        return any(suppressions.matches(i, pattern) for i in ids)

    def checked(pattern: str) -> bool:
        return any(suppressions.matches(i, pattern) and i not in skipped and i not in notes for i in ids)

    return known, checked


def default_jobs(files: int) -> int:
    if files < PARALLEL_MIN_FILES:
        return 1
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def check_files(
    files: Sequence[str], options: Options, jobs: int | None = None, progress: Progress | None = None
) -> list[Result]:
    """Results in the order of `files` (skipped files left out), whatever `jobs` is."""
    jobs = min(jobs or default_jobs(len(files)), len(files)) or 1
    work = partial(check_file, options=options)
    if jobs == 1:
        done = [_tick(progress, work(f)) for f in files]
    else:
        _prepare(options)
        chunk = max(1, min(16, len(files) // (jobs * 8)))
        with ProcessPoolExecutor(max_workers=jobs, mp_context=_context()) as pool:
            done = [_tick(progress, c) for c in pool.map(work, files, chunksize=chunk)]
    if progress is not None:
        progress.close()
    families = all_families()
    return [
        Result(c.file, families.get(c.family) if c.family else None, list(c.diagnostics)) for c in done if not c.skipped
    ]


def _prepare(options: Options) -> None:
    """Build schemas and validators once, before the workers fork, so none of them rebuilds them."""
    families = [get_family(options.family)] if options.family else list(all_families().values())
    for family in families:
        family.validator  # noqa: B018 (a cached property: touching it builds it)


def _context() -> multiprocessing.context.BaseContext | None:
    """Fork where the platform has it: workers start warm, with everything the parent built."""
    return multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None


def _tick(progress: Progress | None, checked: Checked) -> Checked:
    if progress is not None:
        progress.advance()
    return checked
