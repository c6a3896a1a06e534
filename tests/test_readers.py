"""Readers: plain data by YAML 1.2 / TOML 1.0 / JSON rules, with a place for every key and value."""

from __future__ import annotations

import math

import pytest

from trainspec.read.files import parse
from trainspec.spec.document import Pos, ReadError


def test_yaml_reads_numbers_and_booleans_by_yaml_1_2():
    doc = parse("c.yaml", "lr: 1e-4\nbig: 1.0e3\nflag: on\nyes_: yes\noctal: 017\nhex: 0x1F\nt: True\nn: ~\n")
    assert doc.data == {
        "lr": 0.0001,
        "big": 1000.0,
        "flag": "on",
        "yes_": "yes",
        "octal": 17,
        "hex": 31,
        "t": True,
        "n": None,
    }


def test_yaml_quoted_scalars_stay_strings_and_core_tags_apply():
    doc = parse("c.yaml", "a: '1e-4'\nb: \"true\"\nc: !!str 5\nd: !!float 3\n")
    assert doc.data == {"a": "1e-4", "b": "true", "c": "5", "d": 3.0}


def test_yaml_special_floats_are_read_as_such():
    doc = parse("c.yaml", "a: .inf\nb: -.Inf\nc: .nan\n")
    assert doc.data["a"] == math.inf and doc.data["b"] == -math.inf and math.isnan(doc.data["c"])


def test_yaml_duplicate_key_is_an_error_at_the_second_key():
    doc = parse("c.yaml", "model:\n  a: 1\n  a: 2\n")
    (problem,) = doc.problems
    assert (problem.rule, problem.line, problem.column, problem.config_path) == ("duplicate-key", 3, 3, "model.a")
    assert "line 2" in problem.message


def test_yaml_object_tags_are_refused():
    doc = parse("c.yaml", "a: !!python/object/apply:os.system ['true']\n")
    assert [p.rule for p in doc.problems] == ["unsupported-yaml"]
    assert doc.problems[0].line == 1


def test_yaml_positions_of_keys_values_and_items():
    doc = parse("c.yaml", "model:\n  dims: [1, 2]\n  name: x\n")
    assert doc.positions[("model", "dims")].key == Pos(2, 3)
    assert doc.positions[("model", "dims", 1)].value == Pos(2, 13)
    assert doc.positions[("model", "name")].value == Pos(3, 9)


def test_yaml_merge_keys_and_aliases():
    doc = parse("c.yaml", "base: &b {x: 1, y: 2}\nm:\n  <<: *b\n  y: 3\n")
    assert doc.data["m"] == {"x": 1, "y": 3}


def test_yaml_several_documents_refused():
    with pytest.raises(ReadError) as exc:
        parse("c.yaml", "a: 1\n---\nb: 2\n")
    assert exc.value.diagnostic.line == 3


def test_yaml_syntax_error_is_located():
    with pytest.raises(ReadError) as exc:
        parse("c.yaml", "a: [1, 2\nb: 3\n")
    d = exc.value.diagnostic
    assert d.rule == "syntax-error" and d.line is not None and "invalid YAML" in d.message


def test_toml_positions_through_headers_arrays_of_tables_and_inline_tables():
    text = (
        '[model]\ndim = 4096  # c\n[[data.datasets]]\npath = "a"\n[[data.datasets]]\n'
        "path = 'b'\nweight = 2.0\nx = {y = [1, {z = 2}]}\n"
    )
    doc = parse("c.toml", text)
    p = doc.positions
    assert p[("model", "dim")].value == Pos(2, 7)
    assert p[("data", "datasets", 1, "weight")].key == Pos(7, 1)
    assert p[("data", "datasets", 1, "x", "y", 1, "z")].value == Pos(8, 19)
    assert p[("data",)].key == Pos(3, 1)


def test_toml_multiline_strings_and_arrays_do_not_confuse_positions():
    text = "a = \"\"\"\nline [x]\nb = 1\n\"\"\"\nc = [\n  1,  # one\n  2,\n]\nd = '''q'''\ne = 5\n"
    doc = parse("c.toml", text)
    assert doc.data["a"] == "line [x]\nb = 1\n"
    assert doc.positions[("c", 1)].value == Pos(7, 3)
    assert doc.positions[("e",)].key == Pos(10, 1)
    assert ("b",) not in doc.positions


def test_toml_duplicate_table_is_a_located_syntax_error():
    with pytest.raises(ReadError) as exc:
        parse("c.toml", "[model]\ndim = 1\n[model]\n")
    assert exc.value.diagnostic.rule == "syntax-error" and exc.value.diagnostic.line == 3


def test_json_duplicate_key_and_positions():
    doc = parse("c.json", '{\n  "model": {"dim": 1,\n            "dim": 2}\n}\n')
    (problem,) = doc.problems
    assert (problem.rule, problem.line, problem.column) == ("duplicate-key", 3, 13)
    assert doc.positions[("model", "dim")].key == Pos(2, 13)


def test_non_json_extension_is_read_as_json_and_says_so():
    with pytest.raises(ReadError) as exc:
        parse("c.conf", "model: {}\n")
    assert "read as JSON" in exc.value.diagnostic.message


def test_extension_is_case_insensitive():
    assert parse("C.YAML", "a: 1e-4\n").data == {"a": 0.0001}
