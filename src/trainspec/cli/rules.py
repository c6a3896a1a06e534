"""`trainspec rules [FAMILY]`: every rule id a check can report, one line each.

Each line: id, severity, summary, and the config paths the rule reads. The engine's ids
come last, grouped by the stage of a check that reports them (`codes.Category`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from trainspec.cli import complain


def register(sub: Any) -> None:
    p = sub.add_parser(
        "rules",
        help="list every rule (id, severity, paths, summary)",
        description="List the rules of every family (or of FAMILY), then the engine's own ids, "
        "which every family can report. `trainspec explain ID` documents one.",
    )
    p.add_argument("family", nargs="?", help="only this family's rules (and the engine's)")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(run=run)


def run(args: argparse.Namespace, extras: Sequence[str], parser: argparse.ArgumentParser) -> int:
    from trainspec.families import UnknownFamily, all_families, get_family
    from trainspec.rules.catalogue import catalogue

    try:
        families = {(f := get_family(args.family)).name: f} if args.family else all_families()
    except UnknownFamily as exc:
        complain(exc)
        return 2
    infos = catalogue(families)
    if args.format == "json":
        rows = [
            {
                "id": i.id,
                "family": i.family,
                "severity": i.severity.value,
                "paths": list(i.paths),
                "summary": i.summary,
                "source": i.source,
                "category": i.category.tag if i.category else None,
                "follows": families[i.family].follows if i.family in families else None,
            }
            for i in infos
        ]
        json.dump(rows, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    width = max(len(i.id) for i in infos)
    family = category = None
    for i in infos:
        if i.family != family:
            family = i.family
            follows = families[family].follows if family in families else ""
            title = (
                "engine (every family)"
                if family == "engine"
                else families[family].id + (f" (follows {follows})" if follows else "")
            )
            sys.stdout.write(("\n" if i is not infos[0] else "") + f"{title}\n")
        if i.category is not None and i.category != category:
            category = i.category
            sys.stdout.write(f"  {category.value}:\n")
        paths = f"  [{', '.join(i.paths)}]" if i.paths else ""
        sys.stdout.write(f"  {i.id:<{width}}  {i.severity.value:<7}  {i.summary}{paths}\n")
    return 0
