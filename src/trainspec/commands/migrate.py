"""`trainspec migrate FILE`: rewrite a config's legacy keys in their canonical places.

The command is generic: it runs the migrations of the file's family (any
family that declares some) over the file's own tree, then writes it back.

YAML is edited with ruamel.yaml in round-trip mode: it is the maintained
round-trip YAML library, which keeps comments, key order, quoting and scalar
spelling through a load/dump cycle, so only the keys a migration moves change.
Its indentation settings are chosen as the ones that reproduce the original
file, and a comment block that followed a moved key stays where it was. New
keys go at the end of their section; an end-of-line comment on a moved scalar
leaves with its line. JSON has no comments to keep; it is rewritten as
2-space JSON.

The file is replaced atomically (a temporary file in the same directory, then
`os.replace`), and only when every migration succeeded. Exit status: 0
migrated or nothing to do, 1 the file has problems (nothing written), 2 usage
errors.
"""

from __future__ import annotations

import argparse
import difflib
import io
import itertools
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path as FsPath
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import CommentMark, YAMLError
from ruamel.yaml.tokens import CommentToken

from ..diagnostics import Diagnostic
from ..document import Document

INDENTS = list(itertools.product((2, 4), ((2, 0), (4, 2), (3, 1), (4, 0)), (False, True)))
"""(mapping indent, (sequence indent, dash offset), explicit `---`) settings tried on the original file."""


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
    from ..detect import detect
    from ..families import UnknownFamily, all_families, get_family
    from ..readers import ReadError, read, read_text
    from ..reporters.text import format_line

    file: str = args.file
    try:
        text = read_text(file)
        doc = read(file, text)
    except ReadError as exc:
        print(format_line(exc.diagnostic), file=sys.stderr)
        return 2 if exc.diagnostic.rule in ("file-not-found", "file-not-readable") else 1
    try:
        family = get_family(args.family) if args.family else detect(doc, all_families())[0]
    except UnknownFamily as exc:
        print(f"trainspec: {exc}", file=sys.stderr)
        return 2
    if family is None:
        print(f"{file}: {detect(doc, all_families())[1]}", file=sys.stderr)
        return 2
    if not family.migrations:
        print(f"{file}: nothing to migrate (family {family.name} has no legacy keys)")
        return 0
    if doc.format not in ("yaml", "json"):
        print(f"trainspec: {file}: migrate rewrites YAML and JSON files only", file=sys.stderr)
        return 2
    if any(d.is_error for d in doc.problems):
        _report(doc.problems, format_line)
        print(f"{file}: not migrated: fix the problems above first", file=sys.stderr)
        return 1

    yaml = _round_trip(text) if doc.format == "yaml" else None
    if yaml is not None:
        try:
            doc.data = yaml.load(text)
        except YAMLError as exc:
            print(f"{file}: cannot read for rewriting: {exc}", file=sys.stderr)
            return 1
    before = _mappings(doc.data)
    found = [d for migration in family.migrations for d in migration(doc)]
    _report(found, format_line)
    if any(d.is_error for d in found):
        print(f"{file}: not migrated: resolve the conflicts above; nothing was written", file=sys.stderr)
        return 1
    if not found:
        print(f"{file}: nothing to migrate")
        return 0
    _keep_trailing_comments(before)
    new_text = _dump(yaml, doc) if yaml is not None else json.dumps(doc.data, indent=2, ensure_ascii=False) + "\n"
    if args.diff:
        sys.stdout.writelines(difflib.unified_diff(text.splitlines(keepends=True), new_text.splitlines(keepends=True),
                                                   f"a/{file}", f"b/{file}"))
        return 0
    _write_atomically(FsPath(file), new_text)
    print(f"{file}: migrated {len(found)} legacy key{'s' if len(found) != 1 else ''}")
    return 0


def _report(diagnostics: Sequence[Diagnostic], format_line: Any) -> None:
    for d in sorted(diagnostics, key=Diagnostic.sort_key):
        print(format_line(d), file=sys.stderr)


# -- YAML round trip ------------------------------------------------------------------------------


def _yaml(mapping: int, sequence: int, offset: int, explicit_start: bool) -> YAML:
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 1 << 16  # never re-wrap long lines
    yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
    yaml.explicit_start = explicit_start
    return yaml


def _dump(yaml: YAML, doc: Document) -> str:
    out = io.StringIO()
    yaml.dump(doc.data, out)
    return out.getvalue()


def _round_trip(text: str) -> YAML:
    """The emitter settings that reproduce `text` most closely (exactly, for consistently indented files)."""
    best: tuple[int, YAML] | None = None
    for mapping, (sequence, offset), start in INDENTS:
        yaml = _yaml(mapping, sequence, offset, start)
        try:
            out = io.StringIO()
            yaml.dump(yaml.load(text), out)
        except YAMLError:
            continue
        changed = sum(1 for line in difflib.ndiff(text.splitlines(), out.getvalue().splitlines()) if line[0] in "+-")
        if best is None or changed < best[0]:
            best = (changed, yaml)
        if not changed:
            break
    return best[1] if best is not None else _yaml(2, 2, 0, False)


Snapshot = list[tuple[CommentedMap, list[Any], dict[Any, Any], Any, Any]]


def _mappings(node: Any, parent: Any = None, at: Any = None) -> Snapshot:
    """Every round-trip mapping of the tree (keys, values, and where it sits), before a migration edits it."""
    found: Snapshot = []
    if isinstance(node, CommentedMap):
        found.append((node, list(node), dict(node), parent, at))
        for key, child in node.items():
            found.extend(_mappings(child, node, key))
    elif isinstance(node, CommentedSeq):
        for index, child in enumerate(node):
            found.extend(_mappings(child, node, index))
    return found


def _keep_trailing_comments(before: Snapshot) -> None:
    """Keep the comment lines that followed a removed key, or ended a mapping that got new keys, in place.

    ruamel stores the full-line comments after an entry on that entry (on the
    last entry inside it, for a nested value), so they would leave with a
    moved value. They belong to what follows, so they are re-attached to the
    entry that now precedes them.
    """
    for mapping, keys, values, parent, at in reversed(before):  # inner mappings first: they feed their parents
        for i, key in enumerate(keys):
            if key in mapping and mapping[key] is values[key]:
                continue
            block = _take_tail(mapping, key, values[key])
            previous = next((k for k in reversed(keys[:i]) if k in mapping), None)
            following = next((k for k in keys[i + 1:] if k in mapping), None)
            if not block:
                continue
            if previous is not None:
                _add_tail(mapping, previous, block)
            elif following is not None:
                _add_before(mapping, following, block)
            elif mapping:
                _add_tail(mapping, list(mapping)[-1], block)
            elif isinstance(parent, CommentedMap):
                _after_emptied(parent, at, block)
        survivors = [k for k in keys if k in mapping]
        if survivors and list(mapping)[-1] != survivors[-1]:
            block = _take_tail(mapping, survivors[-1], mapping[survivors[-1]])
            if block:
                _add_tail(mapping, list(mapping)[-1], block)


def _after_emptied(parent: CommentedMap, at: Any, block: str) -> None:
    """Comments that followed the last key of a now empty mapping: before the parent's next key."""
    keys = list(parent)
    position = keys.index(at)
    if position + 1 < len(keys):
        _add_before(parent, keys[position + 1], block)
    elif position > 0:
        _add_tail(parent, keys[position - 1], block)


def _add_before(mapping: CommentedMap, key: Any, block: str) -> None:
    lines = block.splitlines()
    indent = next((len(line) - len(line.lstrip()) for line in lines if line.strip()), 0)
    text = "\n".join(line.strip().removeprefix("#").removeprefix(" ") for line in lines)
    mapping.yaml_set_comment_before_after_key(key, before=text, indent=indent)


def _tail_entry(container: Any, key: Any, value: Any) -> tuple[list[Any] | None, int, Any, Any]:
    """The comment slot after the last line of `value` (stored at `container[key]`, or stored there before)."""
    while isinstance(value, (CommentedMap, CommentedSeq)) and len(value):
        container, key = value, list(value)[-1] if isinstance(value, CommentedMap) else len(value) - 1
        value = container[key]
    slot = 2 if isinstance(container, CommentedMap) else 0
    return container.ca.items.get(key), slot, container, key


def _take_tail(container: Any, key: Any, value: Any) -> str:
    """Detach and return the full-line comments after an entry (keeping its end-of-line comment)."""
    entry, slot, _, _ = _tail_entry(container, key, value)
    token = entry[slot] if entry else None
    if token is None:
        return ""
    first, _, rest = token.value.partition("\n")
    if not rest:
        return ""
    if first.strip():
        token.value = first + "\n"
    else:
        entry[slot] = None  # type: ignore[index]
    return str(rest)


def _add_tail(container: Any, key: Any, block: str) -> None:
    entry, slot, owner, last = _tail_entry(container, key, container[key])
    if entry is None:
        entry = owner.ca.items.setdefault(last, [None, None, None, None])
    if entry[slot] is None:
        entry[slot] = CommentToken("\n" + block, CommentMark(0), None)
    else:
        entry[slot].value += block


def _write_atomically(path: FsPath, text: str) -> None:
    """Write next to the file, then rename over it: readers see the old file or the new one, never half."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
