"""A family's canonical schema: loading, navigation by config path, defaults.

The schema is the source of truth for what a config may hold. Besides
validation (see `validation`), trainspec reads it to fill defaults, to type
override values, and to suggest the closest valid key or path.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from functools import cached_property
from typing import Any

from trainspec.spec.errors import TrainspecError
from trainspec.spec.paths import Path, format_path

Node = dict[str, Any]


class SchemaError(TrainspecError):
    """The family schema itself is unusable (not a user's config problem)."""


class Schema:
    def __init__(self, contents: Node, source: str = "<schema>") -> None:
        self.root = contents
        self.source = source
        self._check_refs(contents)
        self._plans: dict[tuple[int, Any], tuple[list[tuple[str, Any]], dict[str, Node], Node | None]] = {}
        self._discriminators: dict[int, str | None] = {}
        self._properties: dict[tuple[int, bool], tuple[Node, dict[str, Node]]] = {}
        self._simple: dict[
            int, tuple[list[tuple[str, Any]], dict[str, Node], Node | None, tuple[str, ...], dict[str, Any]]
        ] = {}
        self.paths: list[Path] = sorted(set(self._walk_paths(contents, ())), key=format_path)
        """Every path the schema describes; an item of a list is step 0 (`data.datasets[0].path`)."""

    @classmethod
    def from_text(cls, text: str, source: str) -> Schema:
        try:
            return cls(json.loads(text), source)
        except json.JSONDecodeError as exc:
            raise SchemaError(f"{source}: not valid JSON: {exc}") from None

    @property
    def id(self) -> str:
        return str(self.root.get("$id", ""))

    def _check_refs(self, node: Any) -> None:
        """Family schemas are self-contained: a remote `$ref` is refused up front."""
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                if not ref.startswith("#"):
                    raise SchemaError(
                        f"{self.source}: `$ref` {ref!r} points outside the schema; trainspec never "
                        "fetches schemas over the network, so inline it under `$defs`"
                    )
                self.deref(node)  # raises when the pointer is dangling
            for value in node.values():
                self._check_refs(value)
        elif isinstance(node, list):
            for value in node:
                self._check_refs(value)

    def deref(self, node: Node) -> Node:
        while isinstance(node, dict) and "$ref" in node:
            target: Any = self.root
            for part in node["$ref"].lstrip("#").split("/")[1:]:
                part = part.replace("~1", "/").replace("~0", "~")
                if not isinstance(target, dict) or part not in target:
                    raise SchemaError(f"{self.source}: dangling `$ref` {node['$ref']!r}")
                target = target[part]
            node = target
        return node

    @cached_property
    def inlined(self) -> Node:
        """The schema with its local `$ref`s replaced by their targets (recursive ones kept).

        The validator runs on this tree: it saves a reference lookup per `$ref`
        per document. A referring node's own keys are merged into the target's
        when they are annotations or agree with it; otherwise the target is
        wrapped in `allOf`, so every keyword still applies.
        """
        return self._inline(self.root, ())

    def _inline(self, node: Any, active: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [self._inline(v, active) for v in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        rest = {k: (v if k == "$defs" else self._inline(v, active)) for k, v in node.items() if k != "$ref"}
        if not isinstance(ref, str) or ref in active:
            return {"$ref": ref, **rest} if isinstance(ref, str) else rest
        target = self._inline(self.deref({"$ref": ref}), (*active, ref))
        clash = [k for k in rest if k in target and k not in _ANNOTATIONS and rest[k] != target[k]]
        return {"allOf": [target], **rest} if clash else {**target, **rest}

    # -- navigation ---------------------------------------------------------------

    def branches(
        self, node: Node, instance: Any = None, *, every: bool = False, conditional: bool = True
    ) -> Iterator[Node]:
        """The node and every subschema that applies to the same instance.

        A union with an OpenAPI `discriminator` applies only the branch the
        instance selects (or the branch whose discriminator has a default);
        `every` walks all branches instead. A boolean subschema (`true`, `false`) has none: it
        names no keys, defaults or types.
        """
        if not isinstance(node, dict):
            return
        yield node
        if "$ref" in node:
            yield from self.branches(self.deref(node), instance, every=every, conditional=conditional)
        for sub in node.get("allOf", ()):
            yield from self.branches(sub, instance, every=every, conditional=conditional)
        for key in ("then", "else") if conditional else ():
            if key in node:
                yield from self.branches(node[key], instance, every=every)
        for key in ("oneOf", "anyOf"):
            if key in node:
                members = node[key] if every else self.union_members(node, key, instance)
                for sub in members:
                    yield from self.branches(sub, instance, every=every, conditional=conditional)

    def union_members(self, node: Node, key: str, instance: Any) -> list[Node]:
        members = [self.deref(m) for m in node[key]]
        disc = node.get("discriminator")
        if not disc:
            return members
        members = [m for m in members if isinstance(m, dict)]
        prop = disc["propertyName"]
        wanted = instance.get(prop) if isinstance(instance, dict) else None
        for member in members:
            spec = member.get("properties", {}).get(prop, {})
            if wanted is None and prop not in member.get("required", ()) and "default" in spec:
                return [member]
            if wanted is not None and spec.get("const") == wanted:
                return [member]
        return []

    def discriminated(self, node: Node, instance: Any) -> tuple[str, Node | None] | None:
        """For a discriminated union: the discriminator property and the chosen branch."""
        for sub in self.branches(node, instance):
            for key in ("oneOf", "anyOf"):
                if key in sub and sub.get("discriminator"):
                    chosen = self.union_members(sub, key, instance)
                    return sub["discriminator"]["propertyName"], chosen[0] if chosen else None
        return None

    def properties(self, node: Node, instance: Any = None, *, every: bool = False) -> dict[str, Node]:
        """Property schemas of an object node (of every union branch, with `every`). Remembered per node
        when no union tag of the instance can change them (the node held, so its id stays its own);
        callers do not change the mapping."""
        key = (id(node), every)
        known = self._properties.get(key)
        if known is not None and known[0] is node:
            return known[1]
        props: dict[str, Node] = {}
        for sub in self.branches(node, instance, every=every):
            for name, spec in sub.get("properties", {}).items():
                props.setdefault(name, spec)
        if every or self.discriminated(node, {}) is None:
            self._properties[key] = (node, props)
        return props

    def extra(self, node: Node, instance: Any = None) -> Node | None:
        """The value schema of a map with free keys, if `node` is one."""
        for sub in self.branches(node, instance):
            extra = sub.get("additionalProperties")
            if isinstance(extra, dict):
                return extra
        return None

    def items(self, node: Node, instance: Any = None) -> Node | None:
        for sub in self.branches(node, instance):
            if isinstance(sub.get("items"), dict):
                return sub["items"]
        return None

    def types(self, node: Node, instance: Any = None) -> set[str]:
        """Every JSON type the node admits (looking through refs and unions)."""
        found: set[str] = set()
        for sub in self.branches(node, instance):
            t = sub.get("type")
            if isinstance(t, str):
                found.add(t)
            elif isinstance(t, list):
                found.update(t)
            if "const" in sub and sub["const"] is None:
                found.add("null")
            if "properties" in sub:
                found.add("object")
        return found

    def child(self, node: Node, part: str | int, instance: Any = None) -> Node | None:
        """The schema of `instance[part]`, or None when the schema has no such place."""
        if isinstance(part, int):
            return self.items(node, instance)
        spec = self.properties(node, instance).get(part)
        return spec if spec is not None else self.extra(node, instance)

    def node_at(self, path: Path, data: Any) -> Node | None:
        node: Node | None = self.root
        value = data
        for part in path:
            if node is None:
                return None
            node = self.child(node, part, value)
            value = get(value, (part,))
        return node

    def required(self, node: Node, instance: Any = None) -> set[str]:
        """Keys the node requires whatever else the config holds (a `then` requires only under its `if`)."""
        return {r for sub in self.branches(node, instance, conditional=False) for r in sub.get("required", ())}

    def has_default(self, node: Node) -> bool:
        return any("default" in sub for sub in self.branches(node))

    def null_is_absent(self, parent: Node, instance: Any, key: str) -> bool:
        """Whether null at `key` of `instance` (under `parent`) means the key left out: the key may be left out,
        has no default and does not admit null. So `--set vlm=null` drops `[vlm]`, as the trainer's own `None`
        does, and a dump's `"vlm": None` is a config without `[vlm]`. Only a declared property: a map with free
        keys holds what is written."""
        node = self.properties(parent, instance).get(key)
        return (
            node is not None
            and key not in self.required(parent, instance)
            and not self.has_default(node)
            and "null" not in self.types(node)
        )

    def without_absent_nulls(self, data: Any, node: Node | None = None) -> Any:
        """A copy of `data` with every null that means a left-out key (`null_is_absent`) left out."""
        node = self.root if node is None else node
        if isinstance(data, list):
            items = self.items(node, data)
            return [self.without_absent_nulls(v, items) if items is not None else v for v in data]
        if not isinstance(data, dict):
            return data
        out = {}
        for key, value in data.items():
            if value is None and self.null_is_absent(node, data, key):
                continue
            child = self.child(node, key, data)
            out[key] = self.without_absent_nulls(value, child) if child is not None else value
        return out

    # -- defaults -----------------------------------------------------------------

    def fill_defaults(self, data: Any) -> Any:
        """A copy of `data` with every absent defaulted field filled in."""
        return self._fill(self.root, data)

    def _fill(self, node: Node | None, value: Any) -> Any:
        """`value` copied, with the defaults of `node` (None: no schema there) filled in; one pass."""
        if isinstance(value, dict):
            if node is None:
                return _copy(value)
            fill = self._fill
            simple = self._simple.get(id(node))
            if simple is not None:  # no union tag chooses the node's branch: only containers need a walk
                defaults, props, extra, nested, by_name = simple
                out = dict(value)
                out.update(by_name)  # each default absent from `value` after its keys, as `defaults` orders them,
                out.update(value)  # and the written values back over theirs: two C loops (a Python one is 2x slower)
                for name, item in value.items():
                    if isinstance(item, (dict, list)):
                        out[name] = fill(props.get(name, extra), item)
                for name in nested:
                    if name not in value:
                        out[name] = fill(props.get(name, extra), out[name])
                return out
            defaults, props, extra = self._object_plan(node, value)
            value = dict(value)
            if defaults:
                added = False
                for name, default in defaults:
                    if name not in value:
                        value[name] = default
                        added = True
                if added and self._discriminator(node) is not None:
                    _, props, extra = self._object_plan(node, value)  # a filled tag may select another branch
            for name, item in value.items():
                if isinstance(item, (dict, list)):
                    value[name] = fill(props.get(name, extra), item)
            return value
        if isinstance(value, list):
            items = None if node is None else self.items(node, value)
            fill = self._fill
            return [fill(items, v) if isinstance(v, (dict, list)) else v for v in value]
        return value

    def _object_plan(
        self, node: Node, value: dict[str, Any]
    ) -> tuple[list[tuple[str, Any]], dict[str, Node], Node | None]:
        """Defaults, property schemas and free-key schema of an object node (cached per union branch).

        A discriminator written as a list, a table or anything but text, a number or null selects
        no branch and does not key the cache (the schema reports its type); its plan is built each time.
        """
        known = self._discriminators
        disc = known[id(node)] if id(node) in known else self._discriminator(node)
        tag = value.get(disc) if disc else None
        key = (id(node), tag) if isinstance(tag, (str, int, float, type(None))) else None
        plan = self._plans.get(key) if key is not None else None
        if plan is None:
            props = self.properties(node, value)
            # a `then` may add keys only under its `if` (an Axolotl plugin's settings): their defaults are not filled
            always = {n for sub in self.branches(node, value, conditional=False) for n in sub.get("properties", {})}
            defaults = [
                (n, d) for n, spec in props.items() if n in always and (d := self._default(spec)) is not _MISSING
            ]
            plan = (defaults, props, self.extra(node, value))
            if key is not None:
                self._plans[key] = plan
                if disc is None:  # no union tag chooses its branch: the one plan of the node
                    nested = tuple(n for n, d in defaults if isinstance(d, (dict, list)))
                    self._simple[id(node)] = (*plan, nested, dict(defaults))
        return plan

    def _discriminator(self, node: Node) -> str | None:
        key = id(node)
        if key not in self._discriminators:
            found = self.discriminated(node, {})
            self._discriminators[key] = found[0] if found else None
        return self._discriminators[key]

    def _default(self, spec: Node) -> Any:
        for sub in self.branches(spec):
            if "default" in sub:
                return sub["default"]
        return _MISSING

    # -- index for suggestions ------------------------------------------------------

    def _walk_paths(self, node: Node, prefix: Path, depth: int = 0) -> Iterator[Path]:
        if depth > 12:
            return
        for sub in self.branches(node, every=True):
            for name, spec in sub.get("properties", {}).items():
                here = (*prefix, name)
                yield here
                yield from self._walk_paths(spec, here, depth + 1)
            items = sub.get("items")
            if isinstance(items, dict) and prefix:
                yield from self._walk_paths(items, (*prefix, 0), depth + 1)

    def paths_ending_in(self, key: str) -> list[Path]:
        return [p for p in self.paths if p[-1] == key]


_MISSING = object()
_ANNOTATIONS = frozenset({"description", "markdownDescription", "title", "default", "examples", "$comment"})


def _copy(value: Any) -> Any:
    """Deep copy of plain data (dicts, lists, scalars), much cheaper than copy.deepcopy."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


_JSON_TYPES = (("null", type(None)), ("integer", int), ("number", float), ("string", str), ("array", list))


def json_type(value: Any) -> str:
    """The JSON Schema type of a value as read from a config (3 is "integer", 3.0 "number"; "" for none)."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, dict):
        return "object"
    return next((name for name, kind in _JSON_TYPES if isinstance(value, kind)), "")


def named_types(types: Iterable[str]) -> list[str]:
    """The types a field admits as a reader names them, in their order: `number` takes in `integer` (a schema
    lists both where the loader reads a value as `int | float`, so that "5" is read as 5)."""
    found = list(types)
    return [t for t in found if t != "integer"] if "number" in found else found


def is_type(value: Any, kind: str) -> bool:
    """Whether `value` is of JSON Schema type `kind` as the strict validator reads it (8.0 is no integer, a
    boolean no number), without importing a validator."""
    found = json_type(value)
    return found == kind or (kind == "number" and found == "integer")


def get(data: Any, path: Path) -> Any:
    """The value at `path`, or None when any step is absent."""
    for part in path:
        if type(data) is dict or isinstance(data, dict):  # the exact type first: asked for every rule's paths
            data = data.get(part)
        elif isinstance(data, list) and isinstance(part, int) and -len(data) <= part < len(data):
            data = data[part]
        else:
            return None
    return data


def replace_value(data: Any, path: Path, value: Any) -> None:
    """Put `value` at `path`, where a value is written already (another reading of it replaces it)."""
    for part in path[:-1]:
        data = data[part]
    data[path[-1]] = value
