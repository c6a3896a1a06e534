"""A compiled validator that answers fast: is this config valid, and if not, where is it wrong?

Most configs are valid, and python-jsonschema takes far longer to say so than
the file takes to parse. jsonschema-rs answers in microseconds, but it reads a
few things differently, so python-jsonschema stays the validator of record: it
explains every error. The compiled validator only tells it where to look
(`validation.findings(where=...)`): a document it finds valid is not walked at all,
an invalid one only on the way to its errors. Its answer holds when:

- the data is plain JSON (exact dict with text keys, list, text, bool, null, an
  integer within 64 bits, a finite float): a value that is not (a date, NaN) it sees
  as null, and python-jsonschema judges that value where it is, and
- the schema uses only keywords whose meaning the two validators share (a schema with
  another one gets no compiled validator), with two of them rewritten: integers are
  strict (2.0 is not an integer, as in trainspec's validator and the models), and a
  `pattern` is matched by Python's `re` exactly as `validation` does.
"""

from __future__ import annotations

import itertools
import re
import weakref
from typing import Any, NamedTuple

from trainspec.paths import Path
from trainspec.validate.schema import Schema
from trainspec.validate.schema_walk import Where, python_pattern

_STRICT_INTEGER = "trainspec-strict-integer"
_PATTERN = "trainspec-pattern"

_SUBSCHEMA = frozenset({"items", "additionalProperties", "not", "if", "then", "else", "contains"})
_SUBSCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf"})
_SUBSCHEMA_MAPS = frozenset({"properties", "$defs"})
_CHECKED = frozenset(
    {
        "type",
        "enum",
        "const",
        "required",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "uniqueItems",
        "pattern",
        "$ref",
        "$id",
        "$schema",
    }
)
"""Keywords whose meaning both validators share (`tests/test_fast_validator.py` holds them to it)."""
_DRAFT_2020_12 = frozenset(
    {
        "$anchor",
        "$comment",
        "$dynamicAnchor",
        "$dynamicRef",
        "$recursiveAnchor",
        "$recursiveRef",
        "$vocabulary",
        "additionalItems",
        "contentEncoding",
        "contentMediaType",
        "contentSchema",
        "definitions",
        "dependencies",
        "dependentRequired",
        "dependentSchemas",
        "format",
        "maxContains",
        "maxProperties",
        "minContains",
        "minProperties",
        "multipleOf",
        "patternProperties",
        "prefixItems",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
    }
)
"""Draft 2020-12 (and older) keywords not in the shared set: a schema using one gets no compiled validator."""


class _Unsupported(Exception):
    pass


class _StrictInteger:
    """`type: integer` as trainspec reads it: a float is never an integer, even 2.0."""

    def __init__(self, parent_schema: dict[str, Any], value: Any, schema_path: list[str | int]) -> None:
        pass

    def validate(self, instance: Any) -> None:
        if isinstance(instance, float):
            raise ValueError("a float is not an integer")


class _Pattern:
    """`pattern` through Python's `re`, with `$` the end of the text (see `schema_walk.python_pattern`)."""

    def __init__(self, parent_schema: dict[str, Any], value: str, schema_path: list[str | int]) -> None:
        self.search = re.compile(python_pattern(value)).search

    def validate(self, instance: Any) -> None:
        if isinstance(instance, str) and not self.search(instance):
            raise ValueError("does not match the pattern")


def _rewrite(node: Any) -> Any:
    """The schema node as the compiled validator gets it; _Unsupported for a keyword outside the shared set."""
    if isinstance(node, bool):
        return node
    if not isinstance(node, dict):
        raise _Unsupported
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _SUBSCHEMA:
            out[key] = _rewrite(value)
        elif key in _SUBSCHEMA_LISTS:
            out[key] = [_rewrite(v) for v in value]
        elif key in _SUBSCHEMA_MAPS:
            out[key] = {name: _rewrite(v) for name, v in value.items()}
        elif key == "pattern":
            out[_PATTERN] = value
        elif key == "$ref" and not (value == "#" or str(value).startswith("#/$defs/")):
            raise _Unsupported  # its target may lie where nothing was rewritten
        elif key in _DRAFT_2020_12:
            raise _Unsupported
        else:
            out[key] = value  # a shared keyword, or an annotation both ignore
    types = node.get("type")
    types = types if isinstance(types, list) else [types]
    if "integer" in types and "number" not in types:
        out[_STRICT_INTEGER] = True
    return out


_LIMIT = 2**63


def is_plain(data: Any) -> bool:
    """Only JSON values both validators read alike: exact types, finite floats, integers within 64 bits."""
    stack = [data]
    while stack:
        value = stack.pop()
        kind = type(value)
        if kind is dict:
            if not all(type(k) is str for k in value):
                return False
            stack.extend(value.values())
        elif kind is list:
            stack.extend(value)
        elif kind is float:
            if value - value != 0.0:  # NaN or an infinity
                return False
        elif kind is int:
            if not -_LIMIT <= value < _LIMIT:
                return False
        elif kind is not str and kind is not bool and value is not None:
            return False
    return True


def stand_in(data: Any, plain: bool | None = None) -> tuple[Any, list[Path]] | None:
    """`data` with each value the compiled validator cannot judge (NaN, a date, an integer past 64 bits)
    replaced by null, and the paths of those values; mappings and lists of any class made plain;
    None when a key is not text (no stand-in keeps the shape). Plain data (`plain`: already known
    whether it is) comes back as it is."""
    if is_plain(data) if plain is None else plain:
        return data, []
    odd: list[Path] = []

    def judged(value: Any, path: Path) -> Any:
        if isinstance(value, dict):  # a subclass too: python-jsonschema walks into it as an object
            if not all(type(k) is str for k in value):
                raise _Unsupported
            return {k: judged(v, (*path, k)) for k, v in value.items()}
        if isinstance(value, list):
            return [judged(v, (*path, i)) for i, v in enumerate(value)]
        if is_plain(value):
            return value
        odd.append(path)
        return None

    try:
        return judged(data, ()), odd
    except _Unsupported:
        return None


class Error(NamedTuple):
    """An error of the compiled validator in the terms of python-jsonschema's (the attributes `validation`
    explains): the failing keyword as the schema writes it, its value there, the value it failed on, and
    where both are."""

    validator: str
    validator_value: Any
    instance: Any
    absolute_path: Path
    absolute_schema_path: tuple[str | int, ...]


_AS_WRITTEN = {_STRICT_INTEGER: "type", _PATTERN: "pattern"}
_REPORTED_ALIKE = frozenset(
    {
        "type",
        "enum",
        "const",
        "required",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minItems",
        "maxItems",
        "minLength",
        "uniqueItems",
        "pattern",
        "additionalProperties",
    }
)
"""Keywords whose failure both validators report once per failing place, each explained in its own words."""
_ELSEWHERE = frozenset({"anyOf", "oneOf", "not", "contains", "if", "then", "else", "$ref"})
"""Keywords below which python-jsonschema reports otherwise (a union's branches as the context of one error,
a condition's in the words of its `if`): an error under one is explained by python-jsonschema."""


class FastValidator:
    """jsonschema-rs on the rewritten schema; it finds where plain data is invalid."""

    def __init__(self, schema: Schema) -> None:
        import jsonschema_rs

        self._schema = schema
        self._validator = jsonschema_rs.Draft202012Validator(
            _rewrite(schema.inlined),
            validate_formats=False,
            keywords={_STRICT_INTEGER: _StrictInteger, _PATTERN: _Pattern},
        )

    def errors_alike(self, data: Any, most: int) -> list[Error] | None:
        """The errors of plain, invalid `data`, as python-jsonschema reports them, when each is one both
        validators report alike (a plain keyword's failure, outside any union, negation, conditional or
        recursive reference) and there are at most `most`; else None."""
        try:
            found = list(itertools.islice(self._validator.iter_errors(data), most + 1))
        except Exception:  # text the compiled validator cannot take (a lone surrogate)
            return None
        if not found or len(found) > most:
            return None
        out = []
        for error in found:
            where = tuple(error.schema_path)
            keyword = _AS_WRITTEN.get(str(where[-1]), where[-1])
            if keyword not in _REPORTED_ALIKE or not _ELSEWHERE.isdisjoint(where):
                return None
            node: Any = self._schema.inlined
            for part in where[:-1]:
                node = node[part]
            out.append(
                Error(keyword, node[keyword], error.instance, tuple(error.instance_path), (*where[:-1], keyword))
            )
        return out

    def error_paths(self, data: Any) -> list[Path] | None:
        """Where plain `data` is invalid ([] when valid); None when unsure."""
        try:
            if self._validator.is_valid(data):
                return []
            return [tuple(error.instance_path) for error in self._validator.iter_errors(data)]
        except Exception:  # text the compiled validator cannot take (a lone surrogate): unsure
            return None


COMPILE_AFTER = 8
"""Documents a schema sees before its compiled validator is built, when python-jsonschema is built
already: building it takes a few milliseconds, what python-jsonschema spends on about that many
valid configs. Otherwise (a command-line check, `trainspec.load`) the first document builds it,
which is far cheaper than importing python-jsonschema."""

_BUILT: weakref.WeakKeyDictionary[Schema, FastValidator | None] = weakref.WeakKeyDictionary()
_SEEN: weakref.WeakKeyDictionary[Schema, int] = weakref.WeakKeyDictionary()


def fast_validator(schema: Schema) -> FastValidator | None:
    """The compiled validator of `schema`, built once; None when its keywords are not all shared."""
    if schema not in _BUILT:
        try:
            _BUILT[schema] = FastValidator(schema)
        except Exception:  # a keyword outside the shared set, or no compiled validator here: never fast
            _BUILT[schema] = None
    return _BUILT[schema]


def where_invalid(schema: Schema, data: Any, *, first: bool = False, plain: bool | None = None) -> Where | None:
    """Where `data` may break `schema`, by the compiled validator (nowhere: python-jsonschema finds nothing
    either); None when it cannot say.

    None, unasked, for the first `COMPILE_AFTER` documents of a schema, unless `first`: nothing
    has built the python validator yet, and compiling (a few ms) is far cheaper than importing
    jsonschema and building it (about 100 ms), which a valid document then never needs.
    """
    if schema not in _BUILT and not first:
        _SEEN[schema] = seen = _SEEN.get(schema, 0) + 1
        if seen <= COMPILE_AFTER:
            return None
    validator = fast_validator(schema)
    standing = stand_in(data, plain) if validator is not None else None
    if validator is None or standing is None:
        return None
    errors = validator.error_paths(standing[0])
    return None if errors is None else Where(errors, standing[1])
