"""The JSON Schema validator of record (jsonschema, Draft 2020-12), and a walk of a document that goes
only where the compiled validator found something.

The validator is built once per schema and reused. Integers are strict (a
float such as 2.0 is not an integer, a boolean is not a number), matching
the generated models. A `pattern`'s `$` is the end of the text, as in JSON
Schema's regex dialect (ECMA-262) and in the models' Rust regex engine, which matches every pattern
here too (`search`): in linear time, where Python's `re` can backtrack for minutes.
jsonschema is imported when a document first needs explaining.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple

from trainspec.spec.paths import Path
from trainspec.spec.schema import Schema

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError
    from referencing import Resource


def _is_integer(checker: Any, value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@lru_cache(maxsize=1024)
def matcher(pattern: str) -> Any:
    """`pattern` compiled by jsonschema-rs, whose regex engine (Rust's `regex`) runs in time linear in the
    text: Python's `re` backtracks, and takes minutes on `\\d+x` against a long string of digits, or on
    `(a+)+$`. (A pattern with look-around or back-references falls back to a backtracking engine there;
    an overlay may not add one, `overlay.vet`.)"""
    import jsonschema_rs

    return jsonschema_rs.validator_for({"pattern": pattern}).is_valid


def search(pattern: str, text: str) -> bool:
    """Whether `pattern` (ECMA-262, as JSON Schema reads it) matches somewhere in `text`, in linear time."""
    return bool(matcher(pattern)(text))


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and not search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: dict[str, Any], instance: Any, schema: Any
) -> Iterator[ValidationError]:
    """`patternProperties`, matched by `search`."""
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator: Any, extra: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    """`additionalProperties` beside `patternProperties`, matched by `search` (without it, jsonschema's own)."""
    from jsonschema.exceptions import ValidationError

    patterns = schema.get("patternProperties")
    if not patterns or not validator.is_type(instance, "object"):
        yield from _KEYWORDS["additionalProperties"](validator, extra, instance, schema)
        return
    known = schema.get("properties", {})
    extras = [k for k in instance if k not in known and not any(search(p, k) for p in patterns)]
    if validator.is_type(extra, "object"):
        for key in extras:
            yield from validator.descend(instance[key], extra, path=key)
    elif not extra and extras:
        joined = ", ".join(repr(each) for each in sorted(extras))
        verb = "does" if len(extras) == 1 else "do"
        yield ValidationError(f"{joined} {verb} not match any of the regexes: {', '.join(map(repr, sorted(patterns)))}")


class Where(NamedTuple):
    """Where a document may be invalid, by the compiled validator (`fast_validation`): its error paths,
    and the values it could not judge."""

    errors: list[Path]
    unjudged: list[Path]


class _Look(NamedTuple):
    """Where a walk goes: (id(object), key) of each step to an error or an unjudged value, and the
    id of each object holding an unjudged value (its `if` may hold otherwise than the compiled
    validator found)."""

    steps: frozenset[tuple[int, str | int]]
    unjudged_in: frozenset[int]


_LOOK: ContextVar[_Look | None] = ContextVar("trainspec_look", default=None)
"""None: look everywhere."""


@contextmanager
def _looking(look: _Look | None) -> Iterator[None]:
    """Walks started (and run to the end) inside go where `look` says."""
    token = _LOOK.set(look)
    try:
        yield
    finally:
        _LOOK.reset(token)


def _properties(validator: Any, properties: dict[str, Any], instance: Any, schema: Any) -> Iterator[ValidationError]:
    """`properties`, walking only the keys on the way to a known error (when those are known)."""
    look = _LOOK.get()
    if look is not None and isinstance(instance, dict):
        key = id(instance)
        properties = {name: spec for name, spec in properties.items() if (key, name) in look.steps}
    yield from _KEYWORDS["properties"](validator, properties, instance, schema)


def _everywhere(keyword: str) -> Any:
    """A keyword that tests subschemas for validity (`anyOf`...): a branch that fails only in a part
    the compiled validator found clean must still fail, so nothing is skipped below it."""

    def run(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
        with _looking(None):
            errors = list(_KEYWORDS[keyword](validator, value, instance, schema))
        yield from errors

    return run


def _if(validator: Any, condition: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    """`if`, tested everywhere; its `then`/`else` report errors, so they skip what is clean, unless the
    condition read a value the compiled validator could not judge (it may have taken the other branch)."""
    look = _LOOK.get()
    with _looking(None):
        holds = validator.evolve(schema=condition).is_valid(instance)
    branch = "then" if holds else "else"
    if branch not in schema:
        return
    whole = look is not None and id(instance) in look.unjudged_in
    with _looking(None if whole else look):
        errors = list(validator.descend(instance, schema[branch], schema_path=branch))
    yield from errors


_KEYWORDS: dict[str, Any] = {}


@cache
def strict_validator() -> Any:
    """Draft 2020-12 with strict integers and `$` as the end of the text, able to skip the parts of a
    document known to be clean; jsonschema is imported here, when a document first needs
    explaining, so a check the compiled validator confirms never pays for it."""
    from jsonschema import Draft202012Validator, validators

    _KEYWORDS.update(Draft202012Validator.VALIDATORS)
    return validators.extend(
        Draft202012Validator,
        validators={
            "pattern": _pattern,
            "patternProperties": _pattern_properties,
            "additionalProperties": _additional_properties,
            "properties": _properties,
            "if": _if,
            **{keyword: _everywhere(keyword) for keyword in ("anyOf", "oneOf", "not", "contains")},
        },
        type_checker=Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_integer),
    )


def _refuse(uri: str) -> Resource[Any]:
    from referencing.exceptions import NoSuchResource

    raise NoSuchResource(uri)


def build_validator(schema: Schema, check: bool = True) -> Any:
    """A validator for `schema` that never looks anything up outside it.

    With `check`, the schema is first validated against the Draft 2020-12
    meta-schema (jsonschema's SchemaError says what is wrong).
    """
    from referencing import Registry, Resource

    strict = strict_validator()
    if check:
        strict.check_schema(schema.root)
    registry: Registry[Any] = Registry(retrieve=_refuse)  # type: ignore[call-arg]
    if schema.id:
        registry = registry.with_resource(schema.id, Resource.from_contents(schema.inlined))
    return strict(schema.inlined, registry=registry)


def errors_along(validator: Any, data: Any, where: Where) -> list[ValidationError] | None:
    """The validator's errors, walking only the way `where` shows; None when that cannot be trusted (a step
    is not in `data`, or the compiled validator's errors are not found)."""
    steps: set[tuple[int, str | int]] = set()
    unjudged_in: set[int] = set()
    for path, unjudged in [*((p, False) for p in where.errors), *((p, True) for p in where.unjudged)]:
        node = data
        for part in path:
            steps.add((id(node), part))
            if unjudged:
                unjudged_in.add(id(node))
            try:
                node = node[part]
            except (KeyError, IndexError, TypeError):
                return None
    with _looking(_Look(frozenset(steps), frozenset(unjudged_in))):
        errors = list(validator.iter_errors(data))
    return None if where.errors and not errors else errors
