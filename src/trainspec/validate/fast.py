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

import datetime
import itertools
import weakref
from typing import Any, NamedTuple

from trainspec.spec.paths import Path
from trainspec.spec.schema import Schema
from trainspec.spec.schema_walk import Where, matcher

RULE_ANNOTATION_KEY = "x-trainspec-rule"
_STRICT_INTEGER = "trainspec-strict-integer"
_PATTERN = "trainspec-pattern"

_SUBSCHEMA = frozenset({"items", "additionalProperties", "not", "if", "then", "else", "contains"})
_SUBSCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf"})
_SUBSCHEMA_MAPS = frozenset({"properties", "$defs", "patternProperties"})
"""(`patternProperties`: jsonschema-rs reads `^`, `$`, `\\s` and classes as `schema_walk.search` does; the
tests/test_fast_validator.py holds the two to the same verdicts on every family's schema.)"""
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
    """`pattern` as the validator of record reads it (`schema_walk.search`: linear time, `$` the end of the text)."""

    def __init__(self, parent_schema: dict[str, Any], value: str, schema_path: list[str | int]) -> None:
        self.search = matcher(value)

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
    where both are; for a union (`anyOf`, `oneOf`), the node holding it and its branches' errors, each
    with its path from the union (the branch first)."""

    validator: str
    validator_value: Any
    instance: Any
    absolute_path: Path
    absolute_schema_path: tuple[str | int, ...]
    relative_schema_path: tuple[str | int, ...] = ()
    schema: Any = None
    context: tuple[Error, ...] = ()


_AS_WRITTEN = {_STRICT_INTEGER: "type", _PATTERN: "pattern"}
_REPORTED_ALIKE = (_CHECKED - {"maxLength", "$ref", "$id", "$schema"}) | {"additionalProperties"}
"""Keywords whose failure both validators report once per failing place, each explained in its own words
(the shared keywords that can fail, but `maxLength`, which is left to python-jsonschema, and `additionalProperties`)."""
_APPLY_HERE = (
    *("allOf", "anyOf", "oneOf", "not", "if", "then", "else"),
    *("contains", "$ref", "enum", "const", "uniqueItems"),
)
"""Keywords of a node whose verdict may read a value below it otherwise than by descending to it."""
_ANNOTATION_KEYS = frozenset(
    {
        "$id",
        "$schema",
        "$defs",
        RULE_ANNOTATION_KEY,
        "title",
        "description",
        "markdownDescription",
        "default",
        "examples",
        "$comment",
        "deprecated",
        "defaultSnippets",
        "x-taplo",
        "x-intellij-html-description",
    }
)
"""Keywords that say nothing of a value: documentation, editor hints, definitions."""
_BLIND = _ANNOTATION_KEYS | frozenset(
    {
        "type",
        "required",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "pattern",
    }
)
"""Keywords that judge only the value they sit on, never a value below it: a stand-in below them fails none."""


def _date_errors(node: Any, value: Any, path: Path, where: list[str | int]) -> list[Error] | None:
    """python-jsonschema's errors of a date or time under `node` (none for a non-finite float: the check
    reports it where it is, and drops schema findings there); None for any other value, or a node that
    judges it otherwise than by its own `type`, `enum` and `const`."""
    if isinstance(value, float) or node is True:
        return []
    if not isinstance(value, (datetime.date, datetime.time)) or not isinstance(node, dict):
        return None
    if any(not _blind({k: node[k]}, ()) for k in _APPLY_HERE if k in node and k not in ("enum", "const")):
        return None
    # a date is of no JSON type and equal to no JSON value; every other keyword skips it
    return [Error(k, v, value, path, (*where, k)) for k, v in node.items() if k in ("type", "enum", "const")]


def _blind(node: Any, rest: Path) -> bool:
    """Whether `node`, applied to an object, cannot judge the value at `rest` below it (for `rest` empty:
    cannot judge the value at all) otherwise than its walk to it finds: it names it only on the way there."""
    if isinstance(node, bool):
        return True
    if not isinstance(node, dict):
        return False
    for keyword, value in node.items():
        if keyword in ("allOf", "anyOf", "oneOf"):
            if not all(_blind(sub, rest) for sub in value):
                return False
        elif keyword in ("not", "if", "then", "else"):
            if not _blind(value, rest):
                return False
        elif keyword == "properties" and rest and not isinstance(rest[0], int):
            if rest[0] in value and not _blind(value[rest[0]], rest[1:]):
                return False
        elif keyword == "additionalProperties" and rest and not isinstance(rest[0], int):
            if rest[0] not in node.get("properties", {}) and not _blind(value, rest[1:]):
                return False
        elif keyword == "items" and rest and isinstance(rest[0], int):
            if not _blind(value, rest[1:]):
                return False
        elif keyword in ("properties", "additionalProperties", "items") and rest:
            continue  # applies to an instance of another type, or to another key
        elif keyword in _BLIND and (rest or keyword in _ANNOTATION_KEYS):
            continue
        else:
            return False
    return True


_ELSEWHERE = frozenset({"anyOf", "oneOf", "not", "contains", "$ref"})
"""Keywords below which python-jsonschema reports otherwise (a union's branches as the context of one error,
a condition's in the words of its `if`): an error under one is explained by python-jsonschema, except
a union's own, rebuilt from its branches' errors (`FastValidator._alike`)."""
_UNIONS = frozenset({"anyOf", "oneOf"})
_NO_PATHS: frozenset[Path] = frozenset()


def _at(data: Any, path: Path) -> Any:
    for part in path:
        data = data[part]
    return data


class FastValidator:
    """jsonschema-rs on the rewritten schema; it finds where plain data is invalid."""

    def __init__(self, schema: Schema) -> None:
        import jsonschema_rs

        self._schema = schema
        self._last: tuple[Any, list[Any]] | None = None
        self._validator = jsonschema_rs.Draft202012Validator(
            _rewrite(schema.inlined),
            validate_formats=False,
            keywords={_STRICT_INTEGER: _StrictInteger, _PATTERN: _Pattern},
        )

    def errors_alike(self, data: Any, most: int, standing_in: set[Path] | None = None) -> list[Error] | None:
        """The errors of plain, invalid `data`, as python-jsonschema reports them, when each is one both
        validators report alike (a plain keyword's failure, outside any union, negation, conditional or
        recursive reference) and there are at most `most`; else None."""
        last = self._last
        if last is not None and last[0] is data:
            found = last[1][: most + 1]
        else:
            try:
                found = list(itertools.islice(self._validator.iter_errors(data), most + 1))
            except Exception:  # text the compiled validator cannot take (a lone surrogate)
                return None
        if standing_in:
            found = [e for e in found if tuple(e.instance_path) not in standing_in]
        elif not found:
            return None
        if len(found) > most:
            return None
        budget = [most]
        out = []
        for error in found:
            alike = self._alike(error, data, 0, budget, standing_in or _NO_PATHS)
            if alike is None:
                return None
            out.append(alike)
        return out

    def _alike(
        self, error: Any, data: Any, branch: int, budget: list[int], standing_in: set[Path] | frozenset[Path]
    ) -> Error | None:
        """`error` as python-jsonschema reports it, or None. `branch`: where in its schema path the index of
        the union branch holding it lies (0: in no union); `budget`: how many more errors may be rebuilt.
        A union's error takes its branches' errors as its context, as python-jsonschema's does (not over
        a value standing in for another, `standing_in`: its branches' errors would show the stand-in)."""
        budget[0] -= 1
        where = tuple(error.schema_path)
        keyword = _AS_WRITTEN.get(str(where[-1]), where[-1])
        path = tuple(error.instance_path)
        union = keyword in _UNIONS and not any(p[: len(path)] == path for p in standing_in)
        if budget[0] < 0 or not (union or keyword in _REPORTED_ALIKE) or not _ELSEWHERE.isdisjoint(where[branch:-1]):
            return None
        node: Any = self._schema.inlined
        for part in where[:-1]:
            node = node[part]
        relative = (*where[branch:-1], keyword)
        if not union:
            return Error(keyword, node[keyword], error.instance, path, (*where[:-1], keyword), relative)
        import jsonschema_rs

        context: list[Error] = []
        if not isinstance(error.kind, jsonschema_rs.ValidationErrorKind.OneOfMultipleValid):
            for index, errors in enumerate(error.kind.context):
                for sub in errors:
                    if tuple(sub.schema_path[: len(where) + 1]) != (*where, index):
                        return None
                    alike = self._alike(sub, data, len(where), budget, standing_in)
                    if alike is None:
                        return None
                    context.append(alike)
        return Error(keyword, node[keyword], _at(data, path), path, where, relative, node, tuple(context))

    def unjudged_alike(self, data: Any, unjudged: list[Path]) -> list[Error] | None:
        """python-jsonschema's errors at values the compiled validator cannot judge, when each is a date or
        time (a value of no JSON type) or a non-finite float (the check reports it at its place, where
        schema findings are dropped), and no other keyword's verdict reads it (`_blind`): then the
        stand-in changed no verdict but its own. Else None."""
        out: list[Error] = []
        for path in unjudged:
            node: Any = self._schema.inlined
            where: list[str | int] = []
            value = data
            for n, part in enumerate(path):
                if node is True:
                    break  # nothing below is judged
                if not isinstance(node, dict):
                    return None
                if any(not _blind({k: node[k]}, path[n:]) for k in _APPLY_HERE if k in node):
                    return None
                if isinstance(part, int):
                    if "items" not in node or "prefixItems" in node:
                        return None
                    node, where = node["items"], [*where, "items"]
                elif part in node.get("properties", {}):
                    node, where = node["properties"][part], [*where, "properties", part]
                elif "additionalProperties" in node:
                    node, where = node["additionalProperties"], [*where, "additionalProperties"]
                else:
                    node = True
                value = value[part]
            else:
                found = _date_errors(node, value, path, where)
                if found is None:
                    return None
                out.extend(found)
        return out

    def error_paths(self, data: Any) -> list[Path] | None:
        """Where plain `data` is invalid ([] when valid); None when unsure."""
        try:
            if self._validator.is_valid(data):
                return []
            errors = list(self._validator.iter_errors(data))
            self._last = (data, errors)
            return [tuple(error.instance_path) for error in errors]
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
