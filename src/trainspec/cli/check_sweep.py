"""`trainspec check CONFIG --sweep PATH=V1,V2,...`: every combination of the sweeps, in one process.

Text output lists the failing variants, each with its assignments and
diagnostics (and, at several world sizes, the sizes it passes at: a variant
fails if it fails at any of them), then a summary (`12 of 1,000 variants
fail`); JSON lists every variant. Exit status: 0 every variant passes, 1 a variant fails, 2 usage problems.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from trainspec.cli import complain
from trainspec.spec.diagnostics import Diagnostic
from trainspec.spec.escaping import json_text, terminal

if TYPE_CHECKING:
    from trainspec.engine.sweeper import Sweep
    from trainspec.spec.overrides import Override

FORMATS = ("text", "json")


def run_sweep(
    args: argparse.Namespace,
    overrides: Sequence[Override],
    selection: tuple[Sequence[str], Sequence[str]],
    parser: argparse.ArgumentParser,
) -> int:
    """The sweep `check` was asked for: its overrides, (--select, --ignore) as `check` reads them."""
    from trainspec.engine.runner import Options
    from trainspec.engine.sweeper import SweepError, parse_axis, sweep
    from trainspec.families import UnknownFamily
    from trainspec.read.overlay import OverlayError, load_overlay
    from trainspec.read.project import ProjectError

    if len(args.files) != 1 or args.files == ["-"]:
        parser.error("--sweep checks one config file")
    if args.format not in FORMATS:
        parser.error(f"--sweep reports as {' or '.join(FORMATS)}, not {args.format}")
    file = args.files[0]
    try:
        options = Options(  # as `check` builds them for a file, then with the file's project settings
            family=load_overlay(args.overlay).id if args.overlay is not None else args.family,
            overrides=tuple(overrides),
            world_sizes=args.world_size,
            select=tuple(selection[0]),
            ignore=tuple(selection[1]),
            warnings_as_errors=args.warnings_as_errors,
            use_project=not args.isolated,
            sizes_given=bool(args.world_size),
            fallback_sizes=not args.world_size,
            gpu=args.gpu,
        ).for_file(file)
        found = sweep(
            file,
            [parse_axis(text) for text in args.sweep],
            family=options.family,
            overrides=options.overrides,
            world_size=options.world_sizes,
            select=options.select,
            ignore=options.ignore,
            warnings_as_errors=options.warnings_as_errors,
            fallback_sizes=options.fallback_sizes,
            gpu=options.gpu,
            sizes_given=options.sizes_given,
        )
    except (SweepError, OverlayError, UnknownFamily, ProjectError) as exc:
        complain(exc)
        return 2
    if not found.variants:  # the file could not be checked at all: report it as `check` would
        from trainspec.report.reporters import get_reporter

        get_reporter(args.format, color=args.color)([found.base], sys.stdout)
        return found.base.exit_status
    (report_json if args.format == "json" else report_text)(found, sys.stdout)
    return 1 if found.failing else 0


def report_text(found: Sweep, out: TextIO) -> None:
    from trainspec.engine.sweeper import reported

    for variant in found.failing:
        assigned = " ".join(f"{path}={value}" for path, value in variant.assignments)
        out.write(terminal(f"{found.file} [{assigned}]") + "\n")
        for d in sorted(reported(variant), key=Diagnostic.sort_key):
            out.write(f"  {d.one_line()}\n")
        if len(found.world_sizes) > 1:
            passes = found.passes_at(variant)
            only = f"passes only at world size{'s' if len(passes) > 1 else ''} {_sizes(passes)}"
            where = only if passes else "fails at every world size listed"
            out.write(f"  {where}\n")
    total, failing = len(found.variants), len(found.failing)
    summary = f"{failing:,} of {total:,} variant{'s' if total != 1 else ''} fail{'s' if total == 1 else ''}"
    if len(found.world_sizes) > 1:
        summary += f" (a variant fails if it fails at any of the world sizes {_sizes(found.world_sizes)})"
    elif found.world_sizes:
        summary += f" (at world size {found.world_sizes[0]})"
    else:
        summary += " (no world size given: world-size rules not checked)"
    out.write(summary + "\n")


def _sizes(sizes: Sequence[int]) -> str:
    from trainspec.spec.world_sizes import sizes_text

    return sizes_text(list(sizes))


def report_json(found: Sweep, out: TextIO) -> None:
    from trainspec.engine.sweeper import reported
    from trainspec.report.json import diagnostic_json

    doc = {
        "version": 1,
        "file": found.file,
        "family": found.base.family.id if found.base.family else None,
        "sweep": [{"path": axis.path, "values": list(axis.values)} for axis in found.axes],
        "variants": [
            {
                "assignments": [{"path": path, "value": value} for path, value in variant.assignments],
                "ok": variant.ok,
                "passes_at_world_sizes": list(found.passes_at(variant)),
                "diagnostics": [diagnostic_json(d) for d in sorted(reported(variant), key=Diagnostic.sort_key)],
            }
            for variant in found.variants
        ],
        "world_sizes": list(found.world_sizes),
        "summary": {"variants": len(found.variants), "failing": len(found.failing)},
    }
    out.write(json_text(doc, indent=2) + "\n")
