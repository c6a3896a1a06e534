"""The verdict follows what the family's loader reads, where its YAML differs from YAML 1.2.

trainspec reads YAML 1.2, as editors do; a loader built on PyYAML's safe
loader reads plain scalars by YAML 1.1 (`017` is 15, `off` is false,
`2024_01_01` an integer, `1e-4` text), then converts them as pydantic does in
its default lax mode. For each scalar the two readings disagree on (the YAML
reader records them, `Document.yaml_1_1`), this asks pydantic what the
schema's type at that path makes of the loader's reading:

- refused: an error (`yaml-dialect-refused`), even though YAML 1.2 reads a valid value;
- accepted, but another value than YAML 1.2's: a warning (`yaml-dialect`);
- accepted, the same value (`1e-4` -> 0.0001): nothing;
- YAML 1.2's value has a type the field refuses, but the loader's reading
  passes (`1:30` or `1_000` in an integer field, `0o17` in a text field): the
  loader's value is what trainspec checks (`adopt_loader_readings`, before
  validation), with a warning (`yaml-dialect`) that says both readings;
- except for YAML 1.1's boolean words (`yes` for a boolean): the type error
  stays (trainspec is stricter, as documented) and says what the loader reads.

The same question answers the other way trainspec is stricter than a
loader: a value the schema refuses by type (`8.0` in an integer field, the
text "8") that the loader converts gets what the loader makes of it added to
the error. The family states its loader's conversion (`Family.loader_conversion`,
pydantic's lax mode by default); pydantic-core is imported only when a file needs it.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Any

from trainspec.spec.codes import NON_FINITE_NUMBER, NOT_ALLOWED_VALUE, WRONG_TYPE, YAML_DIALECT, YAML_DIALECT_REFUSED
from trainspec.spec.diagnostics import Clause, Diagnostic, Severity
from trainspec.spec.document import Document, Unreadable
from trainspec.spec.family import Family
from trainspec.spec.paths import Path, format_path
from trainspec.spec.schema import get, json_type, replace_value
from trainspec.spec.wording import show

_CORE_SCHEMAS: dict[str, dict[str, Any]] = {
    "string": {"type": "str"},
    "integer": {"type": "int"},
    "number": {"type": "float"},
    "boolean": {"type": "bool"},
    "null": {"type": "none"},
    "array": {"type": "list", "items_schema": {"type": "any"}},
    "object": {"type": "dict", "keys_schema": {"type": "any"}, "values_schema": {"type": "any"}},
}
"""pydantic-core's schema of the Python type pydantic reads each JSON type as."""


def loader_readings(
    doc: Document, family: Family, found: list[Diagnostic]
) -> Iterator[tuple[Path, str, Severity, str]]:
    """(path, rule, severity, message) for scalars the loader reads differently; errors in `found` at such
    a scalar get the loader's reading added to their message."""
    if family.loader_yaml != "1.1" or not doc.yaml_1_1:
        return
    errors = {d.path: i for i, d in enumerate(found) if d.is_error}
    for path, older in doc.yaml_1_1.items():
        node = family.schema.node_at(path, doc.data)
        if node is None:
            continue
        where = format_path(path)
        written = get(doc.data, path)
        accepted, converted = _loader_value(family, node, older, doc.data, path)
        if path in errors:
            if accepted:
                i = errors[path]
                found[i] = found[i].adding(Clause(f"{family.name}'s loader reads it as {_loader(older)}"))
            continue
        if not accepted:
            fix = "quote the value to keep it as written" if isinstance(written, str) else f"write {show(written)}"
            message = (
                f"`{where}` = {show(written)} reads as {_loader(older)} by {family.name}'s loader (YAML 1.1), "
                f"which this field refuses; {fix}"
            )
            yield path, YAML_DIALECT_REFUSED.id, Severity.ERROR, message
        elif not _equal(converted, written):
            message = (
                f"`{where}` = {show(written)} for YAML 1.2 tools (and trainspec), but {family.name}'s loader "
                f"(YAML 1.1) reads {_loader(older)}; write {show(written)} or {show(converted)}, whichever is meant"
            )
            yield path, YAML_DIALECT.id, Severity.WARNING, message


def adopt_loader_readings(doc: Document, family: Family) -> Iterator[tuple[Path, str, Severity, str]]:
    """(path, rule, severity, message) for each scalar whose YAML 1.2 value the field refuses by type while the
    loader's reading passes; the document then holds the loader's value, so the schema and the rules judge what runs."""
    if family.loader_yaml != "1.1" or not doc.yaml_1_1:
        return
    for path, older in list(doc.yaml_1_1.items()):
        node = family.schema.node_at(path, doc.data)
        if node is None or isinstance(older, bool):  # YAML 1.1's yes/no/on/off: a documented stricter case
            continue
        written = get(doc.data, path)
        parent = get(doc.data, path[:-1]) if path else doc.data
        types = family.schema.types(node, parent)
        if not types or json_type(written) in types or (json_type(written) == "integer" and "number" in types):
            continue
        accepted, converted = _loader_value(family, node, older, doc.data, path)
        if not accepted:
            continue
        replace_value(doc.data, path, converted)
        yield (
            path,
            YAML_DIALECT.id,
            Severity.WARNING,
            (
                f"`{format_path(path)}` = {show(written)} for YAML 1.2 tools, which this field refuses, but "
                f"{family.name}'s loader (YAML 1.1) reads {_loader(older)}, the value trainspec checks; write "
                f"{show(converted)} so that every tool reads it alike"
            ),
        )


Conversion = Callable[[frozenset[str], Any], tuple[bool, Any]]
"""(the JSON types a field admits, a value) -> (whether the loader accepts the value, what it makes of it)."""


def pydantic_lax(types: frozenset[str], value: Any) -> tuple[bool, Any]:
    """What pydantic's default (lax) validation makes of `value` for a field of these JSON types."""
    from pydantic_core import ValidationError

    validator = _validator(types)
    if validator is None:
        return True, value
    try:
        return True, validator.validate_python(value)
    except ValidationError:
        return False, None


@lru_cache(maxsize=64)
def _validator(types: frozenset[str]) -> Any:
    """pydantic-core's validator of a field of these JSON types (None: any value), built once per set of types.

    It is the schema pydantic itself builds for the Python annotation (`int | None` is a nullable int, two
    or more types a union in their sorted order), so it validates alike; pydantic-core alone imports in a
    third of pydantic's time, which a check pays once per process."""
    from pydantic_core import SchemaValidator

    kinds = [_CORE_SCHEMAS[t] for t in sorted(types) if t in _CORE_SCHEMAS and t != "null"]
    if not kinds and "null" not in types:
        return None
    schema: dict[str, Any] = kinds[0] if len(kinds) == 1 else {"type": "union", "choices": kinds}
    if "null" in types:
        schema = {"type": "nullable", "schema": schema} if kinds else {"type": "none"}
    return SchemaValidator(schema)


def _loader_value(family: Family, node: Any, value: Any, data: Any, path: Path) -> tuple[bool, Any]:
    """(whether the family's loader accepts `value` at `path`, what it makes of it), enums included."""
    if isinstance(value, Unreadable):
        return False, None
    parent = get(data, path[:-1]) if path else data
    choices = _listed_union(family, node) if family.loader_conversion is None else None
    if choices is not None:
        accepted, converted = _lax_union(choices, value)
    else:
        accepted, converted = (family.loader_conversion or pydantic_lax)(
            frozenset(family.schema.types(node, parent)), value
        )
    return accepted and _admits(family, node, parent, converted), converted


Choice = tuple[str, tuple[Any, ...]]
"""One branch of a union as pydantic reads it: ("literal", its values) or ("type", (a JSON type,))."""


def _listed_union(family: Family, node: Any) -> tuple[Choice, ...] | None:
    """The branches of a union of listed values and plain types at `node` (`Literal["auto"] | bool | None`),
    or None for any other node. Its text is only the listed values: pydantic reads "true" as the boolean
    branch's true, not as text, which the JSON types alone (`boolean`, `string`) would say."""
    schema = family.schema
    node = schema.deref(node)
    if not isinstance(node, dict):
        return None
    members = next((node[k] for k in ("anyOf", "oneOf") if k in node), None)
    if members is None:
        return None
    choices: list[Choice] = []
    for member in map(schema.deref, members):
        if not isinstance(member, dict):
            return None
        keys = set(member) - {"description", "title"}
        if keys == {"enum"} and all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in member["enum"]):
            choices.append(("literal", tuple(member["enum"])))
        elif keys == {"type"} and isinstance(member["type"], str) and member["type"] in _CORE_SCHEMAS:
            choices.append(("type", (member["type"],)))
        else:
            return None
    return tuple(choices) if any(kind == "literal" for kind, _ in choices) else None


def _lax_union(choices: tuple[Choice, ...], value: Any) -> tuple[bool, Any]:
    """What pydantic's lax validation of such a union makes of `value`."""
    from pydantic_core import ValidationError

    try:
        return True, _union_validator(choices).validate_python(value)
    except ValidationError:
        return False, None


@lru_cache(maxsize=64)
def _union_validator(choices: tuple[Choice, ...]) -> Any:
    """pydantic-core's validator of the union pydantic builds for the annotation (a smart union, as pydantic's)."""
    from pydantic_core import SchemaValidator

    kinds = [
        {"type": "literal", "expected": list(values)} if kind == "literal" else _CORE_SCHEMAS[values[0]]
        for kind, values in choices
        if (kind, values) != ("type", ("null",))
    ]
    schema: dict[str, Any] = kinds[0] if len(kinds) == 1 else {"type": "union", "choices": kinds}
    if ("type", ("null",)) in choices:
        schema = {"type": "nullable", "schema": schema}
    return SchemaValidator(schema)


def _admits(family: Family, node: Any, parent: Any, value: Any) -> bool:
    """Whether `value` gets past the enums at `node`: it is one of their values, or a branch of a union
    with no enum declares its type (`bf16: yes` is the boolean branch of `true | false | "auto"`)."""
    branches = list(family.schema.branches(node, parent))
    allowed = [v for b in branches for v in b.get("enum", ())]
    if not allowed or value in allowed:
        return True
    unions = ("enum", "anyOf", "oneOf", "allOf", "$ref")
    return any("type" in b and not any(k in b for k in unions) and _type_fits(b["type"], value) for b in branches)


def _declared(family: Family, node: Any, data: Any, path: Path) -> list[str]:
    """The JSON types the schema declares at `path` (its node found by path, every branch of it)."""
    parent = get(data, path[:-1]) if path else data
    return sorted(family.schema.types(node, parent))


def _type_fits(declared: str | list[str], value: Any) -> bool:
    """Whether `value` has one of the declared JSON types (an integer is a number too)."""
    types = {declared} if isinstance(declared, str) else set(declared)
    kind = json_type(value)
    return kind in types or (kind == "integer" and "number" in types)


def loader_accepts(doc: Document, family: Family, path: Path) -> bool:
    """Whether the family's loader takes the value the file holds at `path` (as its YAML reads it, converted
    as it converts): a type error there is trainspec being stricter, not the loader refusing the file."""
    if family.loader_conversion is None and family.loader_yaml == "1.2":
        return False  # a family that states nothing about its loader
    node = family.schema.node_at(path, doc.data)
    if node is None:
        return False
    older = doc.yaml_1_1 if family.loader_yaml == "1.1" else {}
    value = older[path] if path in older else get(doc.data, path)
    if path not in older and family.loader_takes is not None and family.loader_takes(path, value, doc.data):
        return True  # a rule of the loader's own takes the value
    return _loader_value(family, node, value, doc.data, path)[0]


def loader_conversions(doc: Document, family: Family, found: list[Diagnostic]) -> None:
    """Add to each type error (and refused NaN or infinity) in `found` what the family's loader would make of
    the value, when it accepts it."""
    if family.loader_conversion is None and family.loader_yaml == "1.2" and family.loader_takes is None:
        return  # a family that states nothing about its loader
    for i, d in enumerate(found):
        path = d.path
        if d.rule not in _CONVERTED or not path or path in doc.yaml_1_1:
            continue  # where YAML 1.1 reads another value, `loader_readings` says what the loader reads
        takes = family.loader_takes(path, get(doc.data, path), doc.data) if family.loader_takes else None
        if takes:
            found[i] = d.adding(Clause(takes))  # a rule of the loader's own takes the value
            continue
        node = family.schema.node_at(path, doc.data)
        value = get(doc.data, path)
        if node is None or (d.rule == WRONG_TYPE.id and _type_fits(_declared(family, node, doc.data, path), value)):
            continue  # the field's own type admits the value: another model refused it (a dataset entry under `rl`)
        accepted, converted = _loader_value(family, node, value, doc.data, path)
        if accepted:
            reading = "keeps it as it is" if _equal(converted, value) else f"reads it as {show(converted)}"
            found[i] = d.adding(Clause(f"{family.name}'s loader itself {reading}"))


_CONVERTED = frozenset({WRONG_TYPE.id, NON_FINITE_NUMBER.id, NOT_ALLOWED_VALUE.id})
"""The schema's refusals a loader's conversion may turn into a valid value: a type, a non-finite number, and a
text that is not one of a union's listed values but which the loader reads as another branch's value
(`bf16: "true"` is true for pydantic)."""


def _unreadable_kind(value: str) -> str:
    return "date" if "-" in value else "number"


def _equal(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def _loader(value: Any) -> str:
    if isinstance(value, Unreadable):
        return f"nothing it can read ({show(str(value))} looks like a YAML 1.1 {_unreadable_kind(value)} but is none)"
    if isinstance(value, datetime.date):
        return f"the date {value.isoformat()}"
    if isinstance(value, str):
        return f"the text {show(value)}"
    if isinstance(value, bool):
        return show(value)
    return f"the {type(value).__name__.replace('int', 'integer')} {show(value)}"
