"""`trainspec plan CONFIG --gpus N[,M...]`: every parallel layout the config's family accepts, ranked.

`--apply N` writes into the file every value of the N-th layout that differs
from the file's own (a `--set` of a layout value included), keeping its
comments, once the rewritten file checks clean at that size with the `--set`s
that do not touch a layout value.
Exit status: 0 at least one layout at every size (or the layout written), 1 a
size without one (or errors no layout changes, or a config that cannot be
checked), 2 usage problems (no layout declared, bad arguments, a file that
cannot be rewritten).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from trainspec.cli import complain
from trainspec.cli.check import add_gpu, add_gpu_memory, world_size_arg, world_sizes_arg

if TYPE_CHECKING:
    from trainspec.layouts.planner import Plan


def register(sub: Any) -> None:
    p = sub.add_parser(
        "plan",
        help="list the parallel layouts that pass every rule at a number of GPUs",
        description="List every parallel layout of the config's family that passes its rules at each number "
        "of GPUs, best first, each as the --set overrides that select it from the file.",
    )
    p.add_argument("file", metavar="CONFIG")
    p.add_argument(
        "--gpus", type=world_sizes_arg, required=True, metavar="N[,M|A..B...]", help="world sizes to plan for"
    )
    p.add_argument("--gpus-per-node", type=world_size_arg, metavar="K", help="GPUs in one node (ranks TP within one)")
    p.add_argument("--family", help="config family, NAME or NAME@VERSION (default: detected from the file)")
    p.add_argument(
        "--set", dest="overrides", action="append", default=[], metavar="PATH=VALUE", help="override a value first"
    )
    add_gpu_memory(p, "leave out the layouts whose estimated memory per rank exceeds it, rank the rest by headroom")
    add_gpu(p)
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument(
        "--apply", type=world_size_arg, metavar="N", help="write the N-th layout listed into the file (one --gpus)"
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace, extras: Sequence[str], parser: argparse.ArgumentParser) -> int:
    from trainspec.layouts.planner import PlanError, plan

    if args.apply is not None and len(args.gpus) != 1:
        parser.error("--apply writes the layout of one world size: give --gpus a single number")
    from trainspec.engine.progress import Progress

    shown = Progress.for_stream(len(args.gpus), sys.stderr, "planned {done}/{total} world sizes")
    try:
        plans = plan(
            args.file,
            args.gpus,
            family=args.family,
            overrides=args.overrides,
            gpus_per_node=args.gpus_per_node,
            gpu_memory=args.gpu_memory,
            gpu=args.gpu,
            progress=None if shown is None else lambda done, total: shown.advance(),
        )
    except PlanError as exc:
        if shown is not None:
            shown.close()
        for d in exc.diagnostics:  # a config that cannot be checked: its errors as `check` reports them
            print(d.one_line(), file=sys.stderr)
        complain(exc)
        return exc.exit_status
    if shown is not None:
        shown.close()
    if args.apply is not None:
        return apply(plans[0], args.apply, args.overrides)
    if args.format == "json":
        from trainspec.spec.escaping import json_text

        sys.stdout.write(json_text({"version": 1, "plans": [as_json(p, args.gpus_per_node) for p in plans]}, indent=2))
        sys.stdout.write("\n")
    else:
        for found in plans:
            sys.stdout.write(as_text(found, args.gpus_per_node))
        if len(plans) > 1:
            sys.stdout.write(by_size(plans) + "\n")
    return 0 if all(p.layouts for p in plans) else 1


def by_size(plans: Sequence[Plan]) -> str:
    """The last line of a plan at several sizes: where a layout passes and where none does, at a glance."""
    from trainspec.spec.world_sizes import sizes_text

    some = [p.world_size for p in plans if p.layouts]
    none = [p.world_size for p in plans if not p.layouts]
    parts = [f"a layout passes at {sizes_text(some)}"] if some else []
    parts += [f"none passes at {sizes_text(none)}"] if none else []
    return f"{len(plans):,} world sizes planned: " + "; ".join(parts)


def as_json(found: Plan, gpus_per_node: int | None) -> dict[str, Any]:
    assert found.family.layout is not None
    return {
        "file": found.file,
        "family": found.family.id,
        "world_size": found.world_size,
        "gpus_per_node": gpus_per_node,
        "heuristic": found.family.layout.heuristic,
        "nearest": _nearest_rank(found),
        "pinned_world_sizes": list(found.pinned),
        "layouts": [
            {
                "values": layout.values,
                "overrides": list(layout.overrides),
                "warnings": list(layout.warnings),
                **({"memory_per_rank": layout.memory} if layout.memory is not None else {}),
                **({"resolved": layout.resolved} if layout.resolved else {}),
            }
            for layout in found.layouts
        ],
        "blocking": [d.to_dict() for d in found.blocking],
        "ruled_out": found.ruled_out,
    }


def as_text(found: Plan, gpus_per_node: int | None) -> str:
    from trainspec.rules.gpu_memory import gib
    from trainspec.spec.escaping import terminal

    assert found.family.layout is not None
    per_node = f", {gpus_per_node} per node" if gpus_per_node else ""
    head = f"{terminal(found.file)} at {found.world_size} GPUs{per_node} ({found.family.id}): "
    if found.blocking:
        lines = [head + "errors no layout changes; fix them first"]
        lines += [f"  {d.one_line()}" for d in found.blocking]
        return "\n".join(lines) + "\n"
    if not found.layouts:
        refused = ", ".join(f"{rule} ({count:,})" for rule, count in found.ruled_out.items())
        return head + f"no layout passes every rule; the candidates fail {refused or 'nothing (there are none)'}\n"
    ranked = found.family.layout.heuristic
    if any(layout.memory is not None for layout in found.layouts):
        ranked = f"the most memory left under --gpu-memory (the family's estimate per rank), then {ranked}"
    lines = [head + f"{len(found.layouts)} layout(s) pass, best first", f"ranked by: {ranked}"]
    if found.pinned and found.world_size not in found.pinned:
        lines.append(_pinned_note(found))
    lines.append(f"closest to the file: layout {_nearest_rank(found)}")
    width = len(str(len(found.layouts)))
    for n, layout in enumerate(found.layouts, 1):
        shape = layout.resolved or " ".join(
            f"{path.rpartition('.')[2]}={value}" for path, value in layout.values.items()
        )
        select = " ".join(f"--set {o}" for o in layout.overrides) or _as_it_is(found, layout)
        memory = f"   (estimated {gib(layout.memory)} per rank)" if layout.memory is not None else ""
        lines.append(f"  {n:>{width}}. {shape}   {select}{memory}")
        lines += [f"  {'':>{width}}  warning: {w}" for w in layout.warnings]
    return "\n".join(lines) + "\n"


def _as_it_is(found: Plan, layout: Any) -> str:
    from trainspec.layouts.planner import file_changes

    return "(the file with the --sets given)" if file_changes(found, layout) else "(the file as it is)"


def _pinned_note(found: Plan) -> str:
    sizes = ",".join(map(str, found.pinned))
    return (
        f"note: the file pins its world size to {sizes} (`# trainspec: world-size={sizes}`); "
        f"a layout at {found.world_size} GPUs cannot be written into it (--apply) unless the directive changes"
    )


def _nearest_rank(found: Plan) -> int | None:
    """The 1-based place of the layout that changes the fewest of the file's values."""
    from trainspec.layouts.planner import nearest

    closest = nearest(found)
    return None if closest is None else found.layouts.index(closest) + 1


def apply(found: Plan, rank: int, overrides: Sequence[str]) -> int:
    """Write the `rank`-th layout into the file (see `plan_apply`); say what was written, or why not."""
    from trainspec.layouts.apply import NotWritten, write_layout
    from trainspec.spec.escaping import terminal
    from trainspec.spec.wording import show

    if found.blocking or not found.layouts:
        sys.stderr.write(as_text(found, None))
        return 1
    try:
        changes = write_layout(found, rank, overrides)
    except NotWritten as exc:
        for d in exc.diagnostics:
            print(d.one_line(), file=sys.stderr)
        complain(exc)
        return 2 if exc.usage else 1
    what = " ".join(f"{path}={show(value)}" for path, value in changes.items()) or "nothing to change"
    print(terminal(f"{found.file}: layout {rank} at {found.world_size} GPUs written ({what})"))
    return 0
