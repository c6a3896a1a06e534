"""Regenerate the expected output of the diagnostics snapshot suite (tests/data/diagnostics/).

    python tools/update_snapshots.py            # rewrite every case's expected output
    python tools/update_snapshots.py CASE...    # only these cases (their config file names)
    python tools/update_snapshots.py --check    # exit 1 when an expected output is stale

A case is a broken config and, beside it, `<config>.out`: its first line is the command
(`$ trainspec check --world-size 8 job.toml`), the rest what `trainspec check --color never`
prints for it (the whole text output: messages, source excerpts, summary). A config with no
`.out` yet is run as `trainspec check <config>`; write the first line by hand to give it options.
tests/test_diagnostics_snapshots.py compares every case. Read each rewritten file before keeping
it: a message belongs there when someone can fix the config from it in one read.
"""

from __future__ import annotations

import argparse
import io
import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from trainspec.engine.runner import Options, check_files
from trainspec.families.installed import IGNORE
from trainspec.read.suppressions import split_ids
from trainspec.report.reporters import get_reporter
from trainspec.spec.overrides import from_command_line
from trainspec.spec.world_sizes import parse_world_sizes

CASES = Path(__file__).resolve().parent.parent / "tests" / "data" / "diagnostics"
PROMPT = "$ trainspec check "


def cases() -> list[Path]:
    """Every case's config file, by name."""
    return sorted(p for p in CASES.iterdir() if p.suffix != ".out" and not p.name.startswith("."))


def expected_path(config: Path) -> Path:
    return config.with_name(config.name + ".out")


def command_of(config: Path) -> str:
    """The case's command line: the first line of its expected output, else a plain check of the file."""
    out = expected_path(config)
    if out.exists():
        first = out.read_text(encoding="utf-8").split("\n", 1)[0]
        if first.startswith(PROMPT):
            return first
    return PROMPT + config.name


def _parser() -> argparse.ArgumentParser:
    """The options of `trainspec check` a case may use (`--color never` is implied)."""
    p = argparse.ArgumentParser(prog="trainspec check")
    p.add_argument("files", nargs="+")
    p.add_argument("--family")
    p.add_argument("--world-size", type=parse_world_sizes, default=())
    p.add_argument("--set", dest="overrides", action="append", default=[])
    p.add_argument("--select", action="append", default=[])
    p.add_argument("--ignore", action="append", default=[])
    p.add_argument("--warnings-as-errors", action="store_true")
    return p


def render(config: Path) -> str:
    """The case's command line and what `trainspec check --color never` prints for it, run in its folder."""
    command = command_of(config)
    parser = _parser()
    args, extras = parser.parse_known_args(shlex.split(command.removeprefix(PROMPT)))
    try:
        overrides = from_command_line(args.overrides, extras)
    except ValueError as exc:
        parser.error(str(exc))
    options = Options(
        family=args.family,
        overrides=overrides,
        world_sizes=args.world_size,
        select=split_ids(args.select),
        ignore=split_ids(args.ignore),
        warnings_as_errors=args.warnings_as_errors,
    )
    here = os.getcwd()
    os.chdir(config.parent)
    try:
        results = check_files(args.files, options, jobs=1)
    finally:
        os.chdir(here)
    out = io.StringIO()
    get_reporter("text", color="never")(results, out)
    return f"{command}\n{out.getvalue()}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", metavar="CASE", help="config file names (default: every case)")
    parser.add_argument("--check", action="store_true", help="report stale expected outputs, write nothing")
    args = parser.parse_args(argv)
    os.environ[IGNORE] = "1"  # as the snapshot test runs: the trainer packages installed here pick no version
    chosen = [CASES / n for n in args.names] if args.names else cases()
    stale = []
    for config in chosen:
        if not config.exists():
            print(f"no case {config.name} in {CASES}", file=sys.stderr)
            return 2
        text = render(config)
        out = expected_path(config)
        if out.exists() and out.read_text(encoding="utf-8") == text:
            continue
        stale.append(config.name)
        if not args.check:
            out.write_text(text, encoding="utf-8")
    verb = "stale" if args.check else "rewrote"
    print(f"{verb} {len(stale)} of {len(chosen)} cases" + (": " + ", ".join(stale) if stale else ""))
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
