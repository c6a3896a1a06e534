"""Writing one planned layout into its file (`trainspec plan --apply`), only if the file then checks clean.

Every value of the layout that differs from the file's own is written (a
`--set` of a layout value included), keeping the file's comments and line
endings; the rewritten text is checked at the plan's world size with the
`--set`s that touch no layout value, and nothing is written unless it passes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path as FsPath
from typing import Any

from trainspec.engine.pipeline import check_path
from trainspec.layouts.planner import Plan, file_changes
from trainspec.spec.diagnostics import Diagnostic
from trainspec.spec.errors import RewriteError, TrainspecError
from trainspec.spec.paths import Path, is_prefix, parse_path
from trainspec.write.rewrite import set_values
from trainspec.write.safe_write import WriteRefused, read_text, write_text


class NotWritten(TrainspecError):
    """The layout was not written. `usage`: the request or the file is the problem (not the config);
    `diagnostics`: the errors the rewritten file would have had."""

    def __init__(self, message: str, *, usage: bool, diagnostics: Sequence[Diagnostic] = ()) -> None:
        super().__init__(message)
        self.usage = usage
        self.diagnostics = tuple(diagnostics)


def write_layout(found: Plan, rank: int, overrides: Sequence[str]) -> dict[str, Any]:
    """Write the `rank`-th layout (1-based) of `found` into its file; the values written, by path.

    Raises NotWritten when there is no such layout, the file pins another world size, it cannot be
    read, rewritten or written, or the rewritten file would not check clean."""
    if rank > len(found.layouts):
        passing = len(found.layouts)
        raise NotWritten(f"there is no layout {rank} at {found.world_size} GPUs ({passing} pass)", usage=True)
    if found.pinned and found.world_size not in found.pinned:
        sizes = ",".join(map(str, found.pinned))
        raise NotWritten(
            f"{found.file}: pins its world size to {sizes} (`# trainspec: world-size={sizes}`), so a layout at "
            f"{found.world_size} GPUs would not check clean there; nothing was written (change the directive "
            "first, or plan with --gpus " + sizes + ")",
            usage=True,
        )
    layout = found.layouts[rank - 1]
    changes = file_changes(found, layout)
    space = found.family.layout
    assert space is not None  # a plan has layouts only for a family that declares them
    parsed = dict(zip(space.paths, space.parsed_paths, strict=True))
    paths = [parsed[p] for p in layout.values]
    kept = [o for o in overrides if not _sets_layout(o, paths)]
    try:
        text = read_text(FsPath(found.file))
    except WriteRefused as exc:
        raise NotWritten(str(exc), usage=True) from exc
    if text is None:
        raise NotWritten(f"{found.file}: no longer exists; nothing was written", usage=True)
    try:
        new = set_values(found.file, text, {parsed[path]: value for path, value in changes.items()})
    except RewriteError as exc:
        raise NotWritten(f"{found.file}: {exc}", usage=True) from exc
    if "\r\n" in text:  # keep the file's line endings (write_text keeps a byte-order mark)
        new = re.sub(r"(?<!\r)\n", "\r\n", new)
    checked = check_path(found.file, text=new, family=found.family, overrides=kept, world_size=found.world_size)
    errors = [d for d in checked.diagnostics if d.is_error]
    if errors:
        message = f"{found.file}: the rewritten file does not check clean; nothing was written"
        raise NotWritten(message, usage=False, diagnostics=errors)
    if new != text:
        try:
            write_text(FsPath(found.file), new, expected=text)
        except WriteRefused as exc:
            raise NotWritten(str(exc), usage=True) from exc
    return changes


def _sets_layout(override: str, paths: Sequence[Path]) -> bool:
    """Whether `--set PATH=VALUE` sets a layout value (or a table holding one): the file now holds the layout's."""
    try:
        where = parse_path(override.partition("=")[0].strip())
    except ValueError:
        return False
    return any(is_prefix(where, p) or is_prefix(p, where) for p in paths)
