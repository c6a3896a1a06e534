"""Where a family version's schema and the trainer's own config classes disagree, found by reading both.

    python tools/family_drift.py tests/data/drift/specforge@0.2.0.json            # text; exit 1 on drift
    python tools/family_drift.py tests/data/drift/specforge@0.2.0.json --markdown # the reference page's table

A family version is written from a reading of the trainer's code; when the
trainer moves, this is how the project notices. A drift file names the family
version, where the trainer's config classes are (a file inside an installed
distribution, or an importable module, and the root class) and a short,
reviewed allow-list: each difference that is meant (a check upstream makes in
a validator that trainspec states in the schema, a default pydantic cannot
export), with its reason. It may also name, under `conditional`, schema
definitions that a conditional applies (a plugin's settings, added when the
config lists the plugin) with the class each mirrors.

Both sides are flattened to the same table, one row per field path
(`a.b`, items of a list at `a.b[]`), with the field's JSON types, default,
whether it is required, its allowed values, its constraints
(minimum/exclusiveMinimum/maximum/exclusiveMaximum, min/max length and items,
pattern, multipleOf, uniqueItems) and, for objects, whether unknown keys are
refused. The classes are read as declared, never instantiated from a config:
pydantic models (`model_fields`, `Field(...)` constraints, `extra="forbid"`)
and dataclasses (`Annotated` constraints); types through `Optional`/unions,
`Literal`, `Enum`, lists, tuples, sets, mappings and nested classes. Nothing
here knows a family: the drift file says everything specific.

A difference is reported as the field "added" (in the classes only), "removed"
(in the schema only), "retyped", "re-defaulted" or "constraint changed". The
run fails (exit 1) on a difference the allow-list does not name, and on an
allow-list entry that no longer matches anything.
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import importlib
import importlib.util
import json
import sys
import types
import typing
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from trainspec.families import get_family
from trainspec.spec.schema import json_type

ROOT = Path(__file__).resolve().parent.parent

CONSTRAINTS = (
    "minimum",
    "exclusiveMinimum",
    "maximum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "pattern",
    "multipleOf",
    "uniqueItems",
)
ASPECTS = ("type", "default", "required", "enum", *CONSTRAINTS, "closed")
KINDS = {"type": "retyped", "default": "re-defaulted"}
_ABSENT = "(none)"

Row = dict[str, Any]
"""One field: aspect -> value (JSON-like); an aspect a side does not state is left out."""


@dataclass(frozen=True)
class Drift:
    """One difference between the schema (`schema`) and the classes (`classes`) at a field path."""

    path: str
    aspect: str
    schema: str
    classes: str

    @property
    def kind(self) -> str:
        if self.aspect == "field":
            return "added" if self.schema == _ABSENT else "removed"
        return KINDS.get(self.aspect, "constraint changed")


# -- the schema side ----------------------------------------------------------------------------------------


def schema_rows(schema: Mapping[str, Any]) -> dict[str, Row]:
    """Every field of a JSON Schema (Draft 2020-12, local `$ref`s), flattened by path."""
    rows: dict[str, Row] = {}
    _schema_object(schema, schema, "", rows)
    return rows


def _deref(root: Mapping[str, Any], node: Mapping[str, Any]) -> Mapping[str, Any]:
    seen = 0
    while "$ref" in node and seen < 32:
        target: Any = root
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        seen += 1
    return node


def _branches(root: Mapping[str, Any], node: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The node and its union members and allOf parts, dereferenced (conditionals are left out)."""
    node = _deref(root, node)
    found = [node]
    for key in ("anyOf", "oneOf", "allOf"):
        for member in node.get(key, ()):
            found += _branches(root, member)
    return found


def _schema_field(root: Mapping[str, Any], node: Mapping[str, Any], path: str, rows: dict[str, Row]) -> Row:
    row: Row = {}
    kinds: set[str] = set()
    parts = _branches(root, node)
    for part in parts:
        declared = part.get("type")
        kinds.update([declared] if isinstance(declared, str) else declared or ())
        if "const" in part:
            row.setdefault("enum", []).append(part["const"])
            kinds.add(json_type(part["const"]))
        for value in part.get("enum", ()):
            row.setdefault("enum", []).append(value)
            kinds.add(json_type(value))
        for key in CONSTRAINTS:
            if key in part:
                row[key] = part[key]
    if "default" in node or "default" in parts[0]:
        row["default"] = node.get("default", parts[0].get("default"))
    _types(row, kinds)
    if "object" in kinds and any("properties" in p for p in parts):
        _schema_object(root, node, path, rows)
        row["closed"] = any(p.get("additionalProperties") is False for p in parts)
    items = [p["items"] for p in parts if isinstance(p.get("items"), Mapping)]
    if "array" in kinds and items:
        rows[f"{path}[]"] = _schema_field(root, items[0], f"{path}[]", rows)
    return row


def _schema_object(root: Mapping[str, Any], node: Mapping[str, Any], path: str, rows: dict[str, Row]) -> None:
    properties: dict[str, Any] = {}
    required: set[str] = set()
    for part in _branches(root, node):
        for name, spec in part.get("properties", {}).items():
            properties.setdefault(name, spec)
        required.update(part.get("required", ()))
    for name, spec in properties.items():
        here = f"{path}.{name}" if path else name
        row = _schema_field(root, spec, here, rows)
        row["required"] = name in required
        rows[here] = row


def _types(row: Row, kinds: set[str]) -> None:
    """The row's JSON types (`int | float` keeps both: the loader reads "5" as 5 there, as 5.0 for a float),
    and its allowed values with null when null is allowed."""
    row["type"] = sorted(kinds)
    if "enum" in row:
        row["enum"] = _sorted(row["enum"] + ([None] if "null" in kinds else []))


# -- the classes side ---------------------------------------------------------------------------------------


def class_rows(root: type) -> dict[str, Row]:
    """Every field of a pydantic model or dataclass and of the classes it nests, flattened by path."""
    rows: dict[str, Row] = {}
    _class_object(root, "", rows)
    return rows


def _is_model(kind: Any) -> bool:
    return isinstance(kind, type) and hasattr(kind, "model_fields") and hasattr(kind, "model_config")


def _is_class(kind: Any) -> bool:
    return _is_model(kind) or (isinstance(kind, type) and dataclasses.is_dataclass(kind))


def _class_fields(kind: type) -> Iterator[tuple[str, Any, list[Any], bool, Any, dict[str, str]]]:
    """(name, annotation, constraint metadata, required, default, notes) of each field of a class; the notes
    are what it says to people: its description, and why it is deprecated."""
    if _is_model(kind):
        undefined = _pydantic_undefined()
        for name, info in kind.model_fields.items():  # type: ignore[attr-defined]
            default = info.default_factory() if info.default_factory is not None else info.default
            extra = info.json_schema_extra if isinstance(info.json_schema_extra, Mapping) else {}
            notes = {
                "description": info.description or str(extra.get("description") or ""),
                "deprecated": _deprecation(info.deprecated),
            }
            yield (
                info.alias or name,
                info.annotation,
                list(info.metadata),
                info.is_required(),
                (None if default is undefined else default),
                {k: v for k, v in notes.items() if v},
            )
        return
    hints = typing.get_type_hints(kind, include_extras=True)
    for field in dataclasses.fields(kind):
        required = field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
        if field.default_factory is not dataclasses.MISSING:
            default = field.default_factory()
        else:
            default = None if required else field.default
        described = field.metadata.get("description")
        yield field.name, hints[field.name], [], required, default, {"description": str(described)} if described else {}


def _deprecation(why: Any) -> str:
    """Why a field is deprecated ("" when it is not): its reason (text, or a `warnings.deprecated`), else a word."""
    if why is None or why is False:
        return ""
    return "Deprecated." if why is True else str(getattr(why, "message", why))


def _pydantic_undefined() -> Any:
    from pydantic_core import PydanticUndefined

    return PydanticUndefined


def _class_object(kind: type, path: str, rows: dict[str, Row], *, required_here: bool = True) -> None:
    """The fields of `kind` under `path`; a field another class of the same union already gave is kept,
    and with `required_here` False (a later member of a union) none is required."""
    for name, annotation, extra, required, default, notes in _class_fields(kind):
        here = f"{path}.{name}" if path else name
        if here in rows:
            continue
        row = _class_field(annotation, extra, here, rows)
        row["required"] = required and required_here
        if not required:
            row["default"] = _jsonable(default)
        row.update(notes)  # not compared: what a field says to people is the schema's to curate
        rows[here] = row


def _class_field(annotation: Any, extra: list[Any], path: str, rows: dict[str, Row]) -> Row:
    row: Row = {}
    kinds: set[str] = set()
    nested: list[type] = []
    items: list[Any] = []
    anything = False
    branches: list[Row] = []
    for member, meta in _members(annotation, extra):
        branch: Row = {}
        for m in meta:
            _constraint(branch, m, member)
        named = _class_kind(member, branch, nested, items)
        anything = anything or not named
        kinds.update(named)
        row.update({k: v for k, v in branch.items() if k != "enum"})
        row.setdefault("enum", []).extend(branch.get("enum", ()))
        if named != {"null"}:
            branches.append({"type": sorted(named), **branch})
    if not row["enum"]:
        del row["enum"]
    _types(row, set() if anything else kinds)  # `Any | None` takes any value, not only null
    if len(branches) > 1 and any(len(b) > 1 for b in branches):
        row["branches"] = branches  # what each member allows (`Literal["auto"] | bool`); not compared
    for kind in nested:  # a union of classes: the fields of each, the first's where they share one
        _class_object(kind, path, rows, required_here=len(nested) == 1)
    if nested:
        row["closed"] = all(_closed(kind) for kind in nested)
    if items:
        rows[f"{path}[]"] = _class_field(items[0], [], f"{path}[]", rows)
    return row


def _members(annotation: Any, extra: list[Any]) -> Iterator[tuple[Any, list[Any]]]:
    """Each member of a union, unwrapped from `Annotated`, with the constraints that apply to it."""
    meta = list(extra)
    while typing.get_origin(annotation) is typing.Annotated:
        for item in annotation.__metadata__:  # a pydantic `Field(...)` inside holds its constraints as metadata
            meta += item.metadata if isinstance(getattr(item, "metadata", None), list) else [item]
        annotation = annotation.__origin__
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        for arg in typing.get_args(annotation):
            yield from _members(arg, meta)
        return
    yield annotation, meta


def _class_kind(member: Any, row: Row, nested: list[type], items: list[Any]) -> set[str]:
    """The JSON types of one union member; its allowed values, nested class or item type are noted."""
    origin = typing.get_origin(member)
    if member is type(None) or member is None:
        return {"null"}
    if origin is typing.Literal:
        values = [_jsonable(v) for v in typing.get_args(member)]
        row.setdefault("enum", []).extend(values)
        return {json_type(v) for v in values}
    if isinstance(member, type) and issubclass(member, enum.Enum):
        values = [_enum_value(m) for m in member]
        row.setdefault("enum", []).extend(values)
        return {json_type(v) for v in values}
    if _is_class(member):
        nested.append(member)
        return {"object"}
    base = origin or member
    if base in (list, tuple, set, frozenset) or (isinstance(base, type) and issubclass(base, (list, tuple, set))):
        args = [a for a in typing.get_args(member) if a is not Ellipsis]
        if args:
            items.append(args[0])
        return {"array"}
    if base in (dict, Mapping) or (isinstance(base, type) and issubclass(base, Mapping)):
        return {"object"}
    simple = {bool: "boolean", int: "integer", float: "number", str: "string"}
    if member in simple:
        return {simple[member]}
    return set()  # Any, or a type the schema cannot name: any value


def _constraint(row: Row, meta: Any, member: Any) -> None:
    """One piece of constraint metadata (annotated_types, pydantic's) as JSON Schema keywords."""
    for attr, key in (("gt", "exclusiveMinimum"), ("ge", "minimum"), ("lt", "exclusiveMaximum"), ("le", "maximum")):
        if getattr(meta, attr, None) is not None:
            row[key] = getattr(meta, attr)
    if getattr(meta, "multiple_of", None) is not None:
        row["multipleOf"] = meta.multiple_of
    if getattr(meta, "pattern", None) is not None:
        row["pattern"] = meta.pattern
    sized = (
        "Items" if typing.get_origin(member) in (list, tuple, set, frozenset) or member in (list, tuple) else "Length"
    )
    for attr, key in (("min_length", "min"), ("max_length", "max")):
        if getattr(meta, attr, None) is not None:
            row[key + sized] = getattr(meta, attr)


def _closed(kind: type) -> bool:
    if _is_model(kind):
        return kind.model_config.get("extra") == "forbid"  # type: ignore[attr-defined]
    return True  # a dataclass's constructor refuses a keyword it does not declare


def _jsonable(value: Any) -> Any:
    """A default as JSON would write it; a nested class's instance as the fields it sets to non-defaults."""
    if isinstance(value, enum.Enum):
        return _enum_value(value)
    if _is_model(type(value)):
        return _jsonable(value.model_dump(exclude_defaults=True))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fresh = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        return {k: _jsonable(v) for k, v in fresh.items() if not _is_default(type(value), k, v)}
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in value]
    return value


def _enum_value(member: enum.Enum) -> Any:
    """An enum member as a config writes it: its value, or its name when the value is no JSON scalar (a dtype)."""
    value = _jsonable(member.value)
    return value if value is None or isinstance(value, (str, int, float, bool)) else member.name


def _is_default(kind: type, name: str, value: Any) -> bool:
    field = next(f for f in dataclasses.fields(kind) if f.name == name)
    if field.default_factory is not dataclasses.MISSING:
        return bool(value == field.default_factory())
    return field.default is not dataclasses.MISSING and bool(value == field.default)


# -- comparing ----------------------------------------------------------------------------------------------


def compare(schema: dict[str, Row], classes: dict[str, Row]) -> list[Drift]:
    """Every difference, by path and aspect, in path order."""
    found = [Drift(p, "field", _show(_summary(schema[p])), _ABSENT) for p in schema.keys() - classes.keys()]
    found += [Drift(p, "field", _ABSENT, _show(_summary(classes[p]))) for p in classes.keys() - schema.keys()]
    for path in schema.keys() & classes.keys():
        for aspect in ASPECTS:
            a, b = schema[path].get(aspect, _ABSENT), classes[path].get(aspect, _ABSENT)
            if not _same(a, b):
                found.append(Drift(path, aspect, _show(a), _show(b)))
    return sorted(found, key=lambda d: (d.path, ASPECTS.index(d.aspect) if d.aspect in ASPECTS else -1))


def _summary(row: Row) -> str:
    """A field in one line: `integer = 1, exclusiveMinimum 0`."""
    kinds = "|".join(row.get("type", ())) or "any"
    head = kinds + (f" = {json.dumps(row['default'])}" if "default" in row else "")
    rest = [f"{a} {json.dumps(row[a], ensure_ascii=False)}" for a in ("enum", *CONSTRAINTS) if a in row]
    return ", ".join([head, *rest, *(["required"] if row.get("required") else [])])


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON values: 1 and 1.0 are the same number, true is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _sorted(values: list[Any]) -> list[Any]:
    return sorted({json.dumps(v, sort_keys=True): v for v in values}.values(), key=lambda v: json.dumps(v))


def _show(value: Any) -> str:
    return value if isinstance(value, str) and value == _ABSENT else json.dumps(value, ensure_ascii=False)


# -- a drift file: what to compare, and what is meant -------------------------------------------------------


@dataclass(frozen=True)
class Report:
    """The outcome for one drift file: `drift` not allowed, `stale` allow-list entries that match nothing."""

    family: str
    source: str
    drift: list[Drift]
    allowed: list[tuple[Drift, str]]
    stale: list[dict[str, str]]

    @property
    def clean(self) -> bool:
        return not self.drift and not self.stale


def load_classes(spec: Mapping[str, str]) -> tuple[type, str]:
    """The root class a drift file names, and where it came from (without running a package's `__init__`)."""
    name = spec["class"]
    if "distribution" in spec:
        dist = metadata.distribution(spec["distribution"])
        file = Path(str(dist.locate_file(spec["file"])))
        stem = spec["file"].removesuffix(".py").replace("/", "_")
        module_name = f"_drift_{spec['distribution']}_{dist.version}_{stem}".replace(".", "_").replace("-", "_")
        loaded = importlib.util.spec_from_file_location(module_name, file)
        if loaded is None or loaded.loader is None:
            raise ImportError(f"cannot import {file}")
        module = importlib.util.module_from_spec(loaded)
        sys.modules[module_name] = module  # pydantic resolves postponed annotations through the module
        loaded.loader.exec_module(module)
        return getattr(module, name), f"{spec['distribution']}=={dist.version}, {spec['file']}"
    module = importlib.import_module(spec["module"])
    return getattr(module, name), spec["module"]


def run(drift_file: Path) -> Report:
    """Compare the family version's schema with the classes the drift file names, and each of its
    `conditional` definitions (settings a conditional adds, such as a plugin's) with its own class; their
    paths start with the definition's name (`LigerArgs:liger_rms_norm`)."""
    spec = json.loads(drift_file.read_text(encoding="utf-8"))
    family = get_family(spec["family"])
    root, source = load_classes(spec["classes"])
    found = compare(schema_rows(family.schema.root), class_rows(root))
    for name, classes in spec.get("conditional", {}).items():
        definition = {**family.schema.root, **family.schema.root["$defs"][name]}
        kind, _ = load_classes(classes)
        found += [
            Drift(f"{name}:{d.path}", d.aspect, d.schema, d.classes)
            for d in compare(schema_rows(definition), class_rows(kind))
        ]
    allow = {(a["path"], a["aspect"]): a for a in spec.get("allowed", ())}
    allowed = [(d, allow[(d.path, d.aspect)]["reason"]) for d in found if (d.path, d.aspect) in allow]
    used = {(d.path, d.aspect) for d, _ in allowed}
    return Report(
        family.id,
        f"{source}:{spec['classes']['class']}",
        [d for d in found if (d.path, d.aspect) not in allow],
        allowed,
        [a for key, a in allow.items() if key not in used],
    )


def render_text(report: Report) -> str:
    lines = [f"{report.family} vs {report.source}: {len(report.drift)} unexpected, {len(report.allowed)} allowed"]
    lines += [f"  {d.kind}: {d.path} ({d.aspect}): schema {d.schema}, classes {d.classes}" for d in report.drift]
    lines += [f"  allow-list entry matches nothing: {a['path']} ({a['aspect']})" for a in report.stale]
    return "\n".join(lines) + "\n"


def render_markdown(report: Report) -> str:
    """The differences as a table for the version's reference page, the allowed ones with their reason."""
    rows = [(d, "**not allowed**") for d in report.drift] + list(report.allowed)
    lines = [
        f"Read from `{report.source}` by `tools/family_drift.py`: "
        f"{len(rows)} difference{'s' if len(rows) != 1 else ''}, each meant unless marked.",
        "",
        "| field | difference | schema | upstream classes | why |",
        "|---|---|---|---|---|",
    ]
    for d, why in sorted(rows, key=lambda r: (r[0].path, r[0].aspect)):
        cell = f"{d.kind} ({d.aspect})" if d.kind == "constraint changed" else d.kind
        lines.append(f"| `{d.path}` | {cell} | {_cell(d.schema)} | {_cell(d.classes)} | {why} |")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    short = text if len(text) <= 60 else text[:59] + "…"
    return f"`{short}`".replace("|", "\\|") if short != _ABSENT else _ABSENT


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("drift_file", type=Path, help="a drift file (tests/data/drift/*.json)")
    parser.add_argument("--markdown", action="store_true", help="print the reference page's table instead")
    args = parser.parse_args()
    report = run(args.drift_file)
    sys.stdout.write(render_markdown(report) if args.markdown else render_text(report))
    return 0 if report.clean else 1


if __name__ == "__main__":
    sys.exit(main())
