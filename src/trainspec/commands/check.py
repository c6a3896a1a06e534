"""`trainspec check FILES...`: report every problem in every file."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

USAGE_RULES = frozenset({"file-not-found", "file-not-readable", "unknown-family"})


def world_size_arg(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def register(sub: Any) -> None:
    p = sub.add_parser(
        "check",
        help="check config files and report every problem",
        description="Check config files. Extra arguments of the form --section.key=value are "
        "overrides too (KempnerForge style); a bare --section.key means true.",
    )
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--family", help="config family (default: detected from each file)")
    p.add_argument("--world-size", type=world_size_arg, metavar="N", help="number of ranks the job runs on")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="PATH=VALUE",
                   help="override a value before checking (repeatable); VALUE is read as YAML 1.2")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(run=run, accepts_extras=True)


def style_overrides(extras: Sequence[str], parser: argparse.ArgumentParser) -> list[str]:
    """`--model.dim=4096` and bare `--train.compile_model` (true), as KempnerForge reads them."""
    out = []
    for arg in extras:
        if not arg.startswith("--") or not ("=" in arg or "." in arg):
            parser.error(f"unrecognized argument: {arg}")
        key, eq, value = arg[2:].partition("=")
        if not eq:
            value = "true"
        elif value == "None":
            value = "null"
        out.append(f"{key}={value}")
    return out


def run(args: argparse.Namespace, extras: Sequence[str], parser: argparse.ArgumentParser) -> int:
    from ..api import check_path
    from ..families import UnknownFamily, get_family
    from ..reporters import get_reporter

    overrides = args.overrides + style_overrides(extras, parser)
    if args.family is not None:
        try:
            get_family(args.family)
        except UnknownFamily as exc:
            print(f"trainspec: {exc}", file=sys.stderr)
            return 2
    results = [check_path(f, family=args.family, overrides=overrides, world_size=args.world_size)
               for f in args.files]
    get_reporter(args.format)(results, sys.stdout)
    diagnostics = [d for r in results for d in r.diagnostics]
    if any(d.rule in USAGE_RULES for d in diagnostics):
        return 2
    return 1 if any(d.is_error for d in diagnostics) else 0
