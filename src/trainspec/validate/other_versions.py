"""Messages that know the family's other versions.

A key, section or value the selected version lacks but another version of
the same family has is most likely a config written for that other version:
saying so beats a did-you-mean to an unrelated key. This rewrites the
unknown-key message, and adds a sentence to a refused value, when another
registered version of the family knows the path (or the value there).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal

from trainspec.families import other_versions
from trainspec.spec.diagnostics import Clause, Diagnostic
from trainspec.spec.document import Document
from trainspec.spec.family import Family
from trainspec.spec.formats import FORMATS
from trainspec.spec.schema import get

Selection = Literal["directive", "project", "flag", "detected"]
"""How the checked version was chosen: a file directive, the project configuration, `--family` (or
the API's `family=`), or detection. Advice to use another version must change what chose this one."""


def note_other_versions(doc: Document, family: Family, found: list[Diagnostic], selected_by: Selection) -> None:
    """Rewrite, in place, the errors in `found` that another version of `family` would not report."""
    others = other_versions(family)
    if not others:
        return
    for i, d in enumerate(found):
        path = d.path
        if not d.is_error or not path:
            continue
        if not _knows(family, path, doc.data):
            having = [o for o in others if _knows(o, path, doc.data)]
            if having:
                said = f"`{d.config_path}` is not in {family.id}; it {_exists(doc, family, having, selected_by)}"
                found[i] = replace(d, text=said, clauses=(), suggestion=None)  # not a typo: no key to rename it to
            continue
        value = get(doc.data, path)
        if value is not None and not isinstance(value, (dict, list)) and value not in _allowed(family, path, doc.data):
            having = [o for o in others if value in _allowed(o, path, doc.data)]
            if having:
                found[i] = d.adding(Clause(f"{value!r} {_exists(doc, family, having, selected_by)}"))


def _knows(version: Family, path: tuple[Any, ...], data: Any) -> bool:
    """Whether some branch of `version`'s schema has the key at `path` (whatever the config's union tags say)."""
    if not path or isinstance(path[-1], int):
        return True
    parent = version.schema.node_at(path[:-1], data)
    if parent is None:
        return False
    return path[-1] in version.schema.properties(parent, get(data, path[:-1]), every=True)


def _allowed(other: Family, path: tuple[Any, ...], data: Any) -> list[Any]:
    """The values `other`'s schema enumerates at `path` (enum and const, in every union member)."""
    node = other.schema.node_at(path, data)
    if node is None:
        return []
    parent = get(data, path[:-1]) if path else data
    branches = list(other.schema.branches(node, parent, every=True))
    return [v for b in branches for v in b.get("enum", ())] + [b["const"] for b in branches if "const" in b]


def _exists(doc: Document, family: Family, having: list[Family], selected_by: Selection) -> str:
    """`exists in kempnerforge@5666d0d (2026-06-30), a newer version: select it with --family ...`."""
    names = " and ".join(f"{o.id} ({o.released})" for o in having)
    if having[0].released > family.released:
        return f"exists in {names}, a newer version: {_how_to_select(doc, having[0].id, selected_by)}"
    return f"exists in {names}, an older version (removed since)"


def _how_to_select(doc: Document, version: str, selected_by: Selection) -> str:
    """Advice that changes what selected the checked version: the others would not (a directive wins)."""
    if selected_by == "directive":
        return f"change the file's directive to `family={version}`"
    if selected_by == "project":
        return f'set `family = "{version}"` for this file in the project configuration'
    fmt = FORMATS.get(doc.format)
    if selected_by == "detected" and fmt is not None and fmt.comment is not None:
        return f"select it with --family {version} or a `# trainspec: family={version}` line in the file"
    return f"select it with --family {version}"
