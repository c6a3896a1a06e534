"""Project overlays: extend a family version without forking it.

A team whose trainer registers its own optimizers, losses or routers, or
adds keys and sections, writes an overlay file (JSON):

    {
      "family": "kempnerforge@5666d0d",
      "name": "acme",
      "patch": [{"op": "add", "path": "/properties/acme", "value": {"type": "object"}}],
      "registries": {"optimizer.name": ["acme_adamw"]},
      "model": "acme_models:JobConfig"
    }

`patch` is a JSON Patch (RFC 6902) against the family version's canonical
schema, so the checks and the editor schema (`trainspec schema --overlay`)
both see the new keys and values; `registries` adds names to the family's
registry rules; `model` (optional) names the typed model `load` builds, for
instance one generated from the overlaid schema with
`tools/generate_models.py --schema` (the family's own model refuses keys it
does not know). The model must come from an installed package (an entry point
of the `trainspec.models` group): an overlay lives in a repository, and
trainspec imports no module a repository names. The overlay is the family version `<family>@<version>+<name>`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from trainspec.families import every_version, get_family, register
from trainspec.families.entry_points import entry_points
from trainspec.read.files import read_text
from trainspec.spec.document import ReadError
from trainspec.spec.errors import InvalidValue, TrainspecError
from trainspec.spec.family import Family
from trainspec.spec.limits import SCHEMA_NODES

MODELS_GROUP = "trainspec.models"
"""The entry-point group of installed packages that offer a typed model for an overlay."""
FIELDS = frozenset({"family", "name", "patch", "registries", "model", "description"})


class OverlayError(TrainspecError):
    """An overlay file that cannot be used (a usage problem: exit status 2)."""


def load_overlay(path: str | Path) -> Family:
    """The family version an overlay file describes, registered so that every process can find it by id."""
    try:
        spec = json.loads(read_text(str(path)))
    except (ReadError, json.JSONDecodeError) as exc:
        raise OverlayError(f"cannot read the overlay {path}: {exc}") from None
    except RecursionError:
        raise OverlayError(f"cannot read the overlay {path}: it nests too deep") from None
    if not isinstance(spec, dict) or not isinstance(spec.get("family"), str) or not isinstance(spec.get("name"), str):
        raise OverlayError(f'{path}: an overlay is a JSON object with "family" and "name" (text)')
    unknown = sorted(set(spec) - FIELDS)
    if unknown:
        raise OverlayError(f"{path}: unknown overlay keys {', '.join(unknown)}; known: {', '.join(sorted(FIELDS))}")
    base = get_family(spec["family"])
    patch = spec.get("patch", [])
    registries = spec.get("registries", {})
    if not isinstance(patch, list) or not all(isinstance(op, dict) for op in patch):
        raise OverlayError(f'{path}: "patch" must be a list of JSON Patch operations')
    if not isinstance(registries, dict) or not all(_names(v) for v in registries.values()):
        raise OverlayError(f'{path}: "registries" maps config paths to lists of names')
    merged = {p: tuple(base.registries.get(p, ())) + tuple(names) for p, names in registries.items()}
    family = replace(
        base,
        version=f"{base.version}+{spec['name']}" if base.version else spec["name"],
        description=str(spec.get("description", base.description)),
        schema_patch=(*base.schema_patch, *patch),
        registries={**base.registries, **merged},
        model=_installed_model(spec.get("model", base.model), path),
        extends=base.id,
    )
    try:
        import jsonpatch

        patched = jsonpatch.apply_patch(
            json.loads(base.schema_file.read_text(encoding="utf-8")), list(family.schema_patch)
        )
    except Exception as exc:
        raise OverlayError(f"{path}: the patch does not apply to {base.id}: {exc}") from None
    try:
        vet(patched, base.schema.root)
    except ValueError as exc:
        raise OverlayError(f"{path}: the patched schema cannot be used: {exc}") from None
    try:
        family.schema  # noqa: B018 (a cached property: applying the patch here reports a bad one now)
    except Exception as exc:
        raise OverlayError(f"{path}: the patch does not apply to {base.id}: {exc}") from None
    register(family)
    return family


def _installed_model(value: Any, path: str | Path) -> str:
    """`module:Name` of the model `load` builds, only if an installed package offers it: a family's own
    model, or an entry point of the `trainspec.models` group (by its name or its value). An overlay is
    repository data, and a module it names could be a file of that repository: it is never imported."""
    offered = {e.name: e.value for e in entry_points(MODELS_GROUP)}
    known = {*offered.values(), *(f.model for f in every_version().values())}
    if isinstance(value, str) and (value in known or value in offered):
        return offered.get(value, value)
    raise OverlayError(
        f'{path}: "model" {value!r} is not a model an installed package offers; trainspec never imports a module '
        f"an overlay names: publish the model as an entry point of the `{MODELS_GROUP}` group "
        f'(`acme = acme_models:JobConfig`) and name it here ("acme"), or leave `model` out'
    )


def _names(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


# -- vetting: what a patched schema may ask of the validators -------------------------------------

DEPTH = 200
"""How deep a patched schema may nest, `$ref`s followed (the families' own go about 20 deep)."""
_DATA = frozenset({"enum", "const", "default", "examples", "$defs", "definitions", "required", "type"})
"""Keywords whose values are data, not schemas ($defs are reached through the `$ref`s to them)."""
_DESCEND = frozenset(
    {"properties", "patternProperties", "additionalProperties", "items", "prefixItems", "contains", "propertyNames"}
)
"""Keywords that move to a part of the value: a `$ref` cycle through one ends with the value's depth."""
_FANCY = re.compile(r"\\[1-9]|\\k<|\(\?<?[=!]|\\.")
"""Back-references and look-around (the features that make a regex engine backtrack), or any other escape
(read in one pass, so that `\\\\1` is a backslash and a 1)."""
_PLAIN_ESCAPE = re.compile(r"\\[^1-9k]")


def vet(schema: Any, base: Any) -> None:
    """Refuse (ValueError) a patched schema that could hang a check: a `pattern` or `patternProperties`
    key the family does not have that is not a plain regular expression (look-around and
    back-references need a backtracking engine), `unevaluatedProperties`, a `$ref` cycle that never
    moves into the value (a check would loop), nesting past `DEPTH`, and more than `SCHEMA_NODES`
    nodes with each `$ref` expanded (a fan-out of references)."""
    if not isinstance(schema, dict):
        raise InvalidValue("the schema must stay a JSON object (a family's rules read the keys it describes)")
    own = set(_patterns(base))
    for pattern in _patterns(schema):
        if pattern not in own:
            _vet_pattern(pattern)
    _Expansion(schema).size(schema, 0)


def _patterns(node: Any) -> Iterator[str]:
    stack = [(node, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > DEPTH:
            raise InvalidValue(f"it nests deeper than {DEPTH} levels")
        if isinstance(item, dict):
            if "unevaluatedProperties" in item:
                raise InvalidValue("`unevaluatedProperties` is not supported in an overlay; use `additionalProperties`")
            if isinstance(item.get("pattern"), str):
                yield item["pattern"]
            if isinstance(item.get("patternProperties"), dict):
                yield from item["patternProperties"]
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)


def _vet_pattern(pattern: str) -> None:
    from trainspec.spec.schema_walk import matcher

    if any(not _PLAIN_ESCAPE.fullmatch(m[0]) for m in _FANCY.finditer(pattern)):
        raise InvalidValue(
            f"the pattern {pattern!r} uses look-around or a back-reference, which a check could spend hours on; "
            "write a plain regular expression"
        )
    try:
        matcher(pattern)
    except Exception as exc:
        raise InvalidValue(f"the pattern {pattern!r} is not a regular expression ({exc})") from None


class _Expansion:
    """The size of a schema with every `$ref` expanded, each reference's size computed once."""

    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.sizes: dict[str, int] = {}
        self.active: dict[str, int] = {}
        self.descents = 0
        self.limit = SCHEMA_NODES.value

    def size(self, node: Any, depth: int) -> int:
        if depth > DEPTH:
            raise InvalidValue(f"it nests deeper than {DEPTH} levels, `$ref`s followed")
        if isinstance(node, list):
            return sum(self.size(v, depth + 1) for v in node)
        if not isinstance(node, dict):
            return 0
        total = 1
        for key, value in node.items():
            if key in _DATA:
                continue
            if key == "$ref" and isinstance(value, str):
                total += self.ref(value, depth)
            elif key in _DESCEND:
                self.descents += 1
                total += self.children(key, value, depth)
                self.descents -= 1
            else:
                total += self.children(key, value, depth)
            if total > self.limit:
                raise InvalidValue(SCHEMA_NODES.exceeded("the schema expands to more nodes"))
        return total

    def children(self, key: str, value: Any, depth: int) -> int:
        if key in ("properties", "patternProperties", "dependentSchemas") and isinstance(value, dict):
            return sum(self.size(v, depth + 1) for v in value.values())
        return self.size(value, depth + 1) if isinstance(value, (dict, list)) else 0

    def ref(self, ref: str, depth: int) -> int:
        if ref in self.sizes:
            return self.sizes[ref]
        if ref in self.active:
            if self.active[ref] == self.descents:
                raise InvalidValue(
                    f"`$ref` {ref!r} refers back to itself without moving into the value: a check would loop"
                )
            return 1  # recursion through a part of the value: as deep as the value, which is bounded
        target = self.target(ref)
        self.active[ref] = self.descents
        try:
            found = self.size(target, depth + 1)
        finally:
            del self.active[ref]
        self.sizes[ref] = found
        return found

    def target(self, ref: str) -> Any:
        if not ref.startswith("#"):
            raise InvalidValue(f"`$ref` {ref!r} points outside the schema; trainspec never fetches schemas")
        node: Any = self.root
        for part in ref[1:].split("/")[1:]:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                raise InvalidValue(f"dangling `$ref` {ref!r}")
        return node
