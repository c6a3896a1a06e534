"""`trainspec migrate FILE`: rewrite a config's legacy keys in their canonical places (see `trainspec.write.migrate`).

Exit status: 0 migrated or nothing to do, 1 the file has problems (nothing
written), 2 usage errors, and a write refused or failed (`safe_write`: the
file is left as it was).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path as FsPath
from typing import Any

from trainspec.cli import complain
from trainspec.families import UnknownFamily
from trainspec.spec.codes import UNKNOWN_KEY
from trainspec.spec.diagnostics import Diagnostic
from trainspec.spec.document import ReadError
from trainspec.spec.escaping import terminal
from trainspec.spec.result import exit_status
from trainspec.write.migrate import MigrateError, Migration, migrate, unified_diff
from trainspec.write.safe_write import WriteRefused, write_text


def register(sub: Any) -> None:
    p = sub.add_parser(
        "migrate",
        help="rewrite legacy keys of a config file in canonical form",
        description="Move legacy keys to their canonical places, keeping comments, key order and formatting "
        "of everything else. Conflicts are reported and nothing is written.",
    )
    p.add_argument("file", metavar="FILE")
    p.add_argument("--family", help="config family (default: detected from the file)")
    p.add_argument("--diff", action="store_true", help="print a unified diff instead of writing the file")
    p.set_defaults(run=run)


def run(args: argparse.Namespace, extras: Sequence[str], parser: argparse.ArgumentParser) -> int:
    file: str = args.file
    try:
        result = migrate(file, args.family)
    except ReadError as exc:
        print(exc.diagnostic.one_line(), file=sys.stderr)
        return exit_status(exc.outcome, ok=False)
    except (MigrateError, UnknownFamily) as exc:
        complain(exc)
        return 2
    for d in sorted(result.diagnostics, key=Diagnostic.sort_key):
        print(d.one_line(), file=sys.stderr)
    if result.new_text is None:
        print(terminal(f"{file}: {result.note}"), file=sys.stderr if result.failed else sys.stdout)
        return 1 if result.failed else 0
    if args.diff:
        sys.stdout.writelines(unified_diff(result))
        return 0
    errors = errors_left(result)
    if errors:
        for d in errors:
            print(d.one_line(), file=sys.stderr)
        print(terminal(f"{file}: not migrated: fix the errors above first (nothing was written)"), file=sys.stderr)
        return 1
    try:
        write_text(FsPath(file), result.new_text, expected=result.text)
    except WriteRefused as exc:
        complain(exc)
        return 2
    moved = len(result.diagnostics)
    print(terminal(f"{file}: migrated {moved} legacy key{'s' if moved != 1 else ''}"))
    return 0


def errors_left(result: Migration) -> list[Diagnostic]:
    """Why the rewritten text must not be written: the file's keys its family does not know (checked with
    the legacy keys moved; a misspelled legacy key would stay behind), else every error the rewritten text
    has that the file as checked did not (a rewrite must read as the migration meant)."""
    from trainspec.engine.pipeline import check_path

    assert result.new_text is not None
    found = []
    for text in (result.text, result.new_text):
        checked = check_path(result.file, text=text, family=result.family)
        found.append(sorted((d for d in checked.diagnostics if d.is_error), key=Diagnostic.sort_key))
    unknown = [d for d in found[0] if d.rule == UNKNOWN_KEY.id]
    had = {(d.rule, d.config_path, d.message) for d in found[0]}
    return unknown or [d for d in found[1] if (d.rule, d.config_path, d.message) not in had]
