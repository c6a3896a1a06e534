"""Checking many files: one file's whole check, run serially or in a process pool.

`check_file` does everything for one file (its project settings, world sizes,
suppression comments, --select/--ignore, --warnings-as-errors) and returns the
whole Result: whoever needs the document or the resolved config (the language
server, `sweep`, `show`, `plan`) reuses that one check. Many files are checked
through `report_file`, whose light Result pickles, so a worker process and the
serial loop produce the same thing, and the pool's ordered `map` keeps the
order of the files.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cache, lru_cache, partial
from pathlib import Path as FsPath
from typing import TYPE_CHECKING

from trainspec.engine.pipeline import check_path
from trainspec.engine.progress import Progress
from trainspec.families import UnknownFamily, all_families, found_without_import, get_family
from trainspec.read import suppressions
from trainspec.read.files import read_text
from trainspec.read.overlay import OverlayError, load_overlay
from trainspec.read.project import Project, ProjectError, find_project, inside, problem_at
from trainspec.spec.codes import (
    DIAGNOSTICS_TRUNCATED,
    FILE_NOT_READABLE,
    INVALID_PROJECT_CONFIG,
    REGISTRY,
    UNCLAIMED_CONFIG,
    WORLD_SIZE_FROM_PROJECT,
    Flag,
    has_flag,
)
from trainspec.spec.device import Device, target
from trainspec.spec.diagnostics import Diagnostic, Severity
from trainspec.spec.document import ReadError
from trainspec.spec.family import Family
from trainspec.spec.formats import FORMATS, JSON
from trainspec.spec.layout_space import parse_size
from trainspec.spec.limits import DIAGNOSTICS
from trainspec.spec.result import Outcome, Result
from trainspec.spec.world_sizes import sizes_text
from trainspec.validate.fast import fast_validator
from trainspec.validate.other_versions import Selection

if TYPE_CHECKING:
    import multiprocessing.context
    from concurrent.futures import ProcessPoolExecutor

    from trainspec.spec.document import Document
    from trainspec.spec.examples import Example
    from trainspec.spec.overrides import Override

PARALLEL_MIN_FILES = 100
"""Below this many files a process pool costs more than it saves: on 2 cores a pool of 2 breaks even
at about 90 KempnerForge configs that mostly have diagnostics (starting it costs ~30 ms, a config
0.4-1 ms)."""


@dataclass(frozen=True)
class Options:
    family: str | Family | None = None
    family_from: Selection = "flag"
    """What chose `family`: the command line, or the project configuration (`for_file`)."""
    overrides: tuple[str | Override, ...] = ()
    world_sizes: tuple[int, ...] = ()
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    warnings_as_errors: bool = False
    gpu_memory: int | None = None
    """Bytes of one GPU: the family's memory estimate above it is an error (`rules/gpu_memory.py`); when None,
    the memory of the target GPU, if the catalogue knows it."""
    gpu: Device | None = None
    """The target GPU (`--gpu`), for the rules that read it and the family's device checks."""
    skip_unknown: bool = False
    expanded: frozenset[str] = frozenset()
    """Files found by expanding a directory or glob: those of no known family are skipped."""
    texts: Mapping[str, str] = field(default_factory=dict)
    """The text of files not read from disk (`trainspec check -`: the buffer an editor pipes in), by name."""
    use_project: bool = False
    """Apply the project configuration that governs each file (see `project`)."""
    layout_hints: bool = True
    """World-size errors name the nearest layout that passes (a sweep leaves this to `plan`)."""
    as_found: bool = False
    """Keep the diagnostics as the check found them, without `as_reported` (`show` and `plan` have always
    read them so: a suppression comment neither hides an error from them nor is reported by them)."""
    set_aside: str = ""
    """The world sizes the project configuration states for this file, which the command line's replace."""
    sizes_given: bool = False
    """`world_sizes` were given for this run (`--world-size`): they win over the project configuration's and
    a file directive's, as a command-line setting does in other linters; what they replace gets a note."""
    fallback_sizes: bool = False
    """`world_sizes` are for files that state none (the command line's): a config that fixes its own
    world size (a SpecForge trainer topology) keeps it, instead of failing at sizes meant for others."""
    outside_links: bool = False
    """Read a config that is a symbolic link to a file outside the project (`--allow-outside-links`)."""
    parser: Callable[[str, str], Document] | None = None
    """Parses the text of a file in `texts` in place of `read.files.parse` (see `pipeline.check_path`)."""

    def for_file(self, file: str) -> Options:
        """These options with the project configuration of `file` merged in (see `docs/project.md`).

        World sizes: the command line's when given (`sizes_given`), else the file's directive (read
        later), else the file's glob, else the project default. The target GPU: the file's glob, else
        the command line, else the project default (a file directive outranks all three). Family: the command line, else
        the glob, else the project default. Overrides: the project's, then the glob's, then the
        command line's.
        `--select` replaces the project's; every `ignore` adds up.
        """
        project = find_project(file) if self.use_project else None
        if project is None:
            return self
        overlays = usable(project)
        entry = project.entry_for(file)
        mine = project.settings_of(entry)
        family = self.family
        if family is None and mine.overlay is not None:
            family = overlays[mine.overlay]
        source = project.source.name
        own = entry.settings.world_sizes if entry else ()
        aside = ""
        given = self.world_sizes if self.sizes_given else ()
        if given and own and set(own) != set(given):
            where = f"the entry for {', '.join(entry.paths)} in {project.source.name}" if entry else ""
            aside = f"{where} states world size {sizes_text(own)}, set aside for the --world-size given"
        return replace(
            self,
            set_aside=aside,
            family=family or mine.family,
            family_from="flag" if self.family else "project",
            world_sizes=given or own or self.world_sizes or mine.world_sizes,
            fallback_sizes=self.fallback_sizes and not own and not given,
            overrides=(*_project_overrides(mine.overrides, source), *self.overrides),
            select=self.select or mine.select or (),
            ignore=(*mine.ignore, *self.ignore),
            warnings_as_errors=self.warnings_as_errors or project.warnings_as_errors,
            gpu_memory=self.gpu_memory or mine.gpu_memory,
            gpu=(entry.settings.gpu if entry else None) or self.gpu or mine.gpu,
        )


def _project_overrides(texts: tuple[str, ...], source: str) -> tuple[Override, ...]:
    """A project configuration's `set` entries as overrides (`spec.overrides` is imported only when there are)."""
    if not texts:
        return ()
    from trainspec.spec.overrides import Override

    return tuple(Override(0, text, source=source) for text in texts)


_USABLE: dict[FsPath, tuple[Project, dict[str, str] | ProjectError]] = {}
"""Each project configuration's verdict, for the Project it was given on (read again after
`project.forget_projects`, a configuration gets a verdict of its own)."""


def usable(project: Project) -> dict[str, str]:
    """The family id of each overlay the project names, once every setting trainspec cannot use
    is found: a family or an overlay that does not load, a rule id or prefix that matches no rule.
    Raises ProjectError, each problem at the line of its setting. Decided once per configuration,
    usable or not, however many files it governs; the parent decides before forking, so its workers
    inherit the overlays it registered."""
    cached = _USABLE.get(project.source)
    if cached is None or cached[0] is not project:
        cached = _USABLE[project.source] = (project, _verdict(project))
    if isinstance(cached[1], ProjectError):
        raise ProjectError(cached[1].diagnostics)
    return cached[1]


def _verdict(project: Project) -> dict[str, str] | ProjectError:
    try:
        text = read_text(str(project.source))  # read and parsed moments ago: the bounded reader all the same
    except ReadError as exc:
        return ProjectError([exc.diagnostic])
    problems, overlays = [], {}
    for settings in (project.defaults, *(e.settings for e in project.entries)):
        if settings.family is not None and not found_without_import(settings.family):
            try:
                get_family(settings.family)
            except UnknownFamily as exc:
                problems.append(problem_at(project.source, text, f'"{settings.family}"', f"family: {exc}"))
        if settings.overlay is not None:
            try:
                path = inside(project.root, settings.overlay)
                overlays[path] = load_overlay(path).id
            except (OverlayError, UnknownFamily, ValueError) as exc:
                problems.append(problem_at(project.source, text, f'"{settings.overlay}"', f"overlay: {exc}"))
        for pattern in (*(settings.select or ()), *settings.ignore):
            from trainspec.rules.catalogue import names_a_rule

            if not names_a_rule(pattern):
                message = f"`{pattern}` matches no rule id; see `trainspec rules`"
                problems.append(problem_at(project.source, text, f'"{pattern}"', message))
    return ProjectError(problems) if problems else overlays


def check_file(file: str, options: Options) -> Result:
    """One file's whole check, as `trainspec check` reports it, kept whole: the document and the resolved
    config stay with the result, so the language server, `sweep`, `show` and `plan` use the one check they
    made instead of making another. `for_report()` is the light form reporters and worker processes take."""
    try:
        options = options.for_file(file)
    except (ProjectError, OverlayError, UnknownFamily) as exc:
        return Result(file, None, _project_problems(file, exc), outcome=Outcome.UNUSABLE_SETTINGS)
    if not options.outside_links and file not in options.texts:
        refused = _linked_outside(file, options.use_project)
        if refused is not None:
            return Result.not_checked(Outcome.UNREADABLE, refused)
    result = check_path(
        file,
        family=options.family,
        overrides=options.overrides,
        world_size=options.world_sizes,
        text=options.texts.get(file),
        fallback_sizes=options.fallback_sizes,
        sizes_given=options.sizes_given,
        family_from=options.family_from,
        device=options.gpu,
        parser=options.parser if file in options.texts else None,
    )
    if result.outcome is Outcome.WRONG_FORMAT and file in options.expanded:
        return result.skip(result.reason)
    if result.outcome is Outcome.UNCLAIMED and (file in options.expanded or options.skip_unknown):
        return _unclaimed(result, options)
    if result.outcome is Outcome.SYNTAX and options.skip_unknown and options.family is None:
        return result.skip(f"unreadable: {result.reason}")
    if options.set_aside:
        note = Diagnostic(file, None, None, (), WORLD_SIZE_FROM_PROJECT.id, Severity.NOTE, options.set_aside)
        result = replace(result, diagnostics=[*result.diagnostics, note])
    return result if options.as_found else as_reported(result, options)


def _unclaimed(result: Result, options: Options) -> Result:
    """A file a walk, a glob or a hook found that no family claims: an `unclaimed-config` warning when it
    looks like a family's config (`detect.resembles`), else skipped, for the summary line to list. A
    warning --ignore or a suppression comment removes leaves the file skipped, never silently clean."""
    from trainspec.read.detect import resembles

    doc = result.document
    like = resembles(doc, all_families()) if doc is not None else ()
    if doc is None or not like:
        return result.skip(result.reason)
    readers = [f.name for f in like if doc.format in f.formats]
    message = f"not checked, no family claims this file: {result.reason}"
    if "--family" in result.reason and readers:
        name = readers[0] if len(readers) == 1 else "NAME"
        message += f', or give it `family = "{name}"` in a `[[configs]]` entry of the project configuration'
    warning = Diagnostic(result.file, 1, 1, (), UNCLAIMED_CONFIG.id, Severity.WARNING, message)
    found = replace(result, diagnostics=[*result.diagnostics[:-1], warning], outcome=Outcome.UNATTRIBUTED)
    if options.as_found:
        return found
    reported = as_reported(found, options)
    if not any(d.rule == UNCLAIMED_CONFIG.id for d in reported.diagnostics):
        return result.skip(result.reason)
    return reported


def _linked_outside(file: str, use_project: bool) -> Diagnostic | None:
    """`file-not-readable` for a config that is a symbolic link, inside its project (the folder of the
    project configuration that governs it, else the working directory), to an existing file outside it:
    a repository may not make trainspec read, and quote the lines of, a file elsewhere on the machine.
    The message does not say where the link points. (A dangling link is left to the reader's
    `file-not-found`.)"""
    if not os.path.islink(file):
        return None
    project = find_project(file) if use_project else None
    root = project.root if project is not None else FsPath.cwd()
    try:
        target = FsPath(os.path.realpath(file))
        if not FsPath(os.path.abspath(file)).is_relative_to(root) or not target.exists():
            return None
        if target.is_relative_to(root.resolve()):
            return None
    except (OSError, RuntimeError):
        pass  # a link that cannot be resolved (a loop) is refused as one leading out
    message = (
        f"is a symbolic link to a file outside {root}, and was not read; check the file where it is, "
        "or pass --allow-outside-links to follow it"
    )
    return Diagnostic(file, None, None, (), FILE_NOT_READABLE.id, Severity.ERROR, message)


def report_file(file: str, options: Options) -> Result:
    """`check_file`'s result in the form a report takes (what a worker process sends back)."""
    return check_file(file, options).for_report()


def as_reported(result: Result, options: Options) -> Result:
    """What a check found, as reported: the nearest passing layout named on world-size errors, suppression
    comments applied, --select/--ignore, --warnings-as-errors, the cap on diagnostics. The last step of
    every check of a file (a sweep's variants included)."""
    family, size = result.family, result.world_size
    space = family.layout if family is not None and options.layout_hints else None
    if space is not None and size is not None and _world_size_error(result):  # else the search is not imported
        from trainspec.engine.layout_search import with_nearest_layout

        result = replace(result, diagnostics=with_nearest_layout(result, space, size))
    budget, gpu = options.gpu_memory, None
    if budget is None and result.device is not None:  # the target GPU's own memory, when the catalogue knows it
        budget, gpu = result.device.memory, result.device.name
    if budget is not None:
        from trainspec.rules.gpu_memory import exceeded

        sizes = (result.world_size,) if result.world_size is not None else options.world_sizes
        result = replace(result, diagnostics=[*result.diagnostics, *exceeded(result, budget, sizes, gpu)])
    found = result.diagnostics
    comment = FORMATS.get(result.document.format, JSON).comment if result.document is not None else None
    if result.document is not None and comment is not None:
        sized = result.world_size is not None or bool(options.world_sizes)
        known, checked = _suppression_checks(result.family, sized, result.device is not None)
        text, file = result.document.text, result.file
        found = suppressions.apply(found, text, file, comment=comment, known=known, checked=checked)
    kept = [d for d in found if reported_anyway(d.rule) or selected(d.rule, options.select, options.ignore)]
    if options.warnings_as_errors:
        kept = [replace(d, severity=Severity.ERROR) if d.severity is Severity.WARNING else d for d in kept]
    return replace(result, diagnostics=capped(result.file, kept))


def _world_size_error(result: Result) -> bool:
    """Whether an error of a world-size rule is among the result's (what `with_nearest_layout` hints at)."""
    errors = {d.rule for d in result.diagnostics if d.is_error}
    return bool(errors) and result.family is not None and not errors.isdisjoint(_world_size_rule_ids(result.family))


@lru_cache(maxsize=64)
def _world_size_rule_ids(family: Family) -> frozenset[str]:
    return frozenset(r.id for r in family.rules if r.needs_world_size)


def capped(file: str, found: list[Diagnostic]) -> list[Diagnostic]:
    """At most `limits.DIAGNOSTICS` of a file's diagnostics, and one that counts the rest (an error when
    an error is among them, so the run fails as it would have): a file of a million unknown keys
    does not print a million lines. (Schema validation stops explaining at the same limit, and says so.)"""
    limit = DIAGNOSTICS.value
    shown = [d for d in found if d.rule != DIAGNOSTICS_TRUNCATED.id]
    if len(shown) <= limit:
        return found
    rest = shown[limit:]
    errors = sum(d.is_error for d in rest)
    also = ", and more schema problems were not explained" if len(shown) < len(found) else ""
    message = DIAGNOSTICS.exceeded(f"{len(rest):,} more diagnostics ({errors:,} errors) not shown{also}")
    severity = Severity.ERROR if errors or also else Severity.NOTE
    return [*shown[:limit], Diagnostic(file, None, None, (), DIAGNOSTICS_TRUNCATED.id, severity, message)]


def _project_problems(file: str, exc: Exception) -> list[Diagnostic]:
    """A project configuration (or an overlay it names) that cannot be used: reported on the file it governs."""
    if isinstance(exc, ProjectError):
        return exc.diagnostics
    return [Diagnostic(file, None, None, (), INVALID_PROJECT_CONFIG.id, Severity.ERROR, str(exc))]


def reported_anyway(rule_id: str) -> bool:
    """The file could not be checked (at all, or as written): reported whatever --select/--ignore say,
    so CI never passes it."""
    return has_flag(rule_id, Flag.FILE_NOT_CHECKED)


def selected(rule_id: str, select: Sequence[str], ignore: Sequence[str]) -> bool:
    """--select keeps only matching ids (all when empty); --ignore then drops matching ids."""
    if select and not any(suppressions.matches(rule_id, p) for p in select):
        return False
    return not any(suppressions.matches(rule_id, p) for p in ignore)


@lru_cache(maxsize=64)
def _suppression_checks(
    family: Family | None, world_size_known: bool, device_known: bool
) -> tuple[Callable[[str], bool], Callable[[str], bool]]:
    """(is the id a rule id, could such a rule have fired): world-size rules need a world size, device
    rules a target device. The same for every file of a family: built once, when a suppression comment
    first asks (most files have none)."""

    @cache
    def ids() -> tuple[list[str], set[str]]:
        """(every id, the ids never suppressed as unused: those of rules that did not run, and notes)."""
        from trainspec.rules.catalogue import family_rules

        infos = [(r.id, r.severity) for r in family_rules(family)] if family is not None else []
        infos += [(c.id, c.severity) for c in REGISTRY.values()]  # the engine's ids (the catalogue's, without examples)
        notes = {i for i, severity in infos if severity is Severity.NOTE}  # never suppressed: notes fail nothing
        rules = () if family is None else family.rules
        skipped = {
            r.id
            for r in rules
            if (r.needs_world_size and not world_size_known) or (r.needs_device and not device_known)
        }
        return [i for i, _ in infos], skipped | notes

    def known(pattern: str) -> bool:
        return any(suppressions.matches(i, pattern) for i in ids()[0])

    def checked(pattern: str) -> bool:
        every, unchecked = ids()
        return any(suppressions.matches(i, pattern) and i not in unchecked for i in every)

    return known, checked


def default_jobs(files: int) -> int:
    return 1 if files < PARALLEL_MIN_FILES else available_cpus()


def available_cpus() -> int:
    """The CPUs this process may run on: more worker processes than that only compete for them."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def check_files(
    files: Sequence[str], options: Options, jobs: int | None = None, progress: Progress | None = None
) -> list[Result]:
    """Results in the order of `files` (skipped files left out), whatever `jobs` is."""
    return [r for r in iter_check_files(files, options, jobs, progress) if not r.skipped]


def iter_check_files(
    files: Sequence[str], options: Options, jobs: int | None = None, progress: Progress | None = None
) -> Iterator[Result]:
    """Each file's result as soon as its turn in the order of `files` comes, skipped files included.

    `jobs` is capped at the CPUs available (`trainspec check` says so). Workers send back
    `Result.for_report()`s: no config or document crosses processes, and a family travels by name.
    Nothing is kept once it is yielded, so memory does not grow with the number of files.
    """
    jobs = min(jobs or default_jobs(len(files)), len(files), available_cpus()) or 1
    work: Callable[[str], Result] = partial(report_file, options=options)
    token = object()
    try:
        if jobs == 1:
            for file in files:
                yield _tick(progress, work(file))
        else:
            _prepare(options)
            chunk = max(1, min(16, len(files) // (jobs * 8)))
            from concurrent.futures import ProcessPoolExecutor  # only runs that use a pool pay for its import

            context = _context()
            if context is not None:  # forked workers find the options where the parent left them
                _INHERITED[id(token)] = options
                work = partial(_report_inherited, id(token))
            pool = ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_ignore_interrupts)
            try:
                with _interrupts_held():
                    checked_in_order = pool.map(work, files, chunksize=chunk)
                for checked in checked_in_order:
                    yield _tick(progress, checked)
            except BaseException:  # Ctrl-C, or the reader stopped: check no more, wait for no worker
                _stop(pool)
                raise
            pool.shutdown()
    finally:
        _INHERITED.pop(id(token), None)
        if progress is not None:
            progress.close()


_INHERITED: dict[int, Options] = {}
"""The options of each run whose pool forks its workers, by the run's token: a chunk of files then sends only
the token, not the options (which hold every file a walk found, `expanded`)."""


def _report_inherited(token: int, file: str) -> Result:
    """`report_file` in a forked worker, with the options its parent left under `token`."""
    return report_file(file, _INHERITED[token])


def _prepare(options: Options) -> None:
    """Build schemas and compiled validators once, before the workers fork, so none of them rebuilds
    them. python-jsonschema (about 70 ms to import and build) is left to a worker that meets an
    invalid config: a run of valid ones never needs it."""
    if isinstance(options.family, Family):
        families = [options.family]
    else:
        families = [get_family(options.family)] if options.family else list(all_families().values())
    for family in families:
        try:
            fast_validator(family.schema)
        except Exception:  # an unusable family schema: each file it checks says so
            continue


def _ignore_interrupts() -> None:
    """Ctrl-C reaches every process of the terminal's group: the parent alone answers it (exit 130, one
    line), so a worker prints no traceback of its own and ends when `_stop` cancels its work."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextmanager
def _interrupts_held() -> Iterator[None]:
    """Hold Ctrl-C while the workers fork (`map` submits every chunk, which starts them): a signal that
    lands in a fork hook is printed and lost, and the run would go on. It is delivered on leaving."""
    if not hasattr(signal, "pthread_sigmask"):  # Windows: no fork, no fork hooks
        yield
        return
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _stop(pool: ProcessPoolExecutor) -> None:
    """Cancel the files not yet checked; each worker ends after the chunk it holds."""
    pool.shutdown(wait=False, cancel_futures=True)


def _context() -> multiprocessing.context.BaseContext | None:
    """Fork where the platform has it: workers start warm, with everything the parent built."""
    import multiprocessing

    return multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None


def _tick(progress: Progress | None, checked: Result) -> Result:
    if progress is not None:
        progress.advance()
    return checked


def run_example(example: Example, fixed: bool, family: str | None = None) -> list[Diagnostic]:
    """What `trainspec check` says about an example's bad (or fixed) file, sorted, named as shown.

    `family` (a name or `name@version`) checks it as that family when the example names none.
    """
    import tempfile

    text = example.good if fixed else example.bad
    run = example.options(fixed)
    with tempfile.TemporaryDirectory(prefix="trainspec-example-") as tmp:
        name = example.file(fixed)
        path = os.path.join(tmp, name)
        if text is not None:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        budget = parse_size(run.gpu_memory) if run.gpu_memory else None
        options = Options(
            family=run.family or family,
            overrides=run.overrides,
            world_sizes=run.world_sizes,
            gpu_memory=budget,
            gpu=target(run.gpu) if run.gpu else None,
        )
        found = [d for result in check_files([path], options) for d in result.diagnostics]
    return sorted((replace(d, file=name) if d.file == path else d for d in found), key=Diagnostic.sort_key)
