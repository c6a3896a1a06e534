"""Every field of a schema as a flat row: path, union variant, type, default, bounds, description.

The reference docs list these rows, and `trainspec schema diff` compares them
between two family versions.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

from trainspec.spec.paths import Path, format_path
from trainspec.spec.schema import Node, Schema, named_types

MAP_KEY = "<name>"
"""The step standing for any key of a map whose values are tables (`data.anneal_weights.<name>`)."""

BOUNDS = (
    ("minimum", ">="),
    ("exclusiveMinimum", ">"),
    ("maximum", "<="),
    ("exclusiveMaximum", "<"),
    ("minItems", "items >="),
    ("maxItems", "items <="),
    ("minLength", "length >="),
    ("maxLength", "length <="),
)


@dataclass(frozen=True)
class Field:
    """One field; `variant` names the union member it belongs to (`arch = "mot"`) or the condition that adds
    it (`plugins lists "…"`), else ""."""

    path: str
    variant: str
    type: str
    default: str
    bounds: str
    description: str


def fields(schema: Schema) -> list[Field]:
    """Every field, in schema order, nested ones after their section."""
    return list(_walk(schema, schema.root, (), "", 0))


def _walk(schema: Schema, node: Node, path: Path, variant: str, depth: int) -> Iterator[Field]:
    if depth > 12:
        return
    node = schema.deref(node)
    props: dict[str, Node] = {}
    for sub in [node, *(schema.deref(s) for s in node.get("allOf", ()))]:
        for name, spec in sub.get("properties", {}).items():
            props.setdefault(name, spec)
    for name, spec in props.items():
        here = (*path, name)
        yield _field(schema, spec, here, variant)
        yield from _children(schema, spec, here, variant, depth)
    for sub in (schema.deref(s) for s in node.get("allOf", ())):  # keys a conditional adds (a plugin's)
        then = schema.deref(sub.get("then", {}))
        added = {n: spec for n, spec in then.get("properties", {}).items() if n not in props}
        when = _condition(sub.get("if", {}))
        for name, spec in added.items():
            yield _field(schema, spec, (*path, name), when)
            yield from _children(schema, spec, (*path, name), when, depth)
    disc = node.get("discriminator")
    for key in ("oneOf", "anyOf"):
        if isinstance(disc, dict) and key in node:
            prop = disc["propertyName"]
            for member in (schema.deref(m) for m in node[key]):
                value = member.get("properties", {}).get(prop, {}).get("const")
                yield from _walk(schema, member, path, f"{prop} = {json.dumps(value)}", depth + 1)


def _condition(node: Node) -> str:
    """A conditional's `if` in words, as far as a key's value or a list's item decides it."""
    said = []
    for name, spec in node.get("properties", {}).items():
        if "const" in spec:
            said.append(f"{name} = {json.dumps(spec['const'])}")
        elif isinstance(spec.get("contains"), dict):
            listed = spec["contains"].get("enum") or [spec["contains"].get("const")]
            said.append(f"{name} lists {json.dumps(listed[0])}")
    return " and ".join(said) or "a condition holds"


def _children(schema: Schema, spec: Node, path: Path, variant: str, depth: int) -> Iterator[Field]:
    target = schema.deref(spec)
    if "properties" in target or "discriminator" in target or "allOf" in target:
        yield from _walk(schema, target, path, variant, depth + 1)
    elif "anyOf" in target and "discriminator" not in target:  # an optional section: [section, null]
        for member in target["anyOf"]:
            if "properties" in schema.deref(member):
                yield from _walk(schema, schema.deref(member), path, variant, depth + 1)
    items = target.get("items")
    if isinstance(items, dict) and "properties" in schema.deref(items):
        yield from _walk(schema, items, (*path, 0), variant, depth + 1)
    elif isinstance(items, dict) and "anyOf" in schema.deref(items):  # items of several models, each its own rows
        for member in map(schema.deref, schema.deref(items)["anyOf"]):
            if "properties" in member:
                yield from _walk(schema, member, (*path, 0), str(member.get("title", variant)), depth + 1)
    extra = target.get("additionalProperties")
    if isinstance(extra, dict) and "properties" in schema.deref(extra):
        yield from _walk(schema, extra, (*path, MAP_KEY), variant, depth + 1)


def _field(schema: Schema, spec: Node, path: Path, variant: str) -> Field:
    node = schema.deref(spec)
    types = named_types(sorted(schema.types(spec))) or ["any"]
    default = next((json.dumps(s["default"]) for s in schema.branches(spec) if "default" in s), "")
    bounds = [f"{sign} {json.dumps(node[key])}" for key, sign in BOUNDS if key in node]
    if "enum" in node:
        bounds.append("one of " + ", ".join(json.dumps(v) for v in node["enum"]))
    if "const" in node:
        bounds.append(f"= {json.dumps(node['const'])}")
    if "pattern" in node:
        bounds.append(f"matches `{node['pattern']}`")
    if node.get("uniqueItems"):
        bounds.append("no repeated items")
    description = str(spec.get("description") or node.get("description", ""))
    return Field(format_path(path, pattern=True), variant, " or ".join(types), default, "; ".join(bounds), description)
