"""Rewrite a config's legacy keys in their canonical places (`trainspec migrate FILE`).

The command is generic: it runs the migrations of the file's family (any
family that declares some) over the file's own tree, then writes it back.

The file's format loads it as a tree to edit in place (`formats.Tree`), and
only the keys a migration moves change: YAML goes through ruamel.yaml's round
trip (see `yaml_roundtrip`), with the indentation settings that reproduce the
original file, and a comment block that followed a moved key stays where it
was. New keys go at the end of their section; an end-of-line comment on a
moved scalar leaves with its line. JSON has no comments to keep; it is
rewritten as 2-space JSON. Every line the migration leaves alone is kept byte
for byte (`text_lines.keep_original_lines`).

The command writes the file only when every migration succeeded, through
`safe_write` (atomic; a symlink's target, mode, owner and byte-order mark
kept; read-only and hard-linked files, and files changed meanwhile, refused).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from trainspec.families import all_families, get_family
from trainspec.read.detect import detect
from trainspec.read.files import parse, read_text
from trainspec.read.text_lines import keep_original_lines
from trainspec.spec.diagnostics import Diagnostic
from trainspec.spec.errors import RewriteError, TrainspecError
from trainspec.spec.family import Family
from trainspec.spec.formats import FORMATS, format_of, in_words
from trainspec.spec.paths import format_path


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
    text = read_text(file) if text is None else text
    doc = parse(file, text)
    family = get_family(family_name) if family_name else detect(doc, all_families())[0]
    if family is None:
        raise MigrateError(f"{file}: {detect(doc, all_families())[1]}")
    if not family.migrations:
        return Migration(file, text, note=f"nothing to migrate (family {family.name} has no legacy keys)")
    fmt = format_of(file)
    if not fmt.rewritable:
        named = in_words((f.name.upper() for f in FORMATS.values() if f.rewritable), "and")
        raise MigrateError(f"{file}: migrate rewrites {named} files only")
    if any(d.is_error for d in doc.problems):
        return Migration(file, text, list(doc.problems), note="not migrated: fix the problems above first")
    try:
        tree = fmt.rewriter().tree(doc)
    except RewriteError as exc:
        raise MigrateError(f"{file}: cannot read for rewriting: {exc}") from exc
    doc.data = tree.data
    if tree.shares_mappings:
        plain = parse(file, text)  # the migrations on plain data say which keys they move
        moved = {d.path for migration in family.migrations for d in migration(plain) if d.path}
        shared = sorted(format_path(p) for p in moved if tree.shared(p))
        if shared:
            note = (
                f"not migrated: {', '.join(f'`{p}`' for p in shared)} sits in a mapping shared through a YAML "
                "merge key (`<<: *anchor`), so the moved key would land in another mapping; move it by hand "
                "(nothing was written)"
            )
            return Migration(file, text, note=note, refused=True)
    baseline = tree.dump(doc.data)  # the untouched tree as the format writes it
    found = [d for migration in family.migrations for d in migration(doc)]
    if any(d.is_error for d in found):
        return Migration(file, text, found, note="not migrated: resolve the conflicts above; nothing was written")
    if not found:
        return Migration(file, text, note="nothing to migrate")
    tree.settle()
    return Migration(file, text, found, keep_original_lines(text, baseline, tree.dump(doc.data)), family=family)


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
