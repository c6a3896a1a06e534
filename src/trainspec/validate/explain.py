"""Schema errors explained: each error of the validator (`schema_walk`) becomes a finding about one
config path, in words, with an id taken from the schema (`x-trainspec-rule`) where the schema names
the constraint, else from the failing keyword, and the change it suggests where there is one.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from trainspec.spec.codes import (
    DIAGNOSTICS_TRUNCATED,
    INVALID_VALUE,
    MISSING_KEY,
    NOT_ALLOWED_VALUE,
    OUT_OF_RANGE,
    PATTERN_MISMATCH,
    UNKNOWN_KEY,
    WRONG_TYPE,
)
from trainspec.spec.diagnostics import Move, SetValue, Severity, Suggestion
from trainspec.spec.limits import DIAGNOSTICS
from trainspec.spec.paths import Path, format_path
from trainspec.spec.schema import Node, Schema, is_type, named_types
from trainspec.spec.schema_walk import Where, errors_along
from trainspec.spec.wording import MOST_LISTED, closest, listed, show, type_name
from trainspec.validate.fast import Error, fast_validator, stand_in, with_values_of

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError


RULE_ANNOTATION = "x-trainspec-rule"

_KEYWORD_RULES = {
    "type": WRONG_TYPE.id,
    "enum": NOT_ALLOWED_VALUE.id,
    "const": NOT_ALLOWED_VALUE.id,
    "pattern": PATTERN_MISMATCH.id,
    "required": MISSING_KEY.id,
    "additionalProperties": UNKNOWN_KEY.id,
    "unevaluatedProperties": UNKNOWN_KEY.id,
}
_SHAPE_KEYWORDS = frozenset({"additionalProperties", "unevaluatedProperties", "type"})
_BOUNDS = {
    "minimum": ">=",
    "maximum": "<=",
    "exclusiveMinimum": ">",
    "exclusiveMaximum": "<",
}
_TYPE_NAMES = {
    "integer": "an integer",
    "number": "a number",
    "string": "a string",
    "boolean": "a boolean (true or false)",
    "object": "a table/mapping",
    "array": "a list",
    "null": "null",
}


class Finding:
    """One schema problem, before it is placed in a file."""

    def __init__(
        self,
        path: Path,
        rule: str,
        message: str,
        at_key: bool,
        severity: Severity = Severity.ERROR,
        anchor: Path | None = None,
        wrong_type: bool = False,
        missing: bool = False,
        headerless: bool = False,
        suggestion: Suggestion | None = None,
    ):
        self.path = path
        self.suggestion = suggestion
        self.anchor = anchor
        self.wrong_type = wrong_type
        self.missing = missing
        self.headerless = headerless
        self.rule = rule
        self.message = message
        self.at_key = at_key
        self.severity = severity


def _type_names(types: str | list[str]) -> str:
    """JSON Schema types in words: `an integer or null`."""
    return " or ".join(_TYPE_NAMES.get(t, t) for t in named_types([types] if isinstance(types, str) else types))


def _described(value: Any) -> str:
    """`null`, or the type and the value (`string "8"`)."""
    return "null" if value is None else f"{type_name(value)} {show(value)}"


def findings(schema: Schema, validator: Any, data: Any, where: Where | None = None) -> list[Finding]:
    """Every schema problem of `data`, each once; a value of the wrong type gets only its type error,
    and a section whose keys are written without its header only that error (not "missing").

    `where`: what the compiled validator found; only the way to its errors and to the values it could
    not judge is walked (everything, when that finds nothing after all).
    (Explaining an error of `required` names every missing key, and jsonschema reports one such
    error per missing key.)
    """
    errors = errors_along(validator, data, where) if where is not None else None
    if errors is None:
        errors = list(validator.iter_errors(data))
    return _explained(schema, errors, data)


def explain(schema: Schema, validator: Callable[[], Any], data: Any, where: Where | None) -> list[Finding]:
    """`findings`, from the compiled validator's own errors when it reports each as python-jsonschema
    would (then python-jsonschema is not imported, nor the validator of record built: `validator()`
    builds it, only when needed)."""
    compiled = fast_validator(schema) if where is not None else None
    alike = None
    if compiled is not None and where is not None and not where.unjudged:
        alike = compiled.errors_alike(data, DIAGNOSTICS.value)
    elif compiled is not None and where is not None and (standing := stand_in(data)) is not None:
        inert = compiled.inert_stand_in(data, standing[0], where.unjudged)
        if inert is not None and compiled.error_paths(inert) == []:
            alike = []
        elif inert is not None and (found := compiled.errors_alike(inert, DIAGNOSTICS.value)) is not None:
            alike = with_values_of(data, found)
    return _explained(schema, alike, data) if alike is not None else findings(schema, validator(), data, where)


def _explained(schema: Schema, errors: Sequence[Error | ValidationError], data: Any) -> list[Finding]:
    """Each error in words, each finding once, at most `limits.DIAGNOSTICS` of them."""
    explained = (f for error in errors for f in _explain(schema, error, data))
    limit = DIAGNOSTICS.value  # explaining is what costs: a file of a million unknown keys stops here
    found = list({(f.path, f.rule, f.message): f for f in itertools.islice(explained, limit + 1)}.values())
    if len(found) > limit:
        message = DIAGNOSTICS.exceeded(f"more schema problems than the first {limit:,}, which are explained")
        found[limit:] = [Finding((), DIAGNOSTICS_TRUNCATED.id, message, at_key=False)]
    mistyped = {f.path for f in found if f.wrong_type}
    headerless = {f.path for f in found if f.headerless}  # its error already says to write the section
    return [
        f
        for f in found
        if (f.wrong_type or f.at_key or f.path not in mistyped) and not (f.missing and f.path in headerless)
    ]


def _rule_for(schema: Schema, error: Error | ValidationError) -> str | None:
    """The `x-trainspec-rule` that names the failing constraint, if any.

    An annotation covers the subschema it sits on and its items, except that
    node's own shape checks (unknown keys, wrong types), which keep their
    generic ids; it stops at a child property (a type error in `vlm.max_text_len` is not about the `vlm`
    table), except on a conditional's `then`/`else`, which constrains the
    properties below it (`if MoE then moe_top_k >= 1`).
    """
    node: Any = schema.inlined
    found, sticky, previous = None, False, None
    parts = list(error.absolute_schema_path)
    for n, part in enumerate(parts):
        if isinstance(node, dict) and "$ref" in node and part not in node:
            node = schema.deref(node)
        if isinstance(node, dict) and RULE_ANNOTATION in node:
            own_shape_check = n == len(parts) - 1 and part in _SHAPE_KEYWORDS
            if not own_shape_check:
                found, sticky = node[RULE_ANNOTATION], previous in ("then", "else")
        if previous == "properties" and not sticky:
            found = None
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            break
        previous = part
    return found


def _explain(schema: Schema, error: Error | ValidationError, data: Any) -> Iterator[Finding]:
    path: Path = tuple(error.absolute_path)
    where = format_path(path)
    keyword = str(error.validator)
    rule = (
        _rule_for(schema, error)
        or _KEYWORD_RULES.get(keyword)
        or (OUT_OF_RANGE.id if keyword in _BOUNDS or keyword.startswith(("min", "max")) else INVALID_VALUE.id)
    )
    value = error.instance

    if keyword in ("additionalProperties", "unevaluatedProperties"):
        node = schema.node_at(path, data) or {}
        allowed = schema.properties(node, value)
        unknown = [key for key in value if key not in allowed]
        for section, keys in _headerless(schema, path, unknown, value):
            # about the missing section (rules reading it are skipped: its values are all elsewhere),
            # placed at its first key
            message = _without_header(path, section, keys)
            yield Finding((*path, section), rule, message, at_key=True, anchor=(*path, keys[0]), headerless=True)
            unknown = [key for key in unknown if key not in keys]
        for key in unknown:
            message, target = _unknown_key(schema, path, key, sorted(allowed), value, node)
            yield Finding((*path, key), rule, message, at_key=True, suggestion=Move(target) if target else None)
        return
    condition = _condition(schema, error)
    said = _describe_condition(*condition) if condition else ""
    because = f" when {said}" if said else ""
    if keyword == "required":
        trigger = [*condition[0].get("required", ())][:1] if condition else []
        for key in error.validator_value:
            if isinstance(value, dict) and key not in value:
                yield Finding(
                    (*path, key),
                    rule,
                    f"`{format_path((*path, key))}` is required{because} but missing",
                    at_key=True,
                    anchor=(*path, trigger[0]) if trigger else None,
                    missing=True,
                )
        return
    if keyword in ("oneOf", "anyOf"):
        yield from _explain_union(schema, error, data, rule)
        return
    if keyword == "type":
        expected = error.validator_value if isinstance(error.validator_value, list) else [error.validator_value]
        wanted = _type_names(expected)
        hint = ""
        if isinstance(value, str) and value.lower() in ("yes", "no", "on", "off") and "boolean" in expected:
            hint = "; write true or false"
        number = _quoted_number(value, expected)
        yield Finding(
            path,
            rule,
            f"`{where}` must be {wanted}, got {_described(value)}{hint}",
            at_key=False,
            wrong_type=True,
            suggestion=None if number is None else SetValue(path, number),
        )
        return
    if keyword == "enum":
        options = listed([show(v) for v in error.validator_value])
        close = closest(str(value), [str(v) for v in error.validator_value])
        meant = next((v for v in error.validator_value if str(v) == close), None) if close else None
        hint = f"; did you mean {show(close)}?" if close else ""
        yield Finding(
            path,
            rule,
            f"`{where}` = {show(value)} is not one of {options}{hint}",
            at_key=False,
            suggestion=None if meant is None else SetValue(path, meant),
        )
        return
    if keyword == "const":
        yield Finding(
            path,
            rule,
            f"`{where}` = {show(value)} is not allowed; the only accepted value is {show(error.validator_value)}",
            at_key=False,
            suggestion=SetValue(path, error.validator_value),
        )
        return
    if keyword in _BOUNDS:
        why = f" (this applies{because})" if because else ""
        nearest = _nearest_in_bound(keyword, error.validator_value, value)
        yield Finding(
            path,
            rule,
            f"`{where}` = {show(value)} must be {_BOUNDS[keyword]} {show(error.validator_value)}{why}",
            at_key=False,
            suggestion=None if nearest is None else SetValue(path, nearest),
        )
        return
    if keyword == "pattern":
        yield Finding(
            path, rule, f"`{where}` = {show(value)} {pattern_words(error.validator_value, value)}", at_key=False
        )
        return
    if keyword in ("minItems", "maxItems"):
        n = error.validator_value
        bound = "at least" if keyword == "minItems" else "at most"
        yield Finding(
            path, rule, f"`{where}` must have {bound} {n} item{'s' if n != 1 else ''}, got {len(value)}", at_key=False
        )
        return
    if keyword == "contains":
        wanted_item = error.validator_value.get("const") if isinstance(error.validator_value, dict) else None
        what = show(wanted_item) if wanted_item is not None else "an item matching the schema"
        yield Finding(path, rule, f"`{where}` must contain {what}, got {show(value)}", at_key=False)
        return
    if keyword == "uniqueItems":
        yield Finding(path, rule, f"`{where}` must not repeat items, got {show(value)}", at_key=False)
        return
    if keyword == "not":
        forbidden = error.validator_value
        what = "null" if forbidden == {"type": "null"} else "this value"
        yield Finding(path, rule, f"`{where}` must not be {what}{because}", at_key=False)
        return
    if keyword == "minLength":
        yield Finding(path, rule, f"`{where}` must not be empty", at_key=False)
        return
    assert not isinstance(error, Error), "the compiled validator's errors are of the keywords above"
    yield Finding(path, rule, f"`{where}`: {error.message}", at_key=False)


def _quoted_number(value: Any, expected: list[str]) -> int | float | None:
    """The number a string holds (`"4"`), where the field wants a number; else None."""
    if not isinstance(value, str) or not {"integer", "number"} & set(expected):
        return None
    try:
        return int(value.strip())
    except ValueError:
        pass
    if "number" not in expected:
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _nearest_in_bound(keyword: str, bound: Any, value: Any) -> int | float | None:
    """The allowed value nearest to `value` beyond a bound it breaks: the bound itself, or the next integer past
    an exclusive one (none for a fractional value past an exclusive bound: there is no nearest)."""
    if keyword in ("minimum", "maximum"):
        return bound if isinstance(bound, (int, float)) and not isinstance(bound, bool) else None
    if isinstance(value, int) and not isinstance(value, bool) and isinstance(bound, int):
        return bound + 1 if keyword == "exclusiveMinimum" else bound - 1
    return None


def _condition(schema: Schema, error: Error | ValidationError) -> tuple[Node, Path] | None:
    """For an error inside an if/then: the `if` schema and the path of the object it tests."""
    parts = list(error.absolute_schema_path)
    if "then" not in parts:
        return None
    at = len(parts) - 1 - parts[::-1].index("then")
    node: Any = schema.inlined
    for part in parts[:at]:
        if isinstance(node, dict) and "$ref" in node and part not in node:
            node = schema.deref(node)
        node = node[part]
    steps, after = 0, iter(parts[at + 1 :])
    for part in after:  # instance steps taken below the `then`
        if part == "properties":
            steps += 1
            next(after, None)
        elif part in ("items", "additionalProperties"):
            steps += 1
    path = tuple(error.absolute_path)
    condition = node.get("if") if isinstance(node, dict) else None
    return (condition, path[: len(path) - steps]) if isinstance(condition, dict) else None


def _describe_condition(condition: Node, path: Path) -> str:
    """`model.num_experts >= 1`, `deployment.mode = "disaggregated"`: what an `if` tests, in words.

    Empty when it tests nothing this can word; callers then name no condition rather than an empty one.
    """
    said = []
    props = condition.get("properties", {})
    for name, spec in props.items():
        where = f"`{format_path((*path, name))}`"
        if "const" in spec:
            said.append(f"{where} = {show(spec['const'])}")
        elif "enum" in spec:
            said.append(f"{where} is one of {', '.join(show(v) for v in spec['enum'])}")
        elif any(b in spec for b in _BOUNDS):
            said.append(" and ".join(f"{where} {_BOUNDS[b]} {show(spec[b])}" for b in _BOUNDS if b in spec))
        elif "minItems" in spec:
            said.append(f"{where} has at least {spec['minItems']} item(s)")
        elif spec.get("minLength") == 1:
            said.append(f"{where} is not empty")
        elif "type" in spec:
            said.append(f"{where} is {_type_names(spec['type'])}")
        elif name in condition.get("required", ()):
            said.append(f"{where} is set")
    said += [f"`{format_path((*path, r))}` is set" for r in condition.get("required", ()) if r not in props]
    return " and ".join(said)


def _explain_union(schema: Schema, error: Error | ValidationError, data: Any, rule: str) -> Iterator[Finding]:
    path: Path = tuple(error.absolute_path)
    node = schema.deref(error.schema) if isinstance(error.schema, dict) else {}
    disc = node.get("discriminator")
    if disc and isinstance(error.instance, dict):
        prop = disc["propertyName"]
        members = [schema.deref(m) for m in node[str(error.validator)]]
        chosen = schema.union_members(node, str(error.validator), error.instance)
        if not chosen:
            yield _no_variant(schema, members, (*path, prop), error.instance.get(prop, _ABSENT), disc)
            yield from _every_variant_agrees(schema, error, data, len(members), (*path, prop))
            return
        index = members.index(chosen[0])
        for sub in error.context or ():
            if sub.relative_schema_path and sub.relative_schema_path[0] == index:
                yield from _explain(schema, sub, data)
        return
    # Without a discriminator: explain the branch that came closest, with every problem it has
    # (a section that may be null has all its errors in the object branch).
    context = list(error.context or ())
    if rule not in (INVALID_VALUE.id,) or not context:
        messages = "; ".join(
            sorted({f.message.split(": ", 1)[-1] for sub in context for f in _explain(schema, sub, data)})
        )
        where = format_path(path)
        described = _union_summary(schema, node, error.instance)
        yield Finding(
            path, rule, f"`{where}` = {show(error.instance)} is not valid: {described or messages}", at_key=False
        )
        return
    choices = _choices(schema, node, str(error.validator), path, context)
    if choices is not None:
        yield Finding(
            path, NOT_ALLOWED_VALUE.id, f"`{format_path(path)}` = {show(error.instance)} {choices}", at_key=False
        )
        return
    best = _branch_of(max(context, key=lambda e: len(e.absolute_path)))
    for sub in context:
        if _branch_of(sub) == best:
            yield from _explain(schema, sub, data)


def _choices(
    schema: Schema, node: Node, keyword: str, path: Path, context: list[Error | ValidationError]
) -> str | None:
    """`is not one of "auto", true or false` for a union of listed values and plain types (Axolotl's
    `bf16: true | false | "auto"`) that a value fails in every branch at the value itself; naming one branch
    alone ("is not one of "auto"") would hide the others. None for any other union."""
    branches = [schema.deref(b) for b in node.get(keyword, ())]
    plain = all(
        isinstance(b, dict) and set(b) - {"description", "title"} in ({"enum"}, {"const"}, {"type"}) for b in branches
    )
    if not plain or not any("type" not in b for b in branches) or any(tuple(e.absolute_path) != path for e in context):
        return None
    listed_values = [show(v) for b in branches for v in b.get("enum", [b["const"]] if "const" in b else [])]
    types = [t for b in branches for t in ([b["type"]] if isinstance(b.get("type"), str) else b.get("type", []))]
    if "boolean" in types:
        listed_values += [show(True), show(False)]
    others = [_TYPE_NAMES.get(t, t) for t in types if t not in ("boolean", "null")]
    return "is not one of " + listed([*listed_values, *others])


def _branch_of(error: Error | ValidationError) -> Any:
    """The union branch an error of its context came from (None for a `false` branch: jsonschema
    records no path for it)."""
    return error.relative_schema_path[0] if error.relative_schema_path else None


_ABSENT = object()


def _no_variant(schema: Schema, members: list[Node], at: Path, value: Any, disc: Node) -> Finding:
    """The discriminator at `at` selects no variant: it has the wrong type, or names none of them."""
    specs = [m.get("properties", {}).get(at[-1], {}) for m in members]
    names = ", ".join(show(s["const"]) for s in specs if s.get("const") is not None)
    types = sorted({t for s in specs for t in schema.types(s)})
    if types and value is not _ABSENT and not any(is_type(value, t) for t in types):
        message = f"`{format_path(at)}` must be {_type_names(types)} (one of {names}), got {_described(value)}"
        return Finding(at, WRONG_TYPE.id, message, at_key=False, wrong_type=True)
    shown = show(None if value is _ABSENT else value)
    message = f"`{format_path(at)}` = {shown} is not one of {names}"
    return Finding(at, disc.get(RULE_ANNOTATION, NOT_ALLOWED_VALUE.id), message, at_key=False)


def _every_variant_agrees(
    schema: Schema, error: Error | ValidationError, data: Any, variants: int, tag: Path
) -> list[Finding]:
    """With no variant selected, the problems every variant finds besides its tag (a key they all
    have, of the wrong type): the rest of the section is still checked, and no rule is handed
    a value that no variant accepts."""
    found: list[dict[tuple[Path, str, str], Finding]] = [{} for _ in range(variants)]
    for sub in error.context or ():
        for f in _explain(schema, sub, data):
            if f.path != tag:
                found[int(sub.relative_schema_path[0])][(f.path, f.rule, f.message)] = f
    return [f for key, f in found[0].items() if all(key in other for other in found[1:])]


def _union_summary(schema: Schema, node: Node, value: Any) -> str:
    """A one-line description of what a small union accepts (e.g. `-1` or `>= 1`)."""
    parts = []
    for key in ("oneOf", "anyOf"):
        for member in node.get(key, ()):
            member = schema.deref(member)
            if "const" in member:
                note = f" ({member['description']})" if "description" in member else ""
                parts.append(show(member["const"]) + note)
            elif any(b in member for b in _BOUNDS):
                parts.append(" and ".join(f"{_BOUNDS[b]} {show(member[b])}" for b in _BOUNDS if b in member))
            elif "required" in member:
                parts.append("a non-empty " + " or ".join(f"`{r}`" for r in member["required"]))
            elif "properties" in member:
                fields = [f"`{k}` set" for k in member["properties"]]
                parts.append(" and ".join(fields))
            else:
                return ""
    return "must be " + " or ".join(parts) if parts else ""


def _headerless(schema: Schema, path: Path, unknown: list[str], value: Any) -> Iterator[tuple[str, list[str]]]:
    """Sections whose keys are written (two or more of them) in the table above, without their header.

    A key that could belong to several such sections goes with the one that gathers the most keys.
    """
    known = set(schema.paths)
    sections = _sections(schema, path, value)
    homes = {key: {s for s in sections if (*path, s, key) in known} for key in unknown}
    while True:
        counts: dict[str, int] = {}
        for candidates in homes.values():
            for s in candidates:
                counts[s] = counts.get(s, 0) + 1
        best = max(counts, key=lambda s: counts[s], default=None)
        if best is None or counts[best] < 2:
            return
        keys = [k for k in unknown if best in homes.get(k, ())]
        yield best, keys
        for k in keys:
            homes.pop(k)


def _sections(schema: Schema, path: Path, value: Any) -> list[str]:
    """The sections (keys with keys of their own) the schema allows at `path` and the config does not write."""
    n = len(path)
    names = {p[n] for p in schema.paths if len(p) > n + 1 and p[:n] == path and isinstance(p[n + 1], str)}
    return sorted(name for name in names if isinstance(name, str) and name not in value)


def _without_header(path: Path, section: str, keys: list[str]) -> str:
    """One error for the keys of `section` written without its header."""
    where = f"directly in `{format_path(path)}`" if path else "at the top level"
    header = format_path((*path, section))
    named = listed([f"`{k}`" for k in keys])
    return (
        f"{len(keys)} keys of the `{header}` section ({named}) are written {where}, without the section's "
        f"header; add the header on the line before `{keys[0]}` (`[{header}]` in TOML; in YAML, "
        f"`{section}:` with these keys indented under it)"
    )


SCHEMA_KEY_HINT = (
    "the loader refuses it like any key it does not know; name the schema in a comment instead "
    "(`# yaml-language-server: $schema=PATH` in YAML, `#:schema PATH` in TOML), or for JSON in editor settings "
    "(`trainspec editor init`)"
)
"""Editors honour a `$schema` key, but the trainers' loaders refuse it (docs/versions.md)."""


def _unknown_key(
    schema: Schema, path: Path, key: str, allowed: list[str], value: Any, node: Node
) -> tuple[str, Path | None]:
    """The message about an unknown key, and the path it names as the key's place (if it names one)."""
    where = format_path(path) if path else "the top level"
    close = closest(key, allowed)
    here = (*path, key)
    elsewhere = [p for p in schema.paths_ending_in(key) if not any(isinstance(step, int) for step in p)]
    exact = [p for p in elsewhere if p != here]
    target: Path | None = None
    if key == "$schema" and not path:
        hint = SCHEMA_KEY_HINT
    elif len(exact) == 1:
        target = exact[0]
        hint = (
            f"it belongs at the top level (`{format_path(target)}`), not in {where}"
            if len(target) == 1
            else f"did you mean `{format_path(target)}`?"
        )
    elif close:
        target = (*path, close)
        hint = f"did you mean `{close}`?"
    elif here in elsewhere:
        hint = "that key belongs to another variant; " + _valid_keys(schema, path, allowed, "valid keys here: ")
    elif len(elsewhere) == 1:
        target = elsewhere[0]
        hint = f"did you mean `{format_path(target)}`?"
    elif elsewhere:
        hint = "it belongs in " + ", ".join(f"`{format_path(p)}`" for p in elsewhere[:3])
    else:
        patterns = list(node.get("patternProperties", ())) if isinstance(node, dict) else []
        if allowed:
            hint = _valid_keys(schema, path, allowed, "valid keys: ")
        elif patterns:
            hint = "its keys are " + " or ".join(_KEY_PATTERNS.get(p, f"text matching {p}") for p in patterns)
        else:
            hint = "this table takes no keys"
    variant = ""
    found = schema.discriminated(node, value)
    if found:
        prop, _branch = found
        variant = f" (for {prop} = {show(value.get(prop, _default_disc(schema, node, prop)))})"
    return f"unknown key `{key}` in {where}{variant}; {hint}", target


def _valid_keys(schema: Schema, path: Path, allowed: list[str], lead: str) -> str:
    """`lead` and the keys a table takes when they are few; else how many, none of them close, and the
    reference page that lists them (for trainspec's own families)."""
    if len(allowed) <= MOST_LISTED:
        return lead + ", ".join(allowed)
    where = f"`{format_path(path)}`" if path else "the top level"
    family = schema.id.removeprefix(_TRAINSPEC_SCHEMA).split("@")[0] if schema.id.startswith(_TRAINSPEC_SCHEMA) else ""
    page = f"; docs/reference/{family}.md#{path[0]} lists them" if family and path and isinstance(path[0], str) else ""
    return f"none of the {len(allowed)} keys of {where} is close{page}"


_TRAINSPEC_SCHEMA = "urn:trainspec:schema:"


def _default_disc(schema: Schema, node: Node, prop: str) -> Any:
    for sub in schema.branches(node, {}):
        spec = sub.get("properties", {}).get(prop)
        if spec and "default" in spec:
            return spec["default"]
    return None


_SPACE = r"\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
"""The characters Python's `str.strip()` removes, as the schemas' patterns write them (pydantic's own
checks of SpecForge's identifiers and paths strip with it)."""

_PATTERNS = {
    f"^[^{_SPACE}]+$": "non-empty, with no whitespace anywhere",
    f"^[^{_SPACE}]([\\s\\S]*[^{_SPACE}])?$": "non-empty, with no whitespace at either end",
    f"^[^{_SPACE},]([^,]*[^{_SPACE},])?$": "non-empty, with no comma and no whitespace at either end",
}
"""The patterns the built-in schemas use, in words: a regular expression is no message for a person."""


_KEY_PATTERNS = {
    r"^\s*[+-]?[0-9](_?[0-9])*(\.0*)?\s*$": "integers",
    "^(cpu|disk)$": "cpu or disk",
}
"""The key patterns of the built-in schemas (`patternProperties`), in words."""


def pattern_words(pattern: str, value: Any) -> str:
    """What is wrong with a text `value` that does not match `pattern`, in words where the pattern is a known
    one ("must not be empty"), else the pattern itself."""
    said = _PATTERNS.get(pattern)
    if said is None or not isinstance(value, str):
        return f"does not match the pattern {pattern}"
    if value == "":
        problem = "must not be empty"
    elif "," in value and "comma" in said:
        problem = "must not contain a comma"
    elif value != value.strip():
        problem = "must not start or end with whitespace"
    elif value.strip() == "":
        problem = "must not be only whitespace"
    else:
        problem = "must not contain whitespace"
    return f"{problem} (it must be {said})"
