"""Edge cases of the pipeline: one report per problem, robust world sizes, overrides that never discard input."""

from __future__ import annotations

import pytest

import trainspec
from trainspec.api import check_config

from .conftest import CORPUS


def problems(path, **kwargs):
    return [d for d in trainspec.check(path, **kwargs) if d.severity is not trainspec.Severity.NOTE]


def test_unknown_key_inside_an_annotated_item_keeps_its_generic_id(write):
    path = write("job.toml", '[[data.datasets]]\npath = "/a"\nwieght = 2.0\n')
    (d,) = problems(path)
    assert (d.rule, d.line, d.config_path) == ("unknown-key", 3, "data.datasets[0].wieght")
    assert "did you mean `weight`?" in d.message


RUN = "model:\n  target_model_path: m\ndata:\n  hidden_states_path: h\n"


def test_a_mistyped_value_gets_only_its_type_error(write):
    path = write(
        "run.yaml", "model:\n  target_model_path: m\ndata:\n  hidden_states_path: h\ntraining:\n  role: null\n"
    )
    assert [d.rule for d in problems(path, family="specforge")] == ["wrong-type"]


def test_an_infinite_integer_is_reported_once(write):
    path = write(
        "run.yaml", "model:\n  target_model_path: m\ndata:\n  hidden_states_path: h\ntraining:\n  num_epochs: 1e400\n"
    )
    assert [d.rule for d in problems(path, family="specforge")] == ["non-finite-number"]


def test_derived_world_size_survives_an_unrelated_error(write):
    text = (CORPUS / "specforge" / "qwen3-8b-domino-offline.yaml").read_text()
    path = write("run.yaml", text)
    overrides = ["training.attention_backend=usp", "training.sp_ulysses_size=3", "deployment.trainer.nproc_per_node=4"]
    assert "world-size-divisible-by-sp" in {d.rule for d in problems(path, overrides=overrides)}
    broken = [*overrides, "tracking.report_to=foo"]
    assert {"world-size-divisible-by-sp", "not-allowed-value"} <= {d.rule for d in problems(path, overrides=broken)}


def test_a_schema_named_for_another_format_does_not_pick_the_family(write):
    path = write("job.toml", "#:schema ./specforge.schema.json\n[model]\ndim = 4096\n")
    result = trainspec.api.check_path(path)
    assert result.family is not None and result.family.name == "kempnerforge"


def test_one_override_string_is_one_override(write):
    path = write("job.toml", "")
    assert trainspec.load(path, overrides="train.seq_len=256").train.seq_len == 256


@pytest.mark.parametrize("size", [0, -4, 2.5, True])
def test_world_size_below_one_is_refused_by_the_api(write, size):
    path = write("job.toml", "")
    with pytest.raises(ValueError, match="world_size must be a whole number of at least 1"):
        trainspec.check(path, world_size=size)


def test_in_memory_configs_are_not_migrated():
    config = {
        "model": {"target_model_path": "m"},
        "data": {"train_data_path": "d"},
        "training": {"deployment_mode": "local_colocated"},
    }
    rules = {d.rule for d in check_config(config, "specforge")}
    assert "legacy-key-migrated" not in rules and "unknown-key" in rules


@pytest.mark.parametrize(
    ("name", "text", "override"),
    [
        (
            "run.yaml",
            "model:\n  target_model_path: m\ndata:\n  train_data_path: d\ntraining: 5\n",
            "training.batch_size=2",
        ),
        ("job.toml", "model = 5\n", "model.dim=256"),
    ],
)
def test_an_override_never_replaces_a_scalar_the_file_wrote(write, name, text, override):
    path = write(name, text)
    rules = [d.rule for d in problems(path, overrides=[override])]
    assert "override-unknown-path" in rules and "wrong-type" in rules


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("deep.json", '{"model": ' + "[" * 3000 + "]" * 3000 + "}"),
        ("deep.yaml", "model: " + "[" * 3000 + "]" * 3000 + "\n"),
        ("deep.toml", "x = " + "[" * 3000 + "]" * 3000 + "\n"),
    ],
)
def test_absurdly_deep_documents_are_a_located_error(write, name, text):
    path = write(name, text)
    (d,) = trainspec.check(path, family="kempnerforge")
    assert d.rule == "syntax-error" and d.is_error


def test_aliases_that_repeat_aliases_are_refused_quickly(write):
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    path = write("bomb.yaml", "\n".join(lines) + "\n")
    (d,) = trainspec.check(path, family="specforge")
    assert d.rule == "unsupported-yaml" and "50,000 values" in d.message


def test_a_pipe_is_not_read(tmp_path):
    import os

    fifo = tmp_path / "job.toml"
    os.mkfifo(fifo)
    (d,) = trainspec.check(fifo)
    assert d.rule == "file-not-readable" and "not a regular file" in d.message


def test_very_deep_yaml_is_refused_before_parsing(write):
    path = write("deep.yaml", "model: " + "[" * 50000 + "]" * 50000 + "\n")
    (d,) = trainspec.check(path, family="specforge")
    assert d.rule == "syntax-error" and "nests more than 500 levels" in d.message


def test_boolean_subschemas_of_a_family_schema_are_explained_not_crashed_on():
    """JSON Schema's `true` and `false` (a third team's schema may use them): a key given `true` is
    known, a map whose values may only be null explains the one that is not."""
    from trainspec.spec.schema import Schema
    from trainspec.spec.schema_walk import build_validator
    from trainspec.validate.explain import findings

    free = Schema({"properties": {"a": True, "b": {"type": "integer"}}, "additionalProperties": False})
    found = findings(free, build_validator(free), {"a": [1], "zz": 2})
    assert [(f.path, f.rule, f.message) for f in found] == [
        (("zz",), "unknown-key", "unknown key `zz` in the top level; valid keys: a, b")
    ]
    nulls = Schema({"properties": {"c": {"additionalProperties": {"anyOf": [False, {"type": "null"}]}}}})
    (only,) = findings(nulls, build_validator(nulls), {"c": {"z": 1}})
    assert (only.path, only.rule) == (("c", "z"), "invalid-value")


@pytest.mark.parametrize(
    "config",
    [
        {"a": {"b": 1, "c": [2]}, "x": 3},
        {"a": [10, 20], "x": {"y": 1}},  # a section that is a list, another that holds a table
        {"a": "text"},  # a section of the wrong type
        {},
    ],
)
def test_each_rule_receives_the_values_at_its_paths(config):
    """Rules read the config once per path they share (the rule engine's reading plan): each still receives,
    in the order of its paths, what is at each path (None where a step is absent), whatever the sections hold."""
    from dataclasses import replace

    from trainspec.read.files import parse
    from trainspec.rules.evaluate import run_rules
    from trainspec.spec.rules import rule

    received: dict[str, tuple] = {}

    def spy(name):
        def check(*values):
            """Records what it was given."""
            received[name] = values
            return ()

        return check

    rules = (
        replace(rule("whole-and-b", "error", "x", "a.b")(spy("whole-and-b")), parsed_paths=((), ("a", "b"))),
        rule("b-c-x", "error", "a.b", "a.c", "x")(spy("b-c-x")),
        rule("deep", "error", "a.c[0]", "x.y", "a[1]")(spy("deep")),
        rule("none", "error")(spy("none")),
    )
    list(run_rules(parse("c.json", "{}"), rules, config, []))
    a = config.get("a")
    table = a if isinstance(a, dict) else {}
    assert received["whole-and-b"] == (config, table.get("b"))
    assert received["b-c-x"] == (table.get("b"), table.get("c"), config.get("x"))
    x = config.get("x")
    assert received["deep"] == (
        2 if table.get("c") else None,
        x.get("y") if isinstance(x, dict) else None,
        a[1] if isinstance(a, list) else None,
    )
    assert received["none"] == ()
