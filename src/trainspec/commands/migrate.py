"""`trainspec migrate FILE`: rewrite a config's legacy keys in their canonical places.

The command is generic: it runs the migrations of the file's family (any
family that declares some) over the file's own tree, then writes it back.

YAML is edited with ruamel.yaml in round-trip mode (see `yaml_roundtrip`):
only the keys a migration moves change. Its indentation settings are chosen as the ones that reproduce the original
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
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path as FsPath
from typing import Any

from ..diagnostics import Diagnostic
from ..document import Document


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
    from ..yaml_roundtrip import YAMLError, keep_trailing_comments, mappings, round_trip

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

    yaml = round_trip(text) if doc.format == "yaml" else None
    if yaml is not None:
        try:
            doc.data = yaml.load(text)
        except YAMLError as exc:
            print(f"{file}: cannot read for rewriting: {exc}", file=sys.stderr)
            return 1
    before = mappings(doc.data)
    baseline = _render(yaml, doc)  # the untouched tree as the emitter writes it
    found = [d for migration in family.migrations for d in migration(doc)]
    _report(found, format_line)
    if any(d.is_error for d in found):
        print(f"{file}: not migrated: resolve the conflicts above; nothing was written", file=sys.stderr)
        return 1
    if not found:
        print(f"{file}: nothing to migrate")
        return 0
    keep_trailing_comments(before)
    new_text = keep_original_lines(text, baseline, _render(yaml, doc))
    if args.diff:
        sys.stdout.writelines(
            difflib.unified_diff(
                text.splitlines(keepends=True), new_text.splitlines(keepends=True), f"a/{file}", f"b/{file}"
            )
        )
        return 0
    _write_atomically(FsPath(file), new_text)
    print(f"{file}: migrated {len(found)} legacy key{'s' if len(found) != 1 else ''}")
    return 0


def _render(yaml: Any, doc: Document) -> str:
    if yaml is not None:
        from ..yaml_roundtrip import dump

        return dump(yaml, doc)
    return json.dumps(doc.data, indent=2, ensure_ascii=False) + "\n"


def keep_original_lines(original: str, baseline: str, migrated: str) -> str:
    """`migrated`, with every line the migration did not touch taken byte for byte from `original`.

    The emitter normalizes what it does not understand as meaningful (spacing
    before a comment, line endings, trailing blanks). Lines the migration left
    alone are found by diffing `migrated` against `baseline` (the same emitter's
    output for the unmigrated tree), then traced back to `original` through a
    diff of `baseline` against it; new lines use the original's line ending.
    """
    ends_crlf = "\r\n" in original
    source = original.splitlines(keepends=True)
    emitted = baseline.splitlines()
    to_source: dict[int, int] = {}
    stripped = [line.rstrip("\r\n") for line in source]
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, emitted, stripped, autojunk=False).get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            to_source.update(zip(range(i1, i2), range(j1, j2), strict=True))
    out = []
    fresh = migrated.splitlines()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, emitted, fresh, autojunk=False).get_opcodes():
        if tag == "equal":
            for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                out.append(source[to_source[i]] if i in to_source else fresh[j] + ("\r\n" if ends_crlf else "\n"))
        else:
            out.extend(line + ("\r\n" if ends_crlf else "\n") for line in fresh[j1:j2])
    if out and not out[-1].endswith("\n"):  # the original's last line, which had no line break
        out[-1] += "\r\n" if ends_crlf else "\n"
    return "".join(out)


def _report(diagnostics: Sequence[Diagnostic], format_line: Any) -> None:
    for d in sorted(diagnostics, key=Diagnostic.sort_key):
        print(format_line(d), file=sys.stderr)


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
