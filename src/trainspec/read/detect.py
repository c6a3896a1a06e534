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
from dataclasses import dataclass
from difflib import get_close_matches
from typing import Any

from trainspec.families import other_versions
from trainspec.spec.document import Document
from trainspec.spec.family import Family
from trainspec.spec.formats import FORMATS
from trainspec.spec.paths import parse_path
from trainspec.spec.schema import SchemaError


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


CLAIM_SHARE = 0.75
"""The share of a file's keys (top-level keys, and the keys of the sections the family knows) a
family must know to claim the file: a few typos or an extra section do not lose it, while another
tool's file that happens to have a `model` and a `train` section is not claimed."""

NEAR_MISS = 0.8
"""A key this similar to one of the family's counts as the family's: a typo, not another tool's key."""


@dataclass(frozen=True)
class Fit:
    """How well a family's schema fits a document's keys."""

    family: Family
    known: int
    total: int
    missing: tuple[str, ...]
    foreign: tuple[str, ...]
    """Top-level keys the family does not know."""

    @property
    def share(self) -> float:
        return self.known / self.total if self.total else 0.0

    @property
    def claims(self) -> bool:
        return self.share >= CLAIM_SHARE and not self.missing


def fit(data: dict[str, Any], family: Family, *, near: bool = True) -> Fit:
    """Count the keys `family` knows: the top-level ones, and those of the sections it knows;
    with `near`, a key close to one of the family's counts too."""
    top = _shape(family)
    cutoff = NEAR_MISS if near else 1.0
    known = total = 0
    foreign: list[str] = []
    for key, value in data.items():
        if key == "$schema":
            continue
        total += 1
        fields = top.get(key, ())
        if key not in top and not (near and get_close_matches(str(key), list(top), 1, cutoff)):
            foreign.append(key)
            continue
        known += 1
        if isinstance(value, dict) and fields is not None and key in top:
            total += len(value)
            known += sum(
                k in fields or (near and bool(get_close_matches(str(k), list(fields), 1, cutoff))) for k in value
            )
    missing = tuple(sorted(family.schema.required(family.schema.root) - set(data)))
    return Fit(family, known, total, missing, tuple(foreign))


_SHAPES: dict[str, dict[str, frozenset[str] | None]] = {}


def _shape(family: Family) -> dict[str, frozenset[str] | None]:
    """Each top-level key of the family with the keys of its section (None: a map of free keys or no
    section), computed once per family version: detection runs on every file. The legacy keys its
    migrations move count as its own: a file `trainspec migrate` exists for is the family's."""
    shape = _SHAPES.get(family.id)
    if shape is None:
        schema = family.schema
        shape = {}
        for key in schema.properties(schema.root, every=True):
            node = schema.child(schema.root, key)
            section = node is not None and "object" in schema.types(node) and schema.extra(node) is None
            shape[key] = frozenset(schema.properties(node, every=True)) if section and node is not None else None
        for legacy in family.legacy_keys:
            top, *rest = parse_path(legacy)
            fields = shape.get(str(top))
            if not rest:
                shape.setdefault(str(top), None)
            elif len(rest) == 1 and fields is not None:
                shape[str(top)] = fields | {str(rest[0])}
        _SHAPES[family.id] = shape
    return shape


def headerless_section(data: dict[str, Any], family: Family) -> str | None:
    """The section whose keys a file holds at its top level (an upstream preset without its header)."""
    shape = _shape(family)
    keys = set(data) - {"$schema"}
    if not keys or keys & set(shape):
        return None
    return next(
        (name for name, fields in shape.items() if len(keys & (fields or set())) >= CLAIM_SHARE * len(keys)), None
    )


def detect(doc: Document, families: dict[str, Family], *, by_reference: bool = True) -> tuple[Family | None, str]:
    """The family of `doc`, or None with a sentence saying why not.

    A file is claimed only when that is unambiguous: a schema it names is a family's, or one
    family that reads its format knows almost every key and finds what it requires. Without
    `by_reference` (for rewriting the reference) only the keys count.
    """
    families = {name: f for name, f in families.items() if _schema_loads(f)}
    known = ", ".join(sorted(families))
    reference = schema_reference(doc) if by_reference else None
    if reference:
        named = [f for f in families.values() if _named_by(reference, f)]
        readers = [f for f in named if doc.format in f.formats]
        if len(readers) == 1:
            versions = [readers[0], *other_versions(readers[0])]
            return next((v for v in versions if v.version and v.id.lower() in reference.lower()), readers[0]), ""
        if not named:
            return None, f"the file names the schema {reference!r}, which is no known family's (known: {known})"
    data: Any = doc.data
    readers = [f for f in families.values() if doc.format in f.formats]
    if not isinstance(data, dict) or not data:
        if len(readers) == 1:
            return readers[0], ""
        return None, "cannot tell the config family of an empty or non-mapping document; pass --family"
    exact = [f for f in readers if fit(data, f, near=False).claims]
    if len(exact) == 1:  # the common case, without the cost of looking for near misses
        return exact[0], ""
    fits = sorted(
        (fit(data, f) for f in families.values()),
        key=lambda f: (doc.format not in f.family.formats, -f.share),
    )
    claiming = [f for f in fits if f.claims and doc.format in f.family.formats]
    if len(claiming) == 1:
        return claiming[0].family, ""
    if claiming:
        names = ", ".join(sorted(f.family.name for f in claiming))
        return None, f"this file could belong to several families ({names}); pass --family"
    for f in readers:
        section = headerless_section(data, f)
        if section is not None:
            return f, ""
    elsewhere = [f for f in fits if f.claims]
    if elsewhere:
        return None, _wrong_format(doc, elsewhere[0].family)
    best = fits[0] if fits and fits[0].known else None
    if best is None:
        return (
            None,
            f"none of its top-level keys is a known family's (known: {known}); pass --family to check it as one",
        )
    if best.share >= CLAIM_SHARE and best.missing:
        missing = ", ".join(f"`{k}`" for k in best.missing)
        return (
            None,
            f"its keys are {best.family.name}'s, but it lacks the required {missing}; pass --family {best.family.name}",
        )
    foreign = ", ".join(f"`{k}`" for k in best.foreign[:5]) + (", ..." if len(best.foreign) > 5 else "")
    names = f" (unknown top-level keys: {foreign})" if foreign else ""
    return None, (
        f"only {best.known} of its {best.total} keys are {best.family.name}'s{names}: not a config of a known family; "
        f"pass --family {best.family.name} to check it as one"
    )


RESEMBLANCE_SHARE = 0.5
RESEMBLANCE_KEYS = 3
"""A file no family claims still looks like a family's config when that family knows three of its keys
or more, and would claim it but for its format, or reads its format and knows at least half its keys:
an Axolotl config that lacks `base_model`, or one with many keys of a plugin, is such a file; a GitHub
workflow, a docker-compose file or a `package.json` shares no key or one with any family."""


def resembles(doc: Document, families: dict[str, Family]) -> tuple[Family, ...]:
    """The families whose config `doc` looks like though none claims it (`detect` gave None), best
    first: a schema it names is theirs, or they would claim it but for its format or one another, or
    they read its format and know enough of its keys (`RESEMBLANCE_SHARE`). Empty: no config of a
    known family. A directory walk warns about the first kind and lists the rest as skipped."""
    data: Any = doc.data
    families = {name: f for name, f in families.items() if _schema_loads(f)}
    reference = schema_reference(doc)
    if reference:
        return tuple(f for f in families.values() if _named_by(reference, f))
    if not isinstance(data, dict) or not data:
        return ()
    fits = sorted((fit(data, f) for f in families.values()), key=lambda f: -f.share)
    fits = [f for f in fits if f.known >= RESEMBLANCE_KEYS]
    claiming = tuple(f.family for f in fits if f.claims)
    if claiming:
        return claiming
    return tuple(f.family for f in fits if doc.format in f.family.formats and f.share >= RESEMBLANCE_SHARE)


def _wrong_format(doc: Document, family: Family) -> str:
    formats = " or ".join(sorted(f.upper() for f in family.formats))
    return f"its keys are {family.name}'s, but {family.name} reads {formats} files, not {doc.format.upper()}"
