"""The fast paths agree with the ones of record.

The compiled validator may only ever say "valid" where python-jsonschema (the
validator of record, with strict integers) finds nothing: here they must give
the same verdict on every corpus config, on those configs with values swapped
for generated ones (2.0 where an integer belongs, booleans, huge numbers, text),
and on generated values against small schemas of each keyword they share. Where
it finds errors, python-jsonschema walking only the way to them must explain
exactly what a walk of the whole document does. rtoml must read TOML exactly as
tomllib does, or leave the text to it.
"""

from __future__ import annotations

import contextlib
import datetime
import math
import tomllib
from collections import OrderedDict
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trainspec.families import every_version
from trainspec.read.files import parse
from trainspec.read.toml import _loads
from trainspec.spec.schema import Schema
from trainspec.spec.schema_walk import Where, build_validator
from trainspec.validate.explain import explain, findings
from trainspec.validate.fast import COMPILE_AFTER, fast_validator, is_plain, where_invalid

from .conftest import AXOLOTL_EXAMPLES, CORPUS

FAMILIES = sorted(every_version().values(), key=lambda f: f.id)
DOCS = {
    path.relative_to(folder.parent).as_posix(): parse(str(path), path.read_text()).data
    for folder in (CORPUS, AXOLOTL_EXAMPLES)
    for path in sorted(folder.rglob("*"))
    if path.suffix in (".toml", ".yaml", ".yml", ".json")
}


def python_valid(validator: Any, data: Any) -> bool:
    return next(iter(validator.iter_errors(data)), None) is None


def fast_valid(schema: Schema, data: Any) -> bool:
    validator = fast_validator(schema)
    assert validator is not None
    return validator.error_paths(data) == []


def explained(schema: Schema, validator: Any, data: Any, targeted: bool) -> list[tuple[Any, ...]]:
    """The findings of `data`, from a walk of the whole document or only of the way to what the
    compiled validator found."""
    where = where_invalid(schema, data, first=True) if targeted else None
    assert where is not None or not targeted
    return sorted((f.path, f.rule, f.message, f.at_key, f.anchor) for f in findings(schema, validator, data, where))


def explained_by_compiled(schema: Schema, validator: Any, data: Any) -> list[tuple[Any, ...]]:
    """The findings of `data` as a check makes them: from the compiled validator's own errors when it
    reports them as python-jsonschema would."""
    where = where_invalid(schema, data, first=True)
    return sorted(
        (f.path, f.rule, f.message, f.at_key, f.anchor) for f in explain(schema, lambda: validator, data, where)
    )


def test_every_family_gets_a_compiled_validator() -> None:
    """Both families' schemas use only keywords the two validators share: none is left on the slow path."""
    assert all(fast_validator(family.schema) is not None for family in FAMILIES)


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.id)
def test_verdicts_agree_on_the_corpus(family: Any) -> None:
    """Every corpus config, against every family version: the same verdict, some valid, some not."""
    verdicts = []
    for name, data in DOCS.items():
        assert is_plain(data), name
        expected = python_valid(family.validator, data)
        assert fast_valid(family.schema, data) is expected, name
        verdicts.append(expected)
    assert True in verdicts


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.integers(min_value=-3, max_value=70_000).map(float),  # integral floats: 2.0 is no integer here
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["", "bf16", "cosine", "a b", "x\n", " lead", "trail ", "\u3000", "llama", "fsdp"]),
    st.text(max_size=8),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)),
    max_leaves=8,
)


def _leaves(data: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(data, dict):
        return [p for k, v in data.items() for p in _leaves(v, (*path, k))] + [path]
    if isinstance(data, list):
        return [p for i, v in enumerate(data) for p in _leaves(v, (*path, i))] + [path]
    return [path]


def _replaced(data: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    copy = dict(data) if isinstance(data, dict) else list(data)
    copy[path[0]] = _replaced(data[path[0]], path[1:], value)
    return copy


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_verdicts_agree_on_corpus_configs_with_generated_values(data: st.DataObject) -> None:
    """A corpus config with one value (or a whole section) replaced: both validators agree."""
    family = data.draw(st.sampled_from(FAMILIES))
    doc = data.draw(st.sampled_from(sorted(DOCS)))
    path = data.draw(st.sampled_from(_leaves(DOCS[doc])))
    value = data.draw(VALUES)
    changed = _replaced(DOCS[doc], path, value)
    if isinstance(changed, dict) and is_plain(changed):
        assert fast_valid(family.schema, changed) is python_valid(family.validator, changed)
        targeted = explained(family.schema, family.validator, changed, targeted=True)
        assert targeted == explained(family.schema, family.validator, changed, targeted=False)
        assert targeted == explained_by_compiled(family.schema, family.validator, changed)


UNJUDGED = st.sampled_from([math.nan, -math.inf, datetime.date(2026, 1, 1), datetime.time(12, 30), 2**70, -(2**64)])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_values_the_compiled_validator_cannot_judge_are_explained_where_they_are(data: st.DataObject) -> None:
    """NaN, dates or huge integers in a corpus config (with perhaps a mistake elsewhere): the compiled
    validator sees null there, python-jsonschema walks to them, and finds what the whole walk finds."""
    family = data.draw(st.sampled_from(FAMILIES))
    doc = DOCS[data.draw(st.sampled_from(sorted(DOCS)))]
    for value in data.draw(st.lists(st.one_of(UNJUDGED, VALUES), min_size=1, max_size=3)):
        doc = _replaced(doc, data.draw(st.sampled_from(_leaves(doc))), value)
    if isinstance(doc, dict):
        where = where_invalid(family.schema, doc, first=True)
        assert where is not None
        if where == ([], []):
            assert python_valid(family.validator, doc)
        targeted = explained(family.schema, family.validator, doc, targeted=True)
        assert targeted == explained(family.schema, family.validator, doc, targeted=False)


def test_a_condition_on_a_value_the_compiled_validator_cannot_judge_is_walked_whole() -> None:
    """NaN is a number to python-jsonschema, null to the compiled validator: the `if` takes the other
    branch, so its errors are not where the compiled validator looked, and all of it is walked."""
    tree = Schema(
        {
            "if": {"properties": {"a": {"type": "number"}}},
            "then": {"properties": {"b": {"type": "string"}}},
            "else": {"properties": {"b": {"type": "integer"}}},
        }
    )
    doc = {"a": math.nan, "b": 1}
    assert where_invalid(tree, doc, first=True) == Where([], [("a",)])
    assert [f.path for f in findings(tree, build_validator(tree), doc, Where([], [("a",)]))] == [("b",)]


def test_a_condition_is_tested_on_the_whole_document() -> None:
    """An `if` reads parts the compiled validator found clean: skipping them would make it hold
    vacuously, and its `then` report what the whole walk does not."""
    tree = Schema(
        {
            "properties": {"s": {"type": "integer"}, "x": {"type": "integer"}},
            "if": {"properties": {"s": {"minimum": 5}}},
            "then": {"required": ["zz"]},
        }
    )
    doc = {"s": 1, "x": "bad"}
    assert where_invalid(tree, doc, first=True) == Where([("x",)], [])
    assert explained(tree, build_validator(tree), doc, targeted=True) == [
        (("x",), "wrong-type", '`x` must be an integer, got string "bad"', False, None)
    ]


def test_where_the_targeted_walk_finds_nothing_the_whole_document_is_walked() -> None:
    """Should the two validators ever disagree on where an error is, nothing is lost."""
    tree = Schema({"properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}})
    doc = {"a": 1, "b": "x"}
    (found,) = findings(tree, build_validator(tree), doc, Where([("a",)], []))
    assert found.path == ("b",)


def test_a_mapping_of_another_class_is_walked_inside() -> None:
    """An OrderedDict (as `check_config` may be given) is an object to python-jsonschema: its keys are
    judged like a dict's, not skipped as one unjudged value."""
    tree = Schema({"properties": {"a": {"properties": {"x": {"type": "integer"}}}, "b": {"type": "string"}}})
    doc = {"a": OrderedDict(x="bad"), "b": 1}
    assert where_invalid(tree, doc, first=True) == Where([("a", "x"), ("b",)], [])
    assert explained(tree, build_validator(tree), doc, targeted=True) == explained(
        tree, build_validator(tree), doc, targeted=False
    )
    assert len(explained(tree, build_validator(tree), doc, targeted=True)) == 2


def test_a_reference_outside_the_definitions_gets_no_compiled_validator() -> None:
    """Only what sits under `$defs` (or the root) is rewritten for strict integers and Python's patterns;
    a schema referring elsewhere is left to python-jsonschema alone."""

    def node(where: str) -> dict[str, Any]:
        return {"type": "object", "properties": {"n": {"type": "integer"}, "child": {"$ref": f"#/{where}/Node"}}}

    assert fast_validator(Schema({"$ref": "#/components/Node", "components": {"Node": node("components")}})) is None
    assert fast_validator(Schema({"$ref": "#/$defs/Node", "$defs": {"Node": node("$defs")}})) is not None


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.id)
def test_an_integral_float_is_never_an_integer(family: Any) -> None:
    """jsonschema-rs alone counts 2.0 as an integer; trainspec does not, and neither does its fast path."""
    for name, doc in DOCS.items():
        for path in _leaves(doc):
            value = _get(doc, path)
            if type(value) is int and python_valid(family.validator, doc):
                changed = _replaced(doc, path, float(value))
                assert fast_valid(family.schema, changed) is python_valid(family.validator, changed), (name, path)


def _get(data: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        data = data[part]
    return data


KEYWORD_SCHEMAS = [
    {"type": "integer"},
    {"type": ["integer", "null"], "minimum": 1},
    {"type": ["integer", "string"]},
    {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
    {"type": "boolean"},
    {"enum": [1, 2.5, "x", True, None]},
    {"const": 0},
    {"const": 2.0},
    {"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 3, "uniqueItems": True},
    {"type": "array", "contains": {"const": "x"}},
    {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"], "additionalProperties": False},
    {"type": "string", "minLength": 1, "maxLength": 3, "pattern": "^[a-z]+$"},
    {"pattern": "^[^\\t-\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]+$"},
    {"anyOf": [{"const": -1}, {"type": "integer", "minimum": 1}]},
    {"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 2}]},
    {"not": {"type": "null"}},
    {"if": {"properties": {"a": {"const": 1}}}, "then": {"required": ["b"]}, "else": {"maxProperties": 9}},
    {"allOf": [{"type": "object"}, {"properties": {"b": {"type": "integer", "maximum": 5}}}]},
]


COMPILED_SCHEMAS = [s for s in KEYWORD_SCHEMAS if "maxProperties" not in str(s)]


@pytest.mark.parametrize("schema", KEYWORD_SCHEMAS, ids=lambda s: ",".join(s))
@settings(max_examples=150, deadline=None)
@given(value=VALUES)
def test_verdicts_agree_keyword_by_keyword(schema: dict[str, Any], value: Any) -> None:
    """Each keyword both validators share, on generated values: the same verdict."""
    tree = Schema(schema)
    if "maxProperties" in str(schema):  # a keyword outside the shared set: no compiled validator at all
        assert fast_validator(tree) is None
        return
    assert is_plain(value)
    assert fast_valid(tree, value) is python_valid(build_validator(tree), value)


@pytest.mark.parametrize("schema", COMPILED_SCHEMAS, ids=lambda s: ",".join(s))
@settings(max_examples=100, deadline=None)
@given(first=VALUES, second=VALUES, third=VALUES)
def test_explaining_only_where_the_errors_are_explains_the_same(
    schema: dict[str, Any], first: Any, second: Any, third: Any
) -> None:
    """Each shared keyword, in a section and inside a union's branches: the walk that skips what the
    compiled validator found clean finds every error the whole walk does, and nothing else."""
    nested = {"type": "object", "properties": {"a": {"type": "integer"}, "inner": schema}}
    tree = Schema(
        {
            "type": "object",
            "properties": {"s": schema, "t": nested, "u": {"anyOf": [nested, {"properties": {"inner": schema}}]}},
            "if": {"properties": {"s": schema}},
            "then": {"properties": {"t": {"required": ["a"]}}},
        }
    )
    value = {"s": first, "t": {"a": 1, "inner": second}, "u": {"a": "x", "inner": third}}
    validator = build_validator(tree)
    whole = explained(tree, validator, value, targeted=False)
    assert explained(tree, validator, value, targeted=True) == whole
    if is_plain(value):
        assert explained_by_compiled(tree, validator, value) == whole


@pytest.mark.parametrize(
    "value",
    [
        math.nan,
        {"a": [math.inf]},
        2**63,
        -(2**63) - 1,
        datetime.date(2026, 1, 1),
        (1, 2),
        {1: "x"},
        type("Text", (str,), {})("x"),
    ],
    ids=repr,
)
def test_values_the_validators_read_differently_are_not_plain(value: Any) -> None:
    """NaN, infinities, integers past 64 bits, dates, tuples, non-text keys and subclasses go to python-jsonschema."""
    assert not is_plain(value)


def test_text_the_compiled_validator_cannot_take_is_left_to_python_jsonschema() -> None:
    tree = Schema({"type": "string"})
    assert not fast_valid(tree, "\ud800")
    assert python_valid(build_validator(tree), "\ud800")


def test_a_schema_is_compiled_only_once_it_has_seen_a_few_documents() -> None:
    """A run of one file never pays for building the compiled validator; a run of many does, once."""
    tree = Schema({"type": "object"})
    assert [where_invalid(tree, {}) for _ in range(COMPILE_AFTER + 2)] == [None] * COMPILE_AFTER + [Where([], [])] * 2


KEYS = st.sampled_from(["a", "b", "a.b", '"a"', "'b'", '"é"', "é", "x-y", "1", "a . b", '""'])
TOML_VALUES = st.sampled_from(
    [
        "1",
        "-0",
        "+7",
        "0x_1",
        "0xff",
        "0o17",
        "0b101",
        "1_000",
        "01",
        "9223372036854775808",
        "1" * 30,
        "1.5",
        "1e3",
        "1E-2",
        "6.626e-34",
        "1.",
        ".5",
        "1e1000",
        "inf",
        "-inf",
        "nan",
        "-nan",
        "+nan",
        "true",
        "false",
        "tru",
        '"x"',
        '"\\u00e9"',
        '"\\U0001F600"',
        '"\\ud800"',
        '"\\e"',
        '"\\x41"',
        '"a\\tb"',
        '"\x7f"',
        "'C:\\x'",
        '"""\nline\\\n  more"""',
        "'''raw'''",
        '"""a""""',
        '"a\rb"',
        "1979-05-27",
        "1979-05-27T07:32:00Z",
        "1979-05-27t07:32:00z",
        "1979-05-27 07:32:00+05:30",
        "1979-05-27T07:32:00.9999999-07:00",
        "1979-05-27T07:32",
        "07:32:00",
        "07:32",
        "00:32:00.5",
        "[1, 2]",
        "[\n1,\n2,\n]",
        "[1, 'x', [2]]",
        "[]",
        "{x = 1}",
        "{x = 1,}",
        "{\n x = 1\n}",
        "{}",
        "{a.b = 1}",
        "{ x = '}'",
        '{ x = "{" }',
        '{ x = """}"""',
        "{ a = { b = 1 } }",
        "{ a = [\n1] }",
        "{ a = 1 }}",
        "{ , x = 1}",
        "{ x = 1 # c\n}",
        "[{x = 1},\n{y = 2}]",
        "[{x = 1,},\n]",
    ]
)
LINES = st.one_of(
    st.builds(lambda k, v: f"{k} = {v}", KEYS, TOML_VALUES),
    st.sampled_from(
        ["[t]", "[t.u]", "[[arr]]", '["q t"]', "# note", "", "[a]", "a = 1 # c", "\ufeffa = 1", "\t", "}", "]"]
    ),
    st.sampled_from(["[t.u.v]", "[[t.u]]", "[ t . u ]", '["t".u]', "['t']", "t.u = 1", "[[t]]", "[u.t]", "[[a.b]]"]),
    st.sampled_from(['["t"]', '[t."u"]', "['t' . 'u']", '["t.u"]', '[[ "a".b ]]', '["t\\u0074"]', '[t."u]"]', '[""]']),
)


@pytest.mark.parametrize(
    "text",
    [
        '[t.u]\nx = 1\n[[arr]]\n["t"]\ny = 2\n',  # the table above, named quoted, after one below it
        "['t'.\"u\"]\nx = 1\n[other]\n[t]\ny = 2\n",
        '[tool.x]\n[project.entry-points."trainspec.families"]\nk = "v"\n[project]\nname = "n"\n',
        '[a."b.c"]\nx = 1\n[a.b]\ny = 2\n',  # "b.c" is one key: no table above another
    ],
)
def test_quoted_table_names_read_as_tomllib_reads_them(text: str) -> None:
    """Quoted table names are compared by their keys when deciding whether rtoml may read the text."""
    assert repr(_loads(text)) == repr(tomllib.loads(text))


@settings(max_examples=1500, deadline=None)
@given(st.lists(LINES, max_size=8), st.sampled_from(["\n", "\r\n"]))
def test_toml_reads_exactly_as_tomllib(lines: list[str], newline: str) -> None:
    """Generated TOML (1.0, 1.1, wrong): the same data, key order and types as tomllib, or tomllib's error."""
    text = newline.join(lines)
    try:
        expected: Any = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError) as exc:
        expected = type(exc)
    try:
        got: Any = _loads(text)
    except (tomllib.TOMLDecodeError, ValueError) as exc:
        got = type(exc)
    assert repr(got) == repr(expected)


def test_a_config_is_checked_without_importing_jsonschema(tmp_path):
    """The first document of a run goes to the compiled validator: a valid one never needs the
    explaining validator, and neither does one whose errors the compiled validator reports as
    python-jsonschema would (a bound crossed), so one-file runs skip jsonschema's import (about
    80 ms of a cold start)."""
    import subprocess
    import sys

    valid = tmp_path / "job.toml"
    valid.write_text((CORPUS / "kempnerforge" / "train" / "debug.toml").read_text())
    broken = tmp_path / "broken.toml"
    broken.write_text("[train]\nbatch_size = 0\n")
    probe = (
        "import sys, io, contextlib\nfrom trainspec.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n    code = main(sys.argv[1:])\n"
        "print(code, 'jsonschema' in sys.modules)"
    )
    for path, expected in ((valid, "0 False"), (broken, "1 False")):
        done = subprocess.run(
            [sys.executable, "-c", probe, "check", str(path), "--world-size", "4", "--isolated"],
            capture_output=True,
            text=True,
            check=True,
        )
        assert done.stdout.split() == expected.split(), done.stdout + done.stderr


def _union_paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The places (by `properties`, and the first item of a list) where a schema holds a union."""
    if not isinstance(node, dict):
        return []
    found = [path] if "anyOf" in node or "oneOf" in node else []
    for name, spec in node.get("properties", {}).items():
        found += _union_paths(spec, (*path, name))
    return found + _union_paths(node.get("items"), (*path, 0))


UNION_FAMILIES = [f for f in FAMILIES if _union_paths(f.schema.inlined)]


def _values_at(path: tuple[Any, ...]) -> list[Any]:
    """What the corpus writes at `path`, in every config that has it."""
    found = []
    for doc in DOCS.values():
        with contextlib.suppress(KeyError, IndexError, TypeError):
            found.append(_get(doc, path))
    return found


def _placed(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    """`doc` with `value` at `path`, the tables on the way made where missing."""
    if not path:
        return value
    if isinstance(path[0], int):
        items = list(doc) if isinstance(doc, list) and doc else [{}]
        items[0] = _placed(items[0], path[1:], value)
        return items
    copy = dict(doc) if isinstance(doc, dict) else {}
    copy[path[0]] = _placed(copy.get(path[0], {}), path[1:], value)
    return copy


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_union_errors_are_explained_alike(data: st.DataObject) -> None:
    """A union (SpecForge's `deployment.disaggregated`, KempnerForge's `vlm` and `distributed.dp_shard`...)
    given what the corpus writes there, with one value or key changed, or a generated value: the
    compiled validator's explanation is the whole python walk's."""
    family = data.draw(st.sampled_from(UNION_FAMILIES))
    path = data.draw(st.sampled_from(_union_paths(family.schema.inlined)))
    written = _values_at(path)
    value = data.draw(st.sampled_from(written)) if written and data.draw(st.booleans()) else data.draw(VALUES)
    for _ in range(data.draw(st.integers(min_value=1, max_value=2))):
        leaf = data.draw(st.sampled_from(_leaves(value)))
        parent = _get(value, leaf[:-1]) if leaf else None
        if isinstance(parent, dict) and data.draw(st.booleans()):
            value = _replaced(value, leaf[:-1], {k: v for k, v in parent.items() if k != leaf[-1]})
        else:
            value = _replaced(value, leaf, data.draw(VALUES))
    names = [n for n in sorted(DOCS) if n.split("/")[1].split("-")[0] == family.name]
    doc = _placed(DOCS[data.draw(st.sampled_from(names))] if names else {}, path, value)
    if is_plain(doc):
        whole = explained(family.schema, family.validator, doc, targeted=False)
        assert explained_by_compiled(family.schema, family.validator, doc) == whole


@pytest.mark.parametrize("odd", [None, math.nan, datetime.date(2026, 1, 1)], ids=["plain", "nan", "date"])
def test_an_error_under_an_empty_key_is_placed_under_it(odd: Any) -> None:
    """jsonschema-rs leaves a key "" out of an error's path: the error is still placed at `a[""]`, not at `a`
    (python-jsonschema explains such a document), beside a value the compiled validator cannot read or not."""
    tree = Schema(
        {
            "type": "object",
            "properties": {"a": {"type": "object", "additionalProperties": {"type": "string"}}, "b": {}},
        }
    )
    doc = {"a": {"": None, "x": "y"}, "b": odd}
    (finding,) = explained_by_compiled(tree, build_validator(tree), doc)
    assert finding[:2] == (("a", ""), "wrong-type")


@pytest.mark.parametrize("schema", COMPILED_SCHEMAS, ids=lambda s: ",".join(s))
@settings(max_examples=60, deadline=None)
@given(first=VALUES, second=VALUES, odd=UNJUDGED, data=st.data())
def test_a_value_the_compiled_validator_cannot_read_is_explained_alike_under_each_keyword(
    schema: dict[str, Any], first: Any, second: Any, odd: Any, data: st.DataObject
) -> None:
    """Each shared keyword, on a value, on the items of a list without duplicates, in a union and in a
    condition, with NaN, an infinity, a date or a huge integer somewhere in the config: the check's
    explanation is the whole python walk's (a keyword that compares a whole value holding it, such as
    `uniqueItems` or `enum`, leaves it to python-jsonschema)."""
    tree = Schema(
        {
            "type": "object",
            "properties": {
                "s": schema,
                "l": {"type": "array", "uniqueItems": True, "items": schema},
                "u": {"anyOf": [schema, {"type": "null"}]},
            },
            "if": {"properties": {"s": schema}},
            "then": {"required": ["l"]},
        }
    )
    value = {"s": first, "l": [second, True, first], "u": second}
    value = _replaced(value, data.draw(st.sampled_from(_leaves(value))), odd)
    _assert_explained_alike(SimpleNamespace(schema=tree, validator=build_validator(tree)), value)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_union_errors_beside_values_the_compiled_validator_cannot_judge_are_explained_alike(
    data: st.DataObject,
) -> None:
    """A union given a wrong value, and NaN, an infinity, a date or a huge integer elsewhere in the config or
    inside the union: the check's explanation (the compiled validator's errors, on a stand-in every keyword
    there judges alike, where it can give them) is the whole python walk's."""
    family = data.draw(st.sampled_from(UNION_FAMILIES))
    path = data.draw(st.sampled_from(_union_paths(family.schema.inlined)))
    names = [n for n in sorted(DOCS) if n.split("/")[1].split("-")[0] == family.name]
    doc = _placed(DOCS[data.draw(st.sampled_from(names))] if names else {}, path, data.draw(VALUES))
    for _ in range(data.draw(st.integers(min_value=1, max_value=2))):
        inside = [leaf for leaf in _leaves(doc) if leaf[: len(path)] == path] if data.draw(st.booleans()) else []
        doc = _replaced(doc, data.draw(st.sampled_from(inside or _leaves(doc))), data.draw(UNJUDGED))
    _assert_explained_alike(family, doc)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_values_the_compiled_validator_cannot_judge_are_explained_alike(data: st.DataObject) -> None:
    """NaN, an infinity, a date or a huge integer at any value of a corpus config, perhaps with another
    mistake: under a condition that reads it, a union, a bound or none, the check explains it as the whole
    python walk does."""
    family = data.draw(st.sampled_from(FAMILIES))
    doc = DOCS[data.draw(st.sampled_from(sorted(DOCS)))]
    for value in data.draw(st.lists(st.one_of(UNJUDGED, UNJUDGED, VALUES), min_size=1, max_size=3)):
        doc = _replaced(doc, data.draw(st.sampled_from(_leaves(doc))), value)
    _assert_explained_alike(family, doc)


def _assert_explained_alike(family: Any, doc: Any) -> None:
    """The check's findings of `doc` are the whole python walk's, but at non-finite numbers (reported apart)."""
    if isinstance(doc, dict):
        apart = {path for path in _leaves(doc) if isinstance(v := _get(doc, path), float) and not math.isfinite(v)}
        whole = [f for f in explained(family.schema, family.validator, doc, targeted=False) if f[0] not in apart]
        compiled = [f for f in explained_by_compiled(family.schema, family.validator, doc) if f[0] not in apart]
        assert compiled == whole


@pytest.mark.parametrize(
    ("name", "path", "value"),
    [
        ("specforge", ("deployment", "disaggregated"), {"managed_local": {"num_servers": "2"}}),
        ("kempnerforge", ("vlm",), {"arch": "nope"}),
        ("kempnerforge", ("distributed", "dp_shard"), 0),
    ],
)
def test_a_union_error_needs_no_python_jsonschema(name: str, path: tuple[Any, ...], value: Any) -> None:
    """The compiled validator gives a union's error with its branches' errors, as python-jsonschema does."""
    family = next(f for f in UNION_FAMILIES if f.name == name)
    doc = _placed({}, path, value)
    compiled = fast_validator(family.schema)
    assert compiled is not None and compiled.error_paths(doc)
    alike = compiled.errors_alike(doc, 100)
    assert alike is not None
    assert any(e.validator in ("anyOf", "oneOf") and e.absolute_path == path for e in alike)
    assert explained_by_compiled(family.schema, family.validator, doc) == explained(
        family.schema, family.validator, doc, targeted=False
    )


_ODD = [None, True, False, 0, 3, -1, 2**70, 3.0, 8.5, math.nan, math.inf, "x", "", [], [1], {}, {"a": 1}]
_ODD += [datetime.date(2024, 1, 1), OrderedDict(a=1), (1, 2)]


@pytest.mark.parametrize("value", _ODD, ids=repr)
def test_a_type_is_told_as_the_validator_of_record_tells_it(value):
    from trainspec.spec.schema import is_type
    from trainspec.spec.schema_walk import strict_validator

    checker = strict_validator().TYPE_CHECKER
    for kind in ("null", "boolean", "integer", "number", "string", "array", "object"):
        assert is_type(value, kind) == checker.is_type(value, kind), kind
