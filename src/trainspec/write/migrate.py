"""Rewrite a config's legacy keys in their canonical places (`trainspec migrate FILE`).

The command is generic: it runs the migrations of the file's family (any
family that declares some) over the file's own tree, then writes it back.

YAML is edited with ruamel.yaml in round-trip mode (see `yaml_roundtrip`):
only the keys a migration moves change. Its indentation settings are chosen as the ones that reproduce the original
file, and a comment block that followed a moved key stays where it was. New
keys go at the end of their section; an end-of-line comment on a moved scalar
leaves with its line. JSON has no comments to keep; it is rewritten as
2-space JSON.

The command writes the file only when every migration succeeded, through
`safe_write` (atomic; a symlink's target, mode, owner and byte-order mark
kept; read-only and hard-linked files, and files changed meanwhile, refused).
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from typing import Any

from trainspec.diagnostics import Diagnostic
from trainspec.errors import TrainspecError
from trainspec.families import Family, all_families, get_family
from trainspec.paths import format_path
from trainspec.read.detect import detect
from trainspec.read.document import Document
from trainspec.read.files import parse, read_text
from trainspec.read.formats import format_of
from trainspec.write.safe_write import line_ending


class MigrateError(TrainspecError):
    """The file cannot be migrated (a usage problem: unknown family, format, unreadable file)."""


@dataclass
class Migration:
    """What migrating one file came to: the diagnostics, and the new text when something moved."""

    file: str
    text: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    new_text: str | None = None
    note: str = ""
    refused: bool = False
    """The file cannot be migrated as it is written (`note` says why); nothing is written."""
    family: Family | None = None

    @property
    def failed(self) -> bool:
        return self.refused or any(d.is_error for d in self.diagnostics)


def migrate(file: str, family_name: str | None = None, text: str | None = None) -> Migration:
    """The migrated text of `file`, or of `text` read as that file (nothing is written); raises
    MigrateError for usage problems.

    A ReadError (file missing, unreadable, unparsable) is raised as it is.
    """
    from trainspec.write.yaml_roundtrip import YAMLError, keep_trailing_comments, mappings, merged, round_trip

    text = read_text(file) if text is None else text
    doc = parse(file, text)
    family = get_family(family_name) if family_name else detect(doc, all_families())[0]
    if family is None:
        raise MigrateError(f"{file}: {detect(doc, all_families())[1]}")
    if not family.migrations:
        return Migration(file, text, note=f"nothing to migrate (family {family.name} has no legacy keys)")
    if not format_of(file).rewritable:
        raise MigrateError(f"{file}: migrate rewrites YAML and JSON files only")
    if any(d.is_error for d in doc.problems):
        return Migration(file, text, list(doc.problems), note="not migrated: fix the problems above first")
    yaml = round_trip(text) if doc.format == "yaml" else None
    if yaml is not None:
        try:
            doc.data = yaml.load(text)
        except YAMLError as exc:
            raise MigrateError(f"{file}: cannot read for rewriting: {exc}") from exc
    if yaml is not None:
        plain = parse(file, text)  # the migrations on plain data say which keys they move
        moved = {d.path for migration in family.migrations for d in migration(plain) if d.path}
        shared = sorted(format_path(p) for p in moved if merged(doc.data, p))
        if shared:
            note = (
                f"not migrated: {', '.join(f'`{p}`' for p in shared)} sits in a mapping shared through a YAML "
                "merge key (`<<: *anchor`), so the moved key would land in another mapping; move it by hand "
                "(nothing was written)"
            )
            return Migration(file, text, note=note, refused=True)
    before = mappings(doc.data)
    baseline = _render(yaml, doc)  # the untouched tree as the emitter writes it
    found = [d for migration in family.migrations for d in migration(doc)]
    if any(d.is_error for d in found):
        return Migration(file, text, found, note="not migrated: resolve the conflicts above; nothing was written")
    if not found:
        return Migration(file, text, note="nothing to migrate")
    keep_trailing_comments(before)
    return Migration(file, text, found, keep_original_lines(text, baseline, _render(yaml, doc)), family=family)


def unified_diff(migration: Migration) -> list[str]:
    """The change as a unified diff (`a/FILE`, `b/FILE`)."""
    new = migration.new_text if migration.new_text is not None else migration.text
    return list(
        difflib.unified_diff(
            migration.text.splitlines(keepends=True),
            new.splitlines(keepends=True),
            f"a/{migration.file}",
            f"b/{migration.file}",
        )
    )


def _render(yaml: Any, doc: Document) -> str:
    if yaml is not None:
        from trainspec.write.yaml_roundtrip import dump

        return dump(yaml, doc)
    return json.dumps(doc.data, indent=2, ensure_ascii=False) + "\n"


def keep_original_lines(original: str, baseline: str, migrated: str) -> str:
    """`migrated`, with every line the migration did not touch taken byte for byte from `original`.

    The emitter normalizes what it does not understand as meaningful (spacing
    before a comment, line endings, trailing blanks). Lines the migration left
    alone are found by diffing `migrated` against `baseline` (the same emitter's
    output for the unmigrated tree), then traced back to `original` through a
    diff of `baseline` against it; new lines use the original's line ending (LF, CRLF or a lone CR).
    """
    ending = line_ending(original)
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
                out.append(source[to_source[i]] if i in to_source else fresh[j] + ending)
        else:
            out.extend(line + ending for line in fresh[j1:j2])
    if out and not out[-1].endswith(("\n", "\r")):  # the original's last line, which had no line break
        out[-1] += ending
    return "".join(out)
