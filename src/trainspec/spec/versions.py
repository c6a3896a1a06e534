"""Family versions: release metadata read from one file, and each version folded from its base by id.

A family's versions are listed, oldest first, in `versions.json` beside its
schemas (`schema/<family>/versions.json`, shipped as `trainspec/schemas/`):
the version's name, upstream commit, release date, what it follows, the
version it builds on (`base`), its JSON Patch and built schema, and the
`Changes` it makes to its base's rules, examples and hooks. The run time
(`fold_versions`), the schema and model builders and the docs read that one
file. A version's `Changes` name what they add, replace and remove by id;
`fold` applies them and refuses an id the base lacks (or already has), so a
version never silently drops or doubles a rule: rules and docs at import,
examples (which no check reads, `lazy.LazyMapping`) when they are first read.

This module imports no family and nothing heavy: the tools read the
metadata through it, and the CLI's cold start imports it with the families.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from trainspec.spec.errors import TrainspecError
from trainspec.spec.lazy import LazyMapping

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

    from trainspec.spec.examples import Example
    from trainspec.spec.family import Family
    from trainspec.spec.rules import Rule

LISTING = "versions.json"
T = TypeVar("T")


class VersionError(TrainspecError):
    """A versions.json entry or a version's declared changes do not fit its base."""


@dataclass(frozen=True)
class Release:
    """One entry of versions.json: what names, dates and builds a family version.

    - `version`: what follows `@` in the id: a short upstream commit, or a release name (`0.2.0`).
    - `commit`: the upstream commit a release-named version comes from; `name@commit` selects it too.
    - `released`: the upstream date (ISO); the newest date is what the plain family name selects.
    - `follows`: the upstream version in words (`trainspec --version`, `rules`).
    - `schema`: its complete schema file; `base` and `patch`: the version it is built from and the
      JSON Patch that builds it (both empty for the oldest, whose schema is hand-written).
    - `changes`: "module:NAME" of its `Changes` on the base version (none: the base's rules as they are).
    """

    version: str
    released: str
    schema: str
    follows: str = ""
    commit: str = ""
    base: str = ""
    patch: str = ""
    changes: str = ""


def read_releases(folder: Traversable | Path) -> tuple[Release, ...]:
    """The versions listed in `folder`'s versions.json, oldest first ((): none listed), checked for shape."""
    listing = folder / LISTING
    if not listing.is_file():
        return ()
    entries = json.loads(listing.read_text(encoding="utf-8"))["versions"]
    known = {f.name for f in fields(Release)}
    releases: list[Release] = []
    for i, entry in enumerate(entries):
        where = f"{listing}: entry {i + 1}"
        unknown = sorted(set(entry) - known)
        if unknown:
            raise VersionError(f"{where}: unknown keys {unknown} (known: {sorted(known)})")
        try:
            release = Release(**entry)
        except TypeError as exc:
            raise VersionError(f"{where}: {exc}") from None
        names = {name for r in releases for name in (r.version, r.commit) if name}
        if {release.version, release.commit} & names:
            raise VersionError(f"{where}: names {release.version!r} (commit {release.commit!r}) a second time")
        if i == 0 and (release.base or release.patch or release.changes):
            raise VersionError(f"{where}: the oldest version has a hand-written schema: no base, patch or changes")
        if i > 0 and not (release.patch and release.base in {r.version for r in releases}):
            raise VersionError(f"{where}: needs a patch and a base among the versions listed before it")
        releases.append(release)
    return tuple(releases)


def release_fields(folder: Traversable | Path, release: Release | None = None) -> dict[str, Any]:
    """The `Family` fields of `release` (default: the oldest in `folder`): `Family(..., **release_fields(f))`.

    These five are what versions.json decides; a `Changes` may not set them.
    """
    release = release or read_releases(folder)[0]
    return {
        "version": release.version,
        "commit": release.commit,
        "released": release.released,
        "follows": release.follows,
        "schema_file": folder / release.schema,
    }


@dataclass(frozen=True)
class Delta(Generic[T]):
    """What a version changes in one id-keyed collection of its base (rules, examples, docs).

    - `add`: new ids, after every base item, in this order.
    - `insert`: new ids placed just before a base id (where the trainer evaluates them):
      {base id: {new id: item}}.
    - `replace`: base ids whose item changes; each keeps its place.
    - `remove`: base ids the version drops.
    """

    add: Mapping[str, T] = field(default_factory=dict)
    insert: Mapping[str, Mapping[str, T]] = field(default_factory=dict)
    replace: Mapping[str, T] = field(default_factory=dict)
    remove: Sequence[str] = ()


@dataclass(frozen=True)
class Changes:
    """Everything a version changes on its base version, besides its schema (which its patch changes).

    `hooks` sets `Family` fields anew (`resolve`, `model`, ...); metadata comes from
    versions.json and the collections from their deltas, so hooks may not set those.
    `examples` may be a function that returns its delta, called when the version's examples are
    first read, so that the modules holding them are imported only then.
    """

    rules: Delta[Rule] = field(default_factory=Delta)
    examples: Delta[Example] | Callable[[], Delta[Example]] = field(default_factory=Delta)
    schema_rule_docs: Delta[str] = field(default_factory=Delta)
    hooks: Mapping[str, Any] = field(default_factory=dict)


def by_id(*rules: Rule) -> dict[str, Rule]:
    """Rules keyed by their id, in order (how a `Delta` of rules is written)."""
    return {r.id: r for r in rules}


def fold(base: Mapping[str, T], delta: Delta[T], where: str) -> dict[str, T]:
    """`base` with `delta` applied, in a stable order: base order, inserts before their anchor, adds last.

    Raises VersionError naming every id that does not fit: replaced, removed or used as an anchor
    but not in `base`, added but already there (or added twice), replaced and removed at once.
    """
    problems = [f"replaces {i!r}, which the base lacks" for i in delta.replace if i not in base]
    problems += [f"removes {i!r}, which the base lacks" for i in delta.remove if i not in base]
    problems += [f"replaces and removes {i!r}" for i in delta.replace if i in delta.remove]
    problems += [f"inserts before {i!r}, which the base lacks" for i in delta.insert if i not in base]
    problems += [f"inserts before {i!r}, which it removes" for i in delta.insert if i in delta.remove]
    added = [i for group in (*delta.insert.values(), delta.add) for i in group]
    problems += [f"adds {i!r}, which the base has (replace it instead)" for i in dict.fromkeys(added) if i in base]
    problems += [f"adds {i!r} twice" for i in dict.fromkeys(added) if added.count(i) > 1]
    if problems:
        raise VersionError(f"{where}: " + "; ".join(problems))
    folded: dict[str, T] = {}
    for key, item in base.items():
        folded.update(delta.insert.get(key, {}))
        if key not in delta.remove:
            folded[key] = delta.replace.get(key, item)
    folded.update(delta.add)
    return folded


_RELEASE_FIELDS = ("version", "commit", "released", "follows", "schema_file")
_FOLDED = frozenset({"rules", "examples", "schema_rule_docs", *_RELEASE_FIELDS})


def fold_version(base: Family, changes: Changes, metadata: Mapping[str, Any]) -> Family:
    """The version `metadata` (`release_fields`) names: `base` with `changes` folded in, by id."""
    where = f"{base.name}@{metadata['version']} on {base.id}"
    unknown = sorted(set(changes.hooks) - {f.name for f in fields(base)})
    if unknown:
        raise VersionError(f"{where}: hooks name no Family field: {unknown}")
    folded = sorted(set(changes.hooks) & _FOLDED)
    if folded:
        raise VersionError(f"{where}: hooks may not set {folded} (versions.json and the deltas do)")
    rules = fold({r.id: r for r in base.rules}, changes.rules, f"{where}: rules")
    for key, rule in rules.items():
        if rule.id != key:
            raise VersionError(f"{where}: rules: {key!r} names the rule {rule.id!r}")
    return replace(
        base,
        **metadata,
        **changes.hooks,
        rules=tuple(rules.values()),
        examples=LazyMapping(partial(_fold_examples, base.examples, changes.examples, f"{where}: examples")),
        schema_rule_docs=fold(base.schema_rule_docs, changes.schema_rule_docs, f"{where}: schema_rule_docs"),
    )


def _fold_examples(
    base: Mapping[str, Example], delta: Delta[Example] | Callable[[], Delta[Example]], where: str
) -> dict[str, Example]:
    """A version's examples, folded when first read (`LazyMapping`); VersionError as `fold` raises it."""
    return fold(base, delta if isinstance(delta, Delta) else delta(), where)


def fold_versions(oldest: Family, folder: Traversable | Path) -> tuple[Family, ...]:
    """Every version listed in `folder`'s versions.json, oldest first, each folded from its base.

    `oldest` is the family's first version, written out (`Family(..., **release_fields(folder))`).
    """
    releases = read_releases(folder)
    if not releases or oldest.version != releases[0].version:
        raise VersionError(f"{oldest.id} is not the oldest version listed in {folder / LISTING}")
    built = {oldest.version: oldest}
    for release in releases[1:]:
        built[release.version] = fold_version(built[release.base], _changes(release), release_fields(folder, release))
    return tuple(built.values())


def _changes(release: Release) -> Changes:
    """The `Changes` object a release names ("module:NAME"), imported now."""
    if not release.changes:
        return Changes()
    module, _, name = release.changes.partition(":")
    found = getattr(importlib.import_module(module), name, None)
    if not isinstance(found, Changes):
        raise VersionError(f"version {release.version}: {release.changes} is not a trainspec.spec.versions.Changes")
    return found
