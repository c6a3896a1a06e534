"""A compiled validator that answers fast: is this config valid, and if not, where is it wrong?

Most configs are valid, and python-jsonschema takes far longer to say so than
the file takes to parse. jsonschema-rs answers in microseconds, but it reads a
few things differently, so python-jsonschema stays the validator of record: it
explains every error. The compiled validator only tells it where to look
(`validation.findings(where=...)`): a document it finds valid is not walked at all,
an invalid one only on the way to its errors. Its answer holds when:

- the data is plain JSON (exact dict with text keys, list, text, bool, null, an
  integer within 64 bits, a finite float): a value that is not (a date, NaN) it sees
  as null, and python-jsonschema judges that value where it is, unless a stand-in
  that every keyword able to reach it judges alike takes its place (`inert_stand_in`:
  `true` for a date where no keyword reads a boolean, a float inside every bound
  for NaN), and
- the schema uses only keywords whose meaning the two validators share (a schema with
  another one gets no compiled validator), with two of them rewritten: integers are
  strict (2.0 is not an integer, as in trainspec's validator and the models), and a
  `pattern` is matched by Python's `re` exactly as `validation` does.
"""

from __future__ import annotations

import datetime
import itertools
import math
import weakref
from typing import Any, NamedTuple

from trainspec.spec.paths import Path
from trainspec.spec.schema import Schema, replace_value
from trainspec.spec.schema_walk import Where, matcher, search

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


def _holds_empty_key(data: Any) -> bool:
    """Whether a mapping in `data` has the key "": jsonschema-rs leaves such a key out of the paths of the
    errors below it, so python-jsonschema explains those documents."""
    stack = [data]
    while stack:
        value = stack.pop()
        if type(value) is dict:
            if "" in value:
                return True
            stack.extend(value.values())
        elif type(value) is list:
            stack.extend(value)
    return False


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
_ELSEWHERE = frozenset({"anyOf", "oneOf", "not", "contains", "$ref"})
"""Keywords below which python-jsonschema reports otherwise (a union's branches as the context of one error,
a condition's in the words of its `if`): an error under one is explained by python-jsonschema, except
a union's own, rebuilt from its branches' errors (`FastValidator._alike`)."""
_UNIONS = frozenset({"anyOf", "oneOf"})


def _at(data: Any, path: Path) -> Any:
    for part in path:
        data = data[part]
    return data


_INERT: tuple[Any, ...] = (True, False, None, "", [], {})
"""Stand-ins, tried in turn, for a value the compiled validator cannot judge (`FastValidator.inert_stand_in`)."""
_NO_STAND_IN = object()
_TYPE_OF = {bool: "boolean", type(None): "null", str: "string", list: "array", dict: "object"}
_KEYWORDS_OF = {
    "boolean": frozenset(),
    "null": frozenset(),
    "string": frozenset({"minLength", "maxLength", "pattern"}),
    "array": frozenset({"items", "minItems", "maxItems", "uniqueItems", "contains"}),
    "object": frozenset({"properties", "patternProperties", "additionalProperties", "required"}),
}
"""The shared keywords (`_CHECKED`, `_SUBSCHEMA`...) that judge only a value of one type, by that type."""
_NUMERIC = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
_COMPARES = frozenset({"enum", "const", "uniqueItems"})
"""Keywords that compare a whole value, whatever it holds: a stand-in inside it may change their verdict."""
_SAME_VALUE = ("allOf", "anyOf", "oneOf", "not", "if", "then", "else")
"""Keywords whose subschemas apply to the value their node applies to."""


def _nodes_at(root: Any, path: Path) -> list[dict[str, Any]] | None:
    """Every schema node that may apply to the value at `path` (a condition's branches and a union's all
    included); None past a node this walk does not read (a `$ref` left in the schema), or when a node
    above the value compares the container holding it (`enum`, `const`, `uniqueItems`)."""
    level: list[Any] = [root]
    for part in (*path, None):
        nodes: list[dict[str, Any]] = []
        while level:
            node = level.pop()
            if node is True or node is False:
                continue  # `true` judges nothing; `false` refuses every value alike
            if not isinstance(node, dict) or "$ref" in node:
                return None
            if part is not None and not _COMPARES.isdisjoint(node):
                return None
            nodes.append(node)
            for keyword in _SAME_VALUE:
                if keyword in node:
                    sub = node[keyword]
                    level.extend(sub if isinstance(sub, list) else [sub])
        if part is None:
            return nodes
        for node in nodes:
            if isinstance(part, int):
                level.extend(node[k] for k in ("items", "contains") if k in node)
                continue
            named = node.get("properties", {})
            matched = [sub for pattern, sub in node.get("patternProperties", {}).items() if search(pattern, part)]
            level.extend(matched)
            if part in named:
                level.append(named[part])
            elif not matched and "additionalProperties" in node:
                level.append(node["additionalProperties"])
    return None


def _is_inert(stand_in: Any, value: Any, nodes: list[dict[str, Any]]) -> bool:
    """Whether each of `nodes` judges `stand_in` as python-jsonschema judges `value`: a value of no JSON type
    (a date or time), or a number the compiled validator cannot read (NaN, an infinity, an integer past 64
    bits) where no node reads it as a number (`_reads_number`). Both then fail `type`, `enum` and `const`,
    and every other keyword skips both."""
    if isinstance(stand_in, float):
        return all(_same_number(stand_in, value, node) for node in nodes)
    kind = _TYPE_OF[type(stand_in)]
    numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not numeric and not isinstance(value, (datetime.date, datetime.time)):
        return False
    for node in nodes:
        types = node.get("type", ())
        types = [types] if isinstance(types, str) else types
        if kind in types or not _KEYWORDS_OF[kind].isdisjoint(node) or (numeric and _reads_number(value, types, node)):
            return False
        if any(_json_equal(stand_in, v) or _json_equal(value, v) for v in (*node.get("enum", ()), *_const(node))):
            return False
    return True


def _reads_number(value: int | float, types: list[str], node: dict[str, Any]) -> bool:
    """Whether a node tells the number `value` from a value of another type: as a number (every one is),
    as an integer (an integer is), or by a bound (NaN passes every one: each comparison is false)."""
    if "number" in types or ("integer" in types and isinstance(value, int)):
        return True
    return not (isinstance(value, float) and math.isnan(value)) and not _NUMERIC.isdisjoint(node)


def _number_like(value: float, nodes: list[dict[str, Any]]) -> float:
    """A finite float that may pass and fail the bounds of `nodes` as the non-finite `value` does (NaN passes
    every bound; an infinity is past every one on its side); `_same_number` says whether it does."""
    bounds = [float(node[k]) for node in nodes for k in _NUMERIC if k in node and isinstance(node[k], (int, float))]
    if value > 0:
        return max(bounds, default=0.0) + 1.5
    if value < 0:
        return min(bounds, default=0.0) - 1.5
    low = max((float(n[k]) for n in nodes for k in ("minimum", "exclusiveMinimum") if k in n), default=None)
    high = min((float(n[k]) for n in nodes for k in ("maximum", "exclusiveMaximum") if k in n), default=None)
    if low is not None and high is not None:
        return (low + high) / 2
    return low + 0.5 if low is not None else high - 0.5 if high is not None else 0.5


_PASSES = {
    "minimum": lambda v, bound: not v < bound,
    "maximum": lambda v, bound: not v > bound,
    "exclusiveMinimum": lambda v, bound: not v <= bound,
    "exclusiveMaximum": lambda v, bound: not v >= bound,
}
"""Each bound as python-jsonschema applies it to a number (NaN passes each: every comparison is false)."""


def _same_number(stand_in: float, value: float, node: dict[str, Any]) -> bool:
    """Whether `node` judges the finite float `stand_in` as the non-finite `value`: both are numbers and
    neither an integer, neither equals an `enum` or `const` value, so only the bounds may tell them apart."""
    if any(_json_equal(stand_in, v) for v in (*node.get("enum", ()), *_const(node))):
        return False
    return all(
        passes(stand_in, node[k]) == passes(value, node[k])
        for k, passes in _PASSES.items()
        if k in node and isinstance(node[k], (int, float))
    )


def _const(node: dict[str, Any]) -> tuple[Any, ...]:
    return (node["const"],) if "const" in node else ()


def _json_equal(a: Any, b: Any) -> bool:
    """Equality as JSON has it: `true` is not 1, nor `false` 0."""
    return type(a) is type(b) and a == b if isinstance(a, bool) or isinstance(b, bool) else a == b


def with_values_of(data: Any, errors: list[Error]) -> list[Error]:
    """`errors` found on a stand-in of `data`, each showing the value `data` has where it is."""
    return [
        e._replace(instance=_at(data, e.absolute_path), context=tuple(with_values_of(data, list(e.context))))
        for e in errors
    ]


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

    def errors_alike(self, data: Any, most: int) -> list[Error] | None:
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
        if not found or len(found) > most or _holds_empty_key(data):
            return None
        budget = [most]
        out = []
        for error in found:
            alike = self._alike(error, data, 0, budget)
            if alike is None:
                return None
            out.append(alike)
        return out

    def _alike(self, error: Any, data: Any, branch: int, budget: list[int]) -> Error | None:
        """`error` as python-jsonschema reports it, or None. `branch`: where in its schema path the index of
        the union branch holding it lies (0: in no union); `budget`: how many more errors may be rebuilt.
        A union's error takes its branches' errors as its context, as python-jsonschema's does."""
        budget[0] -= 1
        where = tuple(error.schema_path)
        keyword = _AS_WRITTEN.get(str(where[-1]), where[-1])
        union = keyword in _UNIONS
        if budget[0] < 0 or not (union or keyword in _REPORTED_ALIKE) or not _ELSEWHERE.isdisjoint(where[branch:-1]):
            return None
        node: Any = self._schema.inlined
        for part in where[:-1]:
            node = node[part]
        path = tuple(error.instance_path)
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
                    alike = self._alike(sub, data, len(where), budget)
                    if alike is None:
                        return None
                    context.append(alike)
        return Error(keyword, node[keyword], _at(data, path), path, where, relative, node, tuple(context))

    def inert_stand_in(self, data: Any, standing: Any, unjudged: list[Path]) -> Any | None:
        """`standing` (`stand_in(data)`, a copy of the mapping `data`) with each value at `unjudged` replaced, in
        place, by one that every keyword the schema can apply there treats as python-jsonschema treats the
        value `data` has there; None when some value has no such stand-in. Every verdict is then the same on
        both, a union's or a condition's over such a value included, and the compiled validator's errors are
        python-jsonschema's but for the values they show (`with_values_of`)."""
        for path in unjudged:
            nodes = _nodes_at(self._schema.inlined, path)
            if nodes is None:
                return None
            value = _at(data, path)
            candidates = (*_INERT, _number_like(value, nodes)) if isinstance(value, float) else _INERT
            inert = next((c for c in candidates if _is_inert(c, value, nodes)), _NO_STAND_IN)
            if inert is _NO_STAND_IN:
                return None
            replace_value(standing, path, inert)
        return standing

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
