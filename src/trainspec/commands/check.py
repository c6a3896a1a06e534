"""`trainspec check PATHS...`: report every problem in every config file.

Paths may be files, directories or glob patterns (see `discovery`). Exit
status: 0 no errors, 1 errors, 2 usage problems (also a missing or
unreadable file, or a file of no known family).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..diagnostics import Diagnostic
from ..reporters import NAMES as REPORT_FORMATS

if TYPE_CHECKING:
    from ..overrides import Override
    from ..result import Result

MAX_WORLD_SIZES = 65536
"""More sizes than any cluster has ranks to try: a typo such as `1..1000000000` is refused, not enumerated."""

USAGE_RULES = frozenset({"file-not-found", "file-not-readable", "unknown-family", "invalid-family-schema"})


def world_size_arg(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def world_sizes_arg(text: str) -> tuple[int, ...]:
    """`8`, `8,16,64`, or a range `1..64` (both ends included); ranges and sizes mix (`8,16..18`)."""
    sizes: list[int] = []
    for part in text.split(","):
        first, dots, last = part.strip().partition("..")
        low = world_size_arg(first.strip())
        high = world_size_arg(last.strip()) if dots else low
        if high < low:
            raise argparse.ArgumentTypeError(f"the range {part.strip()!r} is empty (its end is below its start)")
        if high - low >= MAX_WORLD_SIZES or len(sizes) + high - low >= MAX_WORLD_SIZES:
            raise argparse.ArgumentTypeError(f"at most {MAX_WORLD_SIZES} world sizes at once")
        sizes.extend(range(low, high + 1))
    return tuple(dict.fromkeys(sizes))


def jobs_arg(text: str) -> int:
    return world_size_arg(text)


def register(sub: Any) -> None:
    p = sub.add_parser(
        "check",
        help="check config files and report every problem",
        description="Check config files, directories (recursively) and glob patterns. Extra arguments of the form "
        "--section.key=value are overrides too (KempnerForge style); a bare --section.key means true.",
    )
    p.add_argument("files", nargs="+", metavar="PATH", help="files, directories, globs, or - for standard input")
    p.add_argument(
        "--stdin-filename",
        metavar="PATH",
        help="with `-`: the name the piped config stands for (its extension, directives and reports use it)",
    )
    p.add_argument("--family", help="config family, NAME or NAME@VERSION (default: detected from each file)")
    p.add_argument(
        "--overlay", metavar="FILE", help="a project overlay extending a family version (implies its family)"
    )
    p.add_argument(
        "--world-size",
        type=world_sizes_arg,
        default=(),
        metavar="N[,N|A..B...]",
        help="number of ranks the job runs on; several sizes (or ranges A..B) are each checked, "
        "the file itself only once",
    )
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="PATH=VALUE",
        help="override a value before checking (repeatable); VALUE is read as YAML 1.2",
    )
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
        help="skip files of no known family instead of reporting them (for hooks that see every file)",
    )
    p.set_defaults(run=run, accepts_extras=True)


def overrides_from(
    args: argparse.Namespace, extras: Sequence[str], parser: argparse.ArgumentParser
) -> tuple[Override, ...]:
    """`--set PATH=VALUE` (YAML values), then KempnerForge's `--PATH=VALUE` (Python literals; bare = true)."""
    from ..overrides import Override

    texts = [(text, False) for text in args.overrides]
    for arg in extras:
        if not arg.startswith("--") or not ("=" in arg or "." in arg):
            parser.error(f"unrecognized argument: {arg}")
        key, eq, value = arg[2:].partition("=")
        texts.append((f"{key}={value if eq else 'True'}", True))
    return tuple(Override(n, text, python) for n, (text, python) in enumerate(texts, 1))


def split_ids(values: Sequence[str]) -> tuple[str, ...]:
    return tuple(i.strip() for v in values for i in v.split(",") if i.strip())


def collect(args: argparse.Namespace, extras: Sequence[str], parser: argparse.ArgumentParser) -> list[Result] | str:
    """The results for the files the arguments name, or a usage problem as a sentence."""
    from ..catalogue import catalogue
    from ..discovery import expand
    from ..families import UnknownFamily, all_families, get_family
    from ..formats import extensions as config_extensions
    from ..progress import Progress
    from ..runner import Options, check_files
    from ..suppressions import matches

    families = all_families()
    if args.overlay is not None:
        from ..overlay import OverlayError, load_overlay

        try:
            args.family = load_overlay(args.overlay).id
        except (OverlayError, UnknownFamily) as exc:
            return str(exc)
    if args.family is not None:
        try:
            formats = get_family(args.family).formats
        except UnknownFamily as exc:
            return str(exc)
    else:
        formats = frozenset(f for family in families.values() for f in family.formats)
    select, ignore = split_ids(args.select), split_ids(args.ignore)
    ids = [r.id for r in catalogue(families)]
    for pattern in (*select, *ignore):
        if not any(matches(i, pattern) for i in ids):
            return f"`{pattern}` (in --select/--ignore) matches no rule id; see `trainspec rules`"
    extensions = config_extensions(formats)
    texts: dict[str, str] = {}
    if "-" in args.files:
        if args.files != ["-"]:
            return "`-` (a config read from standard input) cannot be mixed with other paths"
        name = args.stdin_filename or "stdin.yaml"
        texts[name] = sys.stdin.read().removeprefix("\ufeff")
        args.files = [name]
    files, unmatched, expanded = expand(args.files, extensions) if not texts else (args.files, [], frozenset())
    options = Options(
        family=args.family,
        overrides=overrides_from(args, extras, parser),
        world_sizes=args.world_size,
        select=select,
        ignore=ignore,
        warnings_as_errors=args.warnings_as_errors,
        skip_unknown=args.skip_unknown,
        expanded=expanded,
        texts=texts,
    )
    results = check_files(files, options, args.jobs, Progress.for_stream(len(files), sys.stderr))
    return results + [_nothing_found(arg, extensions) for arg in unmatched]


def _nothing_found(arg: str, extensions: frozenset[str]) -> Result:
    """A directory or pattern that holds no config file: as a missing file would be."""
    import os

    from ..diagnostics import Severity
    from ..result import Result

    where = "in this directory" if os.path.isdir(arg) else "match this pattern"
    message = f"no config files ({', '.join(sorted(extensions))}) {where}"
    return Result(arg, None, [Diagnostic(arg, None, None, "", "file-not-found", Severity.ERROR, message)])


def run(args: argparse.Namespace, extras: Sequence[str], parser: argparse.ArgumentParser) -> int:
    from ..reporters import get_reporter

    results = collect(args, extras, parser)
    if isinstance(results, str):
        print(f"trainspec: {results}", file=sys.stderr)
        return 2
    get_reporter(args.format, color=args.color)(results, sys.stdout)
    diagnostics = [d for r in results for d in r.diagnostics]
    if any(d.rule in USAGE_RULES for d in diagnostics):
        return 2
    return 1 if any(d.is_error for d in diagnostics) else 0
