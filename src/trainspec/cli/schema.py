"""`trainspec schema FAMILY`: print the schema editors load for a family (see `editor_schema`);
`trainspec schema diff A B`: what changes between two family versions (see `schema_diff`)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from trainspec.cli import complain
from trainspec.editor.schema import NotEditorSafe, editor_schema_text
from trainspec.families import UnknownFamily, get_family, versions_of


def register(sub: Any) -> None:
    p = sub.add_parser(
        "schema",
        help="print the JSON Schema editors load for a family, or diff two family versions",
        description="`trainspec schema FAMILY[@VERSION]` prints the self-contained JSON Schema that editors "
        "(VS Code, Neovim, JetBrains) load for a config family: the canonical schema in the form taplo and "
        "yaml-language-server both enforce completely. `trainspec schema diff A B` lists what changes from "
        "version A to version B (e.g. kempnerforge@089fbbd kempnerforge@5666d0d): fields added and removed, "
        "changed types, defaults, bounds and allowed values, and rules added, removed and changed.",
    )
    p.add_argument("names", nargs="*", metavar="FAMILY | diff A B")
    p.add_argument("--format", choices=("text", "json"), default="text", help="output of `diff` (default: text)")
    p.add_argument("--overlay", metavar="FILE", help="print the editor schema of this project overlay's family")
    p.set_defaults(run=run)


def run(args: argparse.Namespace, extras: Sequence[str], parser: argparse.ArgumentParser) -> int:
    names: list[str] = args.names
    if args.overlay is not None:
        from trainspec.read.overlay import OverlayError, load_overlay

        try:
            names = [load_overlay(args.overlay).id]
        except (OverlayError, UnknownFamily) as exc:
            complain(exc)
            return 2
    if names and names[0] == "diff":
        if len(names) != 3:
            parser.error("schema diff takes two family versions: trainspec schema diff A B")
        return _diff(names[1], names[2], args.format)
    if len(names) != 1:
        parser.error("give one family (or --overlay FILE), or `diff A B`")
    try:
        family = get_family(names[0])
    except UnknownFamily as exc:
        complain(exc)
        return 2
    try:
        sys.stdout.write(editor_schema_text(family.id))
    except NotEditorSafe as exc:
        complain(f"the {family.id} schema cannot be served to editors: {exc}")
        return 1
    return 0


def _diff(a: str, b: str, fmt: str) -> int:
    from trainspec.rules.schema_diff import as_dict, diff, render_text

    try:
        old, new = get_family(a), get_family(b)
    except UnknownFamily as exc:
        complain(exc)
        return 2
    if old.name != new.name:
        versions = ", ".join(f.id for f in versions_of(old.name))
        complain(
            f"schema diff compares two versions of one family; {old.name} and {new.name} are different "
            f"families (versions of {old.name}: {versions})"
        )
        return 2
    changes = diff(old, new)
    if fmt == "json":
        sys.stdout.write(json.dumps(as_dict(old, new, changes), indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(render_text(old, new, changes))
    return 0
