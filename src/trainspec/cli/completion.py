"""`trainspec completion SHELL`: the script that gives `trainspec` tab completion in bash, zsh or fish.

argcomplete (a maintained library that completes any argparse program) does the work: the
script calls `trainspec` back with the command line, and `cli.main` answers from the parser.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

SHELLS = ("bash", "zsh", "fish")


def register(sub: Any) -> None:
    p = sub.add_parser(
        "completion",
        help="print the shell completion script for bash, zsh or fish",
        description='Print a completion script. bash: `eval "$(trainspec completion bash)"` in ~/.bashrc; '
        'zsh: `eval "$(trainspec completion zsh)"` in ~/.zshrc; fish: '
        "`trainspec completion fish > ~/.config/fish/completions/trainspec.fish`.",
    )
    p.add_argument("shell", choices=SHELLS)
    p.set_defaults(run=run)


def run(args: argparse.Namespace, extras: Sequence[str], parser: argparse.ArgumentParser) -> int:
    import argcomplete

    sys.stdout.write(argcomplete.shellcode(["trainspec"], shell=args.shell))
    return 0
