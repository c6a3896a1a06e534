"""The command line: one module per command under `commands/`; exit codes decided here.

Exit status: 0 no errors (warnings allowed), 1 a config has errors,
2 usage problems (unknown family, missing file, bad arguments).
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Sequence

COMMANDS = ("check", "rules", "explain", "migrate", "schema", "editor")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="trainspec", description="Validate ML training-run configs.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"trainspec.commands.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extras = parser.parse_known_args(argv)
    if extras and not getattr(args, "accepts_extras", False):
        parser.error("unrecognized arguments: " + " ".join(extras))
    try:
        return int(args.run(args, extras, parser))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 1
