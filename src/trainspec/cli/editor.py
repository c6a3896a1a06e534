"""`trainspec editor init|annotate`: tie config files to their schemas in editors (see `workspace`)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from trainspec.cli import complain
from trainspec.editor.workspace import SCHEMA_DIR, EditorError, annotate, init, workspace_root
from trainspec.families import UnknownFamily, all_families, get_family
from trainspec.write.safe_write import WriteRefused


def register(sub: Any) -> None:
    p = sub.add_parser(
        "editor",
        help="connect config files to their schemas in editors",
        description="Set up editor autocompletion, documentation and checking of configs.",
    )
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    i = actions.add_parser(
        "init",
        help="write or merge .vscode/settings.json associations",
        description="Write the editor schemas into the workspace and associate globs with them in "
        ".vscode/settings.json (yaml.schemas, json.schemas, evenBetterToml.schema.associations), "
        "keeping every other setting. Without GLOBS, each family gets its default globs.",
    )
    i.add_argument("globs", nargs="*", metavar="GLOB", help="files of --family, e.g. 'configs/**/*.toml'")
    i.add_argument("--family", help="the family the globs belong to (default: every family)")
    a = actions.add_parser(
        "annotate",
        help="put a schema comment at the top of config files",
        description="Insert `# yaml-language-server: $schema=...` (YAML) or `#:schema ...` (TOML) as the "
        "first line, replacing an earlier one; other comments are kept. Running it twice changes nothing.",
    )
    a.add_argument("files", nargs="+", metavar="FILE")
    a.add_argument("--family", help="config family (default: detected from each file)")
    for q in (i, a):
        q.add_argument(
            "--root",
            type=Path,
            help="workspace root (default: the nearest folder above holding .trainspec/, else a repository root "
            "or .vscode/, else the working directory: above the working directory for init, above each file for "
            "annotate, which refuses a file outside all of them)",
        )
        q.add_argument(
            "--schema-dir",
            type=Path,
            default=SCHEMA_DIR,
            help=f"where the schemas go, relative to the root or absolute (default: {SCHEMA_DIR.as_posix()})",
        )
    p.set_defaults(run=run)


def run(args: argparse.Namespace, extras: Sequence[str], parser: argparse.ArgumentParser) -> int:
    try:
        if args.family is not None:
            get_family(args.family)
        if args.action == "init":
            if args.globs and args.family is None:
                raise EditorError("give --family for the globs")
            families = [get_family(args.family)] if args.family else list(all_families().values())
            init(args.root or workspace_root(Path.cwd()), families, args.globs, args.schema_dir)
        elif annotate([Path(f) for f in args.files], args.family, args.root, args.schema_dir):
            return 2
    except (EditorError, UnknownFamily, WriteRefused) as exc:
        complain(exc)
        return 2
    return 0
