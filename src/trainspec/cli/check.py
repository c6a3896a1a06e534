"""`trainspec check PATHS...`: report every problem in every config file.

Paths may be files, directories or glob patterns (see `discovery`). Exit
status: 0 no errors, 1 errors, 2 usage problems (also a missing or
unreadable file, or a file of no known family).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, TextIO, cast

from trainspec.cli import complain
from trainspec.report.reporters import NAMES as REPORT_FORMATS
from trainspec.spec.world_sizes import parse_world_size, parse_world_sizes

if TYPE_CHECKING:
    from trainspec.engine.cache_run import Recorder
    from trainspec.engine.cache_store import Store
    from trainspec.engine.progress import Progress
    from trainspec.spec.device import Device
    from trainspec.spec.overrides import Override
    from trainspec.spec.result import Result


def world_size_arg(text: str) -> int:
    try:
        return parse_world_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def world_sizes_arg(text: str) -> tuple[int, ...]:
    """`8`, `8,16,64`, or a range `1..64` (both ends included); ranges and sizes mix (`8,16..18`)."""
    try:
        return parse_world_sizes(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def gpu_memory_arg(text: str) -> int:
    """`80GiB`, `141GB` or a number of bytes."""
    from trainspec.spec.layout_space import parse_size

    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_gpu_memory(p: argparse.ArgumentParser, does: str) -> None:
    p.add_argument(
        "--gpu-memory", type=gpu_memory_arg, metavar="SIZE", help=f"memory of one GPU (80GiB, 141GB): {does}"
    )


def gpu_arg(text: str) -> Device:
    """A GPU name (`h100`) or a compute capability (`sm_90`, `9.0`), as `device.target` reads it."""
    from trainspec.spec.device import target

    try:
        return target(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_gpu(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--gpu",
        type=gpu_arg,
        metavar="NAME",
        help="the GPU the job runs on (h100, a100-40gb, mi300x, ... or a compute capability: sm_90, 9.0): "
        "rules that depend on it are checked, and its memory is the --gpu-memory budget when that is not given",
    )


def jobs_arg(text: str) -> int:
    return world_size_arg(text)


def register(sub: Any) -> None:
    p = sub.add_parser(
        "check",
        help="check config files and report every problem",
        description="Check config files, directories (recursively) and glob patterns. Extra arguments of the form "
        "--section.key=value are overrides too (KempnerForge style); a bare --section.key means true.",
    )
    p.add_argument(
        "files",
        nargs="*",
        metavar="PATH",
        help="files, directories, globs, or - for standard input (none: every file the project configuration names)",
    )
    p.add_argument(
        "--stdin-filename",
        metavar="PATH",
        help="with `-` (required there): the path the piped config stands for; its extension names the format, "
        "its folder the project configuration, and reports use it",
    )
    family = p.add_argument("--family", help="config family, NAME or NAME@VERSION (default: detected from each file)")
    family.completer = family_ids  # read by argcomplete
    p.add_argument(
        "--overlay", metavar="FILE", help="a project overlay extending a family version (implies its family)"
    )
    p.add_argument(
        "--world-size",
        type=world_sizes_arg,
        default=(),
        metavar="N[,N|A..B...]",
        help="number of ranks the job runs on; several sizes (or ranges A..B) are each checked, "
        "the file itself only once; replaces the sizes a project configuration or file directive states",
    )
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="PATH=VALUE",
        help="override a value before checking (repeatable); VALUE is read as YAML 1.2",
    )
    add_gpu_memory(p, "an error when the family's estimate of one rank's memory exceeds it")
    add_gpu(p)
    p.add_argument("--format", choices=REPORT_FORMATS, default="text")
    p.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour and source excerpts in text output (auto: on a terminal, unless NO_COLOR is set)",
    )
    p.add_argument(
        "--jobs",
        "-j",
        type=jobs_arg,
        metavar="N",
        help="processes to check files in (default: one per CPU for many files, else 1)",
    )
    p.add_argument(
        "--select",
        action="append",
        default=[],
        metavar="IDS",
        help="report only these rule ids or id prefixes (comma-separated, repeatable)",
    )
    p.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="IDS",
        help="do not report these rule ids or id prefixes (comma-separated, repeatable)",
    )
    p.add_argument("--warnings-as-errors", action="store_true", help="report warnings as errors (and fail on them)")
    p.add_argument(
        "--skip-unknown",
        action="store_true",
        help="skip files of no known family instead of reporting them as errors (for hooks that see every file); "
        "one that looks like a family's config is still an unclaimed-config warning",
    )
    p.add_argument(
        "--force-exclude",
        action="store_true",
        help="apply the project configuration's `exclude` to files named on the command line too (for hooks)",
    )
    p.add_argument(
        "--allow-outside-links",
        action="store_true",
        help="check a config that is a symbolic link to a file outside the project (refused by default)",
    )
    p.add_argument(
        "--isolated",
        action="store_true",
        help="ignore project configurations (pyproject.toml [tool.trainspec], .trainspec.toml)",
    )
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="neither read nor write the result cache of unchanged files (also TRAINSPEC_NO_CACHE=1; "
        "the cache lives in TRAINSPEC_CACHE_DIR, else $XDG_CACHE_HOME/trainspec or ~/.cache/trainspec)",
    )
    p.add_argument(
        "--sweep",
        action="append",
        default=[],
        metavar="PATH=V1,V2,...",
        help="check every combination of these values (repeatable) in one process; reports the failing variants",
    )
    p.set_defaults(run=run, accepts_extras=True)


def family_ids(**_: Any) -> list[str]:
    """Every installed family and family version, for shell completion."""
    from trainspec.families import every_version

    return sorted({f.name for f in every_version().values()} | {f.id for f in every_version().values()})


def overrides_from(
    args: argparse.Namespace, extras: Sequence[str], parser: argparse.ArgumentParser
) -> tuple[Override, ...]:
    """`--set PATH=VALUE` (YAML values), then KempnerForge's `--PATH=VALUE` (Python literals; bare = true)."""
    if not args.overrides and not extras:
        return ()
    from trainspec.spec.overrides import from_command_line

    try:
        return from_command_line(args.overrides, extras)
    except ValueError as exc:
        parser.error(str(exc))


def collect(
    args: argparse.Namespace, extras: Sequence[str], parser: argparse.ArgumentParser, into: Store | None = None
) -> tuple[Iterator[Result], Progress | None] | str | Exception:
    """The results for the files the arguments name (streamed, in order), or a usage problem (a sentence, or
    the error that says it, line by line); `into`: the result cache's store (else the user's)."""
    from trainspec.engine.cache_store import turned_off
    from trainspec.engine.inputs import InputError, gather, results_after
    from trainspec.engine.progress import Progress
    from trainspec.engine.runner import Options, available_cpus, iter_check_files
    from trainspec.families import UnknownFamily, get_family
    from trainspec.read.suppressions import split_ids
    from trainspec.spec.formats import FORMATS
    from trainspec.spec.formats import extensions as config_extensions

    if args.overlay is not None:
        from trainspec.read.overlay import OverlayError, load_overlay

        try:
            args.family = load_overlay(args.overlay).id
        except (OverlayError, UnknownFamily) as exc:
            return exc
    if args.family is not None:
        try:
            get_family(args.family)
        except UnknownFamily as exc:
            return exc
    select, ignore = split_ids(args.select), split_ids(args.ignore)
    for pattern in (*select, *ignore):  # the catalogue costs a one-file check: built only for a pattern
        from trainspec.rules.catalogue import names_a_rule

        if not names_a_rule(pattern):
            return f"`{pattern}` (in --select/--ignore) matches no rule id; see `trainspec rules`"
    extensions = config_extensions(FORMATS)
    try:
        inputs = gather(
            args.files,
            extensions,
            stdin=sys.stdin.buffer if "-" in args.files else None,
            stdin_filename=args.stdin_filename,
            isolated=args.isolated,
            force_exclude=args.force_exclude,
        )
    except InputError as exc:
        return exc
    options = Options(
        family=args.family,
        overrides=overrides_from(args, extras, parser),
        world_sizes=args.world_size,
        select=select,
        ignore=ignore,
        warnings_as_errors=args.warnings_as_errors,
        gpu_memory=args.gpu_memory,
        gpu=args.gpu,
        skip_unknown=args.skip_unknown,
        expanded=inputs.expanded,
        texts=inputs.texts,
        use_project=not args.isolated,
        sizes_given=bool(args.world_size),
        fallback_sizes=not args.world_size,
        outside_links=args.allow_outside_links,
    )
    if args.jobs is not None and args.jobs > available_cpus():
        complain(f"--jobs {args.jobs} is more than the {available_cpus()} CPUs here; using {available_cpus()}")
    progress = Progress.for_stream(len(inputs.files), sys.stderr)
    if args.no_cache or turned_off():
        return results_after(iter_check_files(inputs.files, options, args.jobs, progress), inputs), progress
    from trainspec.engine.cache import iter_cached, store

    found = iter_cached(inputs.files, options, args.jobs, progress, into if into is not None else store())
    return results_after(found, inputs), progress


def run(args: argparse.Namespace, extras: Sequence[str], parser: argparse.ArgumentParser) -> int:
    if args.sweep:
        from trainspec.cli.check_sweep import run_sweep
        from trainspec.read.suppressions import split_ids

        selection = (split_ids(args.select), split_ids(args.ignore))
        return run_sweep(args, overrides_from(args, extras, parser), selection, parser)
    from trainspec.report.reporters import get_reporter

    recording = _recorder(args)
    found = collect(args, extras, parser, recording.store if recording is not None else None)
    if isinstance(found, (str, Exception)):
        complain(found)
        return 2
    results, progress = found
    status = 0

    def watched() -> Iterator[Result]:
        nonlocal status
        for result in results:
            status = max(status, result.exit_status)
            if progress is not None and result.diagnostics:
                progress.clear()  # the line is written again on the next file
            if recording is not None:
                recording.results += 1
            yield result

    if recording is None:
        get_reporter(args.format, color=args.color)(watched(), sys.stdout)
        return status
    stderr = sys.stderr
    sys.stderr = recording.stderr(stderr)  # anything a check says there is not in the record: none is made
    try:
        get_reporter(args.format, color=args.color)(watched(), cast(TextIO, recording.stdout(sys.stdout)))
    finally:
        sys.stderr = stderr
    recording.finish(status)
    return status


def _recorder(args: argparse.Namespace) -> Recorder | None:
    """A recorder of this run (`cache_run`), when the result cache is on and a run like it can be replayed."""
    from trainspec.engine.cache_store import turned_off

    if args.no_cache or turned_off() or (args.jobs is not None and args.jobs > _cpus()):  # --jobs: a complaint
        return None
    from trainspec.engine.cache_run import recorder

    return recorder(getattr(args, "command_line", None), args.files)


def _cpus() -> int:
    from trainspec.engine.runner import available_cpus

    return available_cpus()
