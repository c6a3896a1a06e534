"""The JSON Schema validator of record (jsonschema, Draft 2020-12), and a walk of a document that goes
only where the compiled validator found something.

The validator is built once per schema and reused. Integers are strict (a
float such as 2.0 is not an integer, a boolean is not a number), matching
the generated models. A `pattern`'s `$` is the end of the text, as in JSON
Schema's regex dialect (ECMA-262) and in the models' Rust regex engine.
jsonschema is imported when a document first needs explaining.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple

from trainspec.paths import Path
from trainspec.validate.schema import Schema

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError
    from referencing import Resource


def _is_integer(checker: Any, value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_DOLLAR_OR_SKIPPED = re.compile(r"\\.|\[(?:\\.|[^\]\\])*\]|\$", re.DOTALL)
"""An escape, a character class (skipped: `$` means itself there) or a `$` anchor."""


@lru_cache(maxsize=256)
def python_pattern(pattern: str) -> str:
    """`pattern` for Python's `re`, with each `$` anchor written `\\Z` (the end of the text).

    Python's `$` also matches before a final newline, so `^[a-z]+$` would take
    "text\\n". No anchor means "end of text" to both Python's `re` (before 3.14)
    and Rust's regex (which has no `\\Z` and no lookaround), so the schemas keep the
    portable `$` and Python reads it here as the other engines do.
    """
    return _DOLLAR_OR_SKIPPED.sub(lambda m: r"\Z" if m[0] == "$" else m[0], pattern)


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and not re.search(python_pattern(pattern), instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


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
