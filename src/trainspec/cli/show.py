"""`trainspec show CONFIG`: the resolved config with each value's origin, and the quantities it implies.

Exit status: 0 the config has no errors, 1 it has some (shown first), 2
usage problems (missing file, unknown family, bad arguments).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from trainspec.cli.check import add_gpu, world_size_arg
from trainspec.spec.escaping import json_text, terminal

if TYPE_CHECKING:
    from trainspec.layouts.provenance import Shown
    from trainspec.spec.layout_space import Quantity


def register(sub: Any) -> None:
    p = sub.add_parser(
        "show",
        help="print the resolved config, where each value came from, and derived quantities",
        description="Print every value of the resolved config (file, overrides, defaults and derived values "
        "filled in) with its origin, then what the family derives from it: head dim, parameter count, "
        "tokens per step, memory per rank under the layout, and so on.",
    )
    p.add_argument("file", metavar="CONFIG")
    p.add_argument("--world-size", type=world_size_arg, metavar="N", help="number of ranks the job runs on")
    add_gpu(p)
    p.add_argument("--family", help="config family, NAME or NAME@VERSION (default: detected from the file)")
    p.add_argument(
        "--set", dest="overrides", action="append", default=[], metavar="PATH=VALUE", help="override a value first"
    )
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument(
        "--isolated",
        action="store_true",
        help="ignore project configurations (pyproject.toml [tool.trainspec], .trainspec.toml)",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace, extras: Sequence[str], parser: argparse.ArgumentParser) -> int:
    from trainspec.layouts.provenance import show
    from trainspec.read.project import ProjectError

    try:
        shown = show(
            args.file,
            family=args.family,
            overrides=args.overrides,
            world_size=args.world_size,
            gpu=args.gpu,
            use_project=not args.isolated,
        )
    except ProjectError as exc:
        print(f"trainspec: {exc}", file=sys.stderr)
        return 2
    if args.format == "json":
        # a TOML date is shown as written; a non-finite number as "NaN" or "Infinity" (strict JSON)
        sys.stdout.write(json_text(as_json(shown), indent=2, default=str) + "\n")
    else:
        sys.stdout.write(as_text(shown))
    return shown.exit_status


def as_json(shown: Shown) -> dict[str, Any]:
    return {
        "version": 1,
        "file": shown.file,
        "family": shown.family.id if shown.family else None,
        "world_size": shown.world_size,
        "world_size_from": shown.world_size_from or None,
        "values": [{"path": leaf.path, "value": leaf.value, "origin": leaf.origin} for leaf in shown.leaves],
        "derived": {q.name: {"value": q.value, "unit": q.unit, "how": q.how} for q in shown.quantities},
        "note": shown.note or None,
        "diagnostics": [d.to_dict() for d in shown.diagnostics],
    }


def as_text(shown: Shown) -> str:
    lines = [d.one_line() for d in shown.diagnostics if d.is_error]
    if shown.family is not None:
        size = f" at world size {shown.world_size}" if shown.world_size else " at no world size (none given)"
        size += f" (from {terminal(shown.world_size_from)})" if shown.world_size_from else ""
        lines.append(f"{terminal(shown.file)} ({shown.family.id}){size}")
    shown_leaves = [(terminal(f"{leaf.path} = {_value(leaf.value)}"), leaf) for leaf in shown.leaves]
    width = min(max((len(text) for text, _ in shown_leaves), default=0), 60)
    for text, leaf in shown_leaves:
        lines.append(f"  {text:<{width}}  {terminal(leaf.origin)}")
    if shown.quantities:
        lines.append("derived:")
        lines += [f"  {q.name} = {_quantity(q)}  ({q.how})" for q in shown.quantities]
    if shown.note:
        lines.append(shown.note)
    return "\n".join(lines) + "\n"


def _value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _quantity(q: Quantity) -> str:
    if q.value is None:
        return "unknown"
    if q.unit == "bytes" and isinstance(q.value, int):
        return f"{q.value / 2**30:.2f} GiB ({q.value:,} bytes)"
    return f"{q.value:,}" if isinstance(q.value, int) else str(q.value)
