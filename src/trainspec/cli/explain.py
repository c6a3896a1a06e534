"""`trainspec explain RULE`: a rule's documentation, a config that breaks it, and the fix.

The example is run as shown, so the output printed under it is what
`trainspec check` really says today.
"""

from __future__ import annotations

import argparse
import difflib
import sys
import textwrap
from collections.abc import Sequence
from typing import Any

from trainspec.cli import complain
from trainspec.rules.catalogue import RuleInfo


def register(sub: Any) -> None:
    p = sub.add_parser(
        "explain",
        help="document one rule, with an example that breaks it and the fix",
        description="Print a rule's documentation, an example config that breaks it, what "
        "`trainspec check` says about it, and the fixed config.",
    )
    p.add_argument("rule", metavar="RULE", help="a rule id, as `trainspec rules` lists them")
    p.set_defaults(run=run)


def render(info: RuleInfo) -> str:
    from trainspec.engine.runner import run_example

    where = "every family" if info.family == "engine" else f"family {info.family}"
    lines = [f"{info.id} ({info.severity.value}, {where})"]
    if info.paths:
        lines.append("paths: " + ", ".join(info.paths))
    if info.category is not None:
        lines.append(f"category: {info.category.value}")
    lines += ["", info.doc.strip(), ""]
    example = info.example
    if example is None:
        lines.append("(no example yet)")
        return "\n".join(lines) + "\n"
    if example.bad is not None:
        lines += [f"Example ({example.file(False)}):", "", textwrap.indent(example.bad.rstrip("\n"), "    "), ""]
    lines += ["Example:" if example.bad is None else "Output:", "", "    $ " + example.command(False)]
    lines += [textwrap.indent(_line(d), "    ") for d in run_example(example, fixed=False) if d.rule == info.id]
    lines += ["", f"Fix ({example.file(True)}):", "", textwrap.indent(example.good.rstrip("\n"), "    ")]
    if example.options(True) != example.options(False):
        lines += ["", "    $ " + example.command(True)]
    return "\n".join(lines) + "\n"


def _line(d: Any) -> str:
    from trainspec.report.text import format_line

    return format_line(d)


def run(args: argparse.Namespace, extras: Sequence[str], parser: argparse.ArgumentParser) -> int:
    from trainspec.rules.catalogue import catalogue

    infos = [i for i in catalogue() if i.id == args.rule]
    if not infos:
        ids = sorted({i.id for i in catalogue()})
        close = difflib.get_close_matches(args.rule, ids, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else "; see `trainspec rules`"
        complain(f"no rule {args.rule!r}{hint}")
        return 2
    sys.stdout.write("\n".join(render(i) for i in infos))
    return 0
