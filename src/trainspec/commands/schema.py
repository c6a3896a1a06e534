"""`trainspec schema FAMILY`: print the schema editors load for a family (see `editor_schema`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from ..editor_schema import NotEditorSafe, editor_schema_text
from ..families import UnknownFamily, get_family


def register(sub: Any) -> None:
    p = sub.add_parser(
        "schema",
        help="print the JSON Schema editors load for a family",
        description="Print the self-contained JSON Schema that editors (VS Code, Neovim, JetBrains) load "
        "for a config family: the canonical schema in the form taplo and yaml-language-server both "
        "enforce completely.",
    )
    p.add_argument("family", metavar="FAMILY")
    p.set_defaults(run=run)


def run(args: argparse.Namespace, extras: Sequence[str], parser: argparse.ArgumentParser) -> int:
    try:
        family = get_family(args.family)
    except UnknownFamily as exc:
        print(f"trainspec: {exc}", file=sys.stderr)
        return 2
    try:
        sys.stdout.write(editor_schema_text(family.name))
    except NotEditorSafe as exc:
        print(f"trainspec: the {family.name} schema cannot be served to editors: {exc}", file=sys.stderr)
        return 1
    return 0
