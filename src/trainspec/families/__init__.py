"""Config families: a schema, generated models and rules, registered by name.

The engine knows no family by name. Built-in families and third-party ones
are found the same way: through the `trainspec.families` entry-point group,
whose entries point at a `Family` object. trainspec's own families are
listed in its package metadata like anyone else's.
"""

from __future__ import annotations

import copyreg
from collections.abc import Callable
from functools import cache

from trainspec.families.entry_points import EntryPoint, entry_points
from trainspec.spec.errors import TrainspecError
from trainspec.spec.family import Family
from trainspec.spec.resources import schema_dir

ENTRY_POINT_GROUP = "trainspec.families"


def _by_id(family: Family) -> tuple[Callable[[str], Family], tuple[str]]:
    """A family crosses process boundaries by id (its schema and validator stay where they are)."""
    return get_family, (family.id,)


copyreg.pickle(Family, _by_id)


class UnknownFamily(TrainspecError, LookupError):
    """No registered family has this name (or its package failed to import)."""


_loaded: dict[str, Family] | None = None
_broken: dict[str, str] = {}
_members: dict[tuple[str, str], list[Family] | None] = {}
"""Each entry point's families once it is loaded (None: it is broken, see `_broken`)."""
LATEST = "latest"


def _load(entry: EntryPoint) -> list[Family] | None:
    key = (entry.name, entry.value)
    if key not in _members:
        try:
            loaded = entry.load()
        except Exception as exc:
            _broken[entry.name] = f"{entry.value} failed to import ({type(exc).__name__}: {exc})"
            _members[key] = None
            return None
        members = list(loaded) if isinstance(loaded, list | tuple) else [loaded]
        if not members or not all(isinstance(f, Family) for f in members):
            _broken[entry.name] = f"{entry.value} is not a trainspec Family (or a sequence of them)"
            _members[key] = None
            return None
        _members[key] = members
    return _members[key]


def _may_register(entry: EntryPoint, name: str) -> bool:
    """Whether the entry point may register versions of family `name`: any other package's may, and each of
    trainspec's own (`trainspec.families.<name>`) registers only the family of its name."""
    module = entry.value.partition(":")[0]
    if not module.startswith(_OWN):
        return True
    return module == _OWN + name


_OWN = __name__ + "."


def _registry(name: str | None = None) -> dict[str, Family]:
    """Every registered family version by id (`name` given: at least every version of that family, in the
    same order, from the entry points that may register it: a check of one family imports no other)."""
    global _loaded, _entries
    if _loaded is not None:
        return _loaded
    if name is not None and name in _partial:
        return _partial[name]
    if _entries is None:
        _entries = entry_points(ENTRY_POINT_GROUP)
    found: dict[str, Family] = {}
    for entry in _entries:
        if name is not None and not _may_register(entry, name):
            continue
        for family in _load(entry) or ():
            found.setdefault(family.id, family)
    if name is None:
        _loaded = found
    else:
        _partial[name] = found
    return found


_entries: list[EntryPoint] | None = None
_partial: dict[str, dict[str, Family]] = {}
"""The versions of one family, by id, while no one has needed the whole registry."""


def every_version() -> dict[str, Family]:
    """Every registered family version, by id (entry points are read once per process).

    An entry point names a Family, or a sequence of Family versions. A package
    that fails to import is left out, and asking for its family by name says
    why, so one broken plugin cannot stop checks of other families.
    """
    return _registry()


def building(model: str) -> Family | None:
    """The newest registered family version whose typed model is `model` ("module:Class"), importing only
    the entry points up to the one that registers it (those whose name the model's module holds first)."""
    global _entries
    if _entries is None:
        _entries = entry_points(ENTRY_POINT_GROUP)
    module = model.partition(":")[0]
    for entry in sorted(_entries, key=lambda e: e.name not in module):  # stable: otherwise in listed order
        found = [f for f in _load(entry) or () if f.model == model]
        if found:
            return max(found, key=lambda f: f.released)
    return None


def versions_of(name: str) -> list[Family]:
    """A family's registered versions, newest (latest release date) first."""
    found = (f for f in _registry(name).values() if f.name == name and f.extends is None)
    return sorted(found, key=lambda f: f.released, reverse=True)


def all_families() -> dict[str, Family]:
    """The newest version of every registered family, by name: what detection and the plain name pick."""
    newest: dict[str, Family] = {}
    for family in every_version().values():
        if family.extends is not None:
            continue
        if family.name not in newest or family.released > newest[family.name].released:
            newest[family.name] = family
    return newest


def register(family: Family) -> None:
    """Add a family (version) at run time (for tests and embedding applications)."""
    every_version()[family.id] = family


def get_family(spec: str) -> Family:
    """The family `spec` names: `name` or `name@latest` (its newest version), `name@version`, or
    `name@commit` for a version named by release."""
    name, _, version = spec.partition("@")
    found = next(iter(versions_of(name)), None) if version in ("", LATEST) else _registry(name).get(spec)
    if found is None and version:
        found = next((f for f in versions_of(name) if f.commit == version), None)
    if found is not None:
        return found
    if name in _broken:
        raise UnknownFamily(f"family {name!r} is installed but unusable: {_broken[name]}")
    versions = versions_of(name)
    if versions:
        known = ", ".join(f.id for f in versions)
        raise UnknownFamily(f"family {name!r} has no version {version!r}; known versions: {known}")
    known = ", ".join(sorted(all_families())) or "none"
    raise UnknownFamily(f"unknown family {spec!r}; known families: {known}")


def found_without_import(spec: str) -> bool:
    """Whether `get_family(spec)` is sure to find a family, known without importing any: the family is one
    of trainspec's own, whose entry point is listed, and the versions.json beside its schemas (from which
    it builds every version, `spec.versions.fold_versions`) lists the version `spec` names, by name or
    commit. A project configuration names families its files may not use: checking the name costs no
    import. False when that is not known so (`get_family` then answers)."""
    name, _, version = spec.partition("@")
    global _entries
    if _entries is None:
        _entries = entry_points(ENTRY_POINT_GROUP)
    if name in _broken or not any(e.value.partition(":")[0] == _OWN + name for e in _entries):
        return False
    listed = _own_releases(name)
    return bool(listed) if version in ("", LATEST) else version in listed


@cache
def _own_releases(name: str) -> frozenset[str]:
    """The versions (names and commits) versions.json lists for trainspec's own family `name`."""
    from trainspec.spec.versions import read_releases

    try:
        releases = read_releases(schema_dir() / name)
    except Exception:  # not where trainspec's families keep it, or unreadable: not known without import
        return frozenset()
    return frozenset(n for r in releases for n in (r.version, r.commit) if n)


def stem(family: Family) -> str:
    """How files name this version: the plain name for the newest (what the name selects), else the id."""
    return family.name if next(iter(versions_of(family.name)), None) is family else family.id


def other_versions(family: Family) -> list[Family]:
    """The family's other registered versions, newest first."""
    return [f for f in versions_of(family.name) if f is not family]
