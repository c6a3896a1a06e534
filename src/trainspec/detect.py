"""Which family a file belongs to, when `--family` is not given.

In order: a schema the file names (a `$schema` key, a yaml-language-server
modeline, a taplo `#:schema` directive) whose file or `$id` mentions a
family (`kempnerforge@089fbbd.schema.json` names that version, a plain
`kempnerforge.schema.json` the newest); otherwise its shape: the families written in the file's format
that know the most of the file's top-level keys, preferring those whose
required keys are all present. Anything else is ambiguous and
asks for `--family`.
"""

from __future__ import annotations

import re
from typing import Any

from .document import Document
from .families import Family
from .formats import FORMATS
from .schema import SchemaError


def schema_reference(doc: Document) -> str | None:
    """The schema a file names for itself, if any."""
    if isinstance(doc.data, dict) and isinstance(doc.data.get("$schema"), str):
        return str(doc.data["$schema"])
    directive = FORMATS[doc.format].directive if doc.format in FORMATS else None
    for line in doc.text[:4096].splitlines():
        m = directive.match(line.strip()) if directive else None
        if m and m.group(1):
            return m.group(1)
    return None


def _named_by(reference: str, family: Family) -> bool:
    ref = reference.lower()
    if family.schema.id and ref == family.schema.id.lower():
        return True
    tokens = [re.sub(r"@[^./\\]*", "", t) for t in re.split(r"[/\\:#?]", ref)]  # a version names its family too
    return any(
        t == family.name or t.startswith(family.name + ".") or t.endswith("-" + family.name + ".schema.json")
        for t in tokens
    )


def _schema_loads(family: Family) -> bool:
    """A family whose schema cannot be read is no candidate (naming it with --family says why)."""
    try:
        family.schema  # noqa: B018 (a cached property: touching it loads it)
    except SchemaError:
        return False
    return True


def detect(doc: Document, families: dict[str, Family]) -> tuple[Family | None, str]:
    """The family of `doc`, or None with a sentence saying why not."""
    families = {name: f for name, f in families.items() if _schema_loads(f)}
    reference = schema_reference(doc)
    if reference:
        named = [f for f in families.values() if _named_by(reference, f) and doc.format in f.formats]
        if len(named) == 1:
            versions = [named[0], *named[0].other_versions()]
            return next((v for v in versions if v.version and v.id.lower() in reference.lower()), named[0]), ""
    data: Any = doc.data
    readers = [f for f in families.values() if doc.format in f.formats]
    if not isinstance(data, dict) or not data:
        if len(readers) == 1:
            return readers[0], ""
        return None, "cannot tell the config family of an empty or non-mapping document; pass --family"
    keys = set(data) - {"$schema"}
    scored = []
    for f in families.values():
        if doc.format in f.formats:
            known = set(f.schema.properties(f.schema.root))
            scored.append((len(keys & known), f.schema.required(f.schema.root) <= keys, f))
    best = max((score for score, _, _ in scored), default=0)
    fits = [(complete, f) for score, complete, f in scored if score == best and best > 0]
    complete = [f for c, f in fits if c]
    for group in (complete, [f for _, f in fits]):
        if len(group) == 1:
            return group[0], ""
    if fits:
        names = ", ".join(sorted(f.name for _, f in fits))
        return None, f"this file could belong to several families ({names}); pass --family"
    names = ", ".join(sorted(families))
    return None, f"cannot tell the config family from the top-level keys; pass --family (known: {names})"
