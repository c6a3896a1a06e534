"""Checking many files: one file's whole check, run serially or in a process pool.

`check_file` does everything for one file (its world sizes, suppression
comments, --select/--ignore, --warnings-as-errors) and returns a Result
light enough to pickle, so a worker process and the serial loop produce the
same thing, and the pool's ordered `map` keeps the order of the files.
"""

from __future__ import annotations

import multiprocessing
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from functools import partial

from . import suppressions
from .catalogue import engine_rules, family_rules
from .diagnostics import Diagnostic, Severity
from .examples import Example
from .families import Family, all_families, get_family
from .formats import FORMATS, JSON
from .overrides import Override
from .pipeline import check_path
from .progress import Progress
from .result import Result

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
    texts: Mapping[str, str] = field(default_factory=dict)
    """The text of files not read from disk (`trainspec check -`: the buffer an editor pipes in), by name."""


def check_file(file: str, options: Options) -> Result:
    """One file's whole check, as reported (suppressions, selection, severities applied)."""
    result = check_path(
        file,
        family=options.family,
        overrides=options.overrides,
        world_size=options.world_sizes,
        text=options.texts.get(file),
    )
    if result.family is None and options.family is None:
        unknown = any(d.rule == "unknown-family" for d in result.diagnostics)
        unreadable = any(d.rule == "syntax-error" for d in result.diagnostics)
        if (unknown and file in options.expanded) or (options.skip_unknown and (unknown or unreadable)):
            return Result(file, None, [], skipped=True)
    found = result.diagnostics
    if result.document is not None and FORMATS.get(result.document.format, JSON).comments:
        known, checked = _suppression_checks(result.family, result.world_size is not None or bool(options.world_sizes))
        found = suppressions.apply(found, result.document.text, file, known=known, checked=checked)
    kept = [d for d in found if d.rule in FILE_LEVEL or selected(d.rule, options.select, options.ignore)]
    if options.warnings_as_errors:
        kept = [replace(d, severity=Severity.ERROR) if d.severity is Severity.WARNING else d for d in kept]
    return replace(result, diagnostics=kept).for_report()


def selected(rule_id: str, select: Sequence[str], ignore: Sequence[str]) -> bool:
    """--select keeps only matching ids (all when empty); --ignore then drops matching ids."""
    if select and not any(suppressions.matches(rule_id, p) for p in select):
        return False
    return not any(suppressions.matches(rule_id, p) for p in ignore)


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
    """Results in the order of `files` (skipped files left out), whatever `jobs` is.

    Workers send back `Result.for_report()`s: no config or document crosses processes, and a
    family travels by name.
    """
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
    return [r for r in done if not r.skipped]


def _prepare(options: Options) -> None:
    """Build schemas and validators once, before the workers fork, so none of them rebuilds them."""
    families = [get_family(options.family)] if options.family else list(all_families().values())
    for family in families:
        family.validator  # noqa: B018 (a cached property: touching it builds it)


def _context() -> multiprocessing.context.BaseContext | None:
    """Fork where the platform has it: workers start warm, with everything the parent built."""
    return multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None


def _tick(progress: Progress | None, checked: Result) -> Result:
    if progress is not None:
        progress.advance()
    return checked


def run_example(example: Example, fixed: bool, family: str | None = None) -> list[Diagnostic]:
    """What `trainspec check` says about an example's bad (or fixed) file, sorted, named as shown.

    `family` (a name or `name@version`) checks it as that family when the example names none.
    """
    text = example.good if fixed else example.bad
    run = example.options(fixed)
    with tempfile.TemporaryDirectory(prefix="trainspec-example-") as tmp:
        name = example.file(fixed)
        path = os.path.join(tmp, name)
        if text is not None:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        options = Options(family=run.family or family, overrides=run.overrides, world_sizes=run.world_sizes)
        found = [d for result in check_files([path], options) for d in result.diagnostics]
    return sorted((replace(d, file=name) if d.file == path else d for d in found), key=Diagnostic.sort_key)
