"""Diagnostics a person fixes in one read: ranges, related places, one error per root cause, suggestions."""

from __future__ import annotations

import io

import pytest

import trainspec
from trainspec.engine.runner import Options, check_file
from trainspec.read.suppressions import apply
from trainspec.report.reporters import get_reporter
from trainspec.spec.diagnostics import Diagnostic, Related, Severity
from trainspec.spec.result import Result
from trainspec.spec.rules import passing_divisors, rule
from trainspec.spec.wording import closest


def _errors(path, **kwargs):
    return [d for d in trainspec.check(path, **kwargs) if d.is_error]


@pytest.mark.parametrize(
    ("name", "text", "start", "end"),
    [
        ("job.toml", '[train]\nbatch_size = "8"  # eight\n', (2, 14), (2, 17)),
        ("run.yaml", "training:\n  batch_size: '8'\n", (2, 15), (2, 18)),
        ("run.json", '{"training": {"batch_size": "8"}}', (1, 29), (1, 32)),
    ],
)
def test_a_value_error_covers_the_value_exactly(write, name, text, start, end):
    family = "kempnerforge" if name.endswith(".toml") else "specforge"
    [d] = [d for d in _errors(write(name, text), family=family) if d.rule == "wrong-type"]
    assert ((d.line, d.column), (d.end_line, d.end_column)) == (start, end)
    assert d.to_dict()["end_line"] == end[0] and d.to_dict()["end_column"] == end[1]


@pytest.mark.parametrize(
    ("name", "text", "missing", "at"),
    [
        # a missing section goes after the file's last line of content (where an editor user adds it)
        ("run.yaml", "# notes\nmodel:\n  target_model_path: m\n\n", "data", (3, 23)),
        # in JSON, at the brace that closes the object
        ("run.json", '{"model": {"target_model_path": "m"},\n "run_id": "r"\n}\n', "data", (3, 1)),
        # a missing key of a written section: at the section's key
        (
            "run.yaml",
            "model:\n  torch_dtype: float16\ndata:\n  train_data_path: a\n",
            "model.target_model_path",
            (1, 1),
        ),
    ],
)
def test_a_missing_key_points_where_it_would_be_added(write, name, text, missing, at):
    found = [d for d in _errors(write(name, text), family="specforge") if d.rule == "missing-key"]
    assert [(d.config_path, (d.line, d.column)) for d in found] == [(missing, at)]


def test_an_unknown_key_covers_the_key(write):
    [d] = _errors(write("job.toml", "[model]\nn_head = 32\n"), family="kempnerforge")
    assert (d.line, d.column, d.end_line, d.end_column) == (2, 1, 2, 7)


def test_tp_failing_both_head_counts_is_one_error_on_tp_with_the_values_that_pass(write):
    path = write("job.toml", "[model]\ndim = 5120\nn_heads = 40\nn_kv_heads = 8\n\n[distributed]\ntp = 3\n")
    [d] = _errors(path)
    assert (d.rule, d.config_path, d.line) == ("tp-divides-heads", "distributed.tp", 7)
    assert "model.n_heads = 40 and model.n_kv_heads = 8" in d.message
    assert d.message.endswith("distributed.tp values that pass: 1, 2, 4 or 8")
    assert [(r.config_path, r.line, r.label) for r in d.related] == [
        ("model.n_heads", 3, "n_heads = 40"),
        ("model.n_kv_heads", 4, "n_kv_heads = 8"),
    ]


@pytest.mark.parametrize(
    ("model", "rules"),
    [
        ('dim = 5120\nn_heads = 40\nn_kv_heads = "8"', {"wrong-type", "tp-divides-heads"}),  # kv broken
        ('dim = 5120\nn_heads = "40"\nn_kv_heads = 8', {"wrong-type", "tp-divides-kv-heads"}),  # heads broken
        ("dim = 6144\nn_heads = 48\nn_kv_heads = 8", {"tp-divides-kv-heads"}),  # only the kv heads fail
    ],
)
def test_merging_the_tp_rules_loses_no_error(write, model, rules):
    path = write("job.toml", f"[model]\n{model}\n\n[distributed]\ntp = 3\n")
    assert {d.rule for d in _errors(path)} == rules


def test_an_optional_path_must_be_one_of_the_rules_paths():
    with pytest.raises(ValueError, match="optional paths"):
        rule("x", "error", "model.dim", optional=("model.n_heads",))(lambda dim: iter(()))


def test_a_suppression_on_a_related_line_suppresses_the_diagnostic():
    d = Diagnostic("job.toml", 7, 1, ("distributed", "tp"), "tp-divides-heads", Severity.ERROR, "m")
    d = Diagnostic(**{**d.__dict__, "related": (Related(("model", "n_heads"), 3, 1),)})
    text = "\n\nn_heads = 40  # trainspec: ignore[tp-divides-heads]\n\n\n\ntp = 3\n"
    assert apply([d], text, "job.toml", comment="#", known=lambda i: True, checked=lambda i: True) == []


def test_a_value_from_an_override_says_so_in_the_message(write):
    path = write("job.toml", "[distributed]\ndp_shard = 2\ntp = 2\n")
    [d] = _errors(path, world_size=8, overrides=["distributed.tp=8"])
    assert (d.rule, d.line) == ("world-size-product", 2)
    assert d.message.endswith("(distributed.tp = 8 comes from override #1 (--set distributed.tp=8))")


def test_keys_without_their_header_are_one_error_and_hide_no_rule_behind_defaults(write):
    text = "dim = 4096\nn_heads = 32\nmax_seq_len = 8192\n\n[train]\nseq_len = 8192\n"
    [d] = _errors(write("job.toml", text), family="kempnerforge")
    assert (d.rule, d.config_path, d.line) == ("unknown-key", "model", 1)
    assert d.message.startswith("3 keys of the `model` section (`dim`, `n_heads`, `max_seq_len`)")
    assert "add the header on the line before `dim`" in d.message


def test_a_required_section_written_without_its_header_is_not_also_missing(write):
    text = "target_model_path: Qwen/Qwen3-8B\ntarget_backend: sglang\ndata:\n  hidden_states_path: /f\n"
    [d] = _errors(write("run.yaml", text), family="specforge")
    assert (d.rule, d.config_path) == ("unknown-key", "model")


@pytest.mark.parametrize(
    ("name", "known", "expected"),
    [
        ("lr_scheduler", ["kl_scale", "seed"], None),
        ("n_head", ["n_heads", "n_kv_heads"], "n_heads"),
        ("warmup", ["warmup_steps", "min_lr_ratio"], "warmup_steps"),
        ("lr", ["lr_warmup"], None),  # too short to count as the start of another name
    ],
)
def test_did_you_mean_needs_a_close_name(name, known, expected):
    assert closest(name, known) == expected


def test_a_table_with_many_keys_is_not_listed_inline(write):
    path = write("run.yaml", "training:\n  random_state: 7\n")
    [d] = [d for d in _errors(path, family="specforge") if d.rule == "unknown-key"]
    assert d.message.startswith("unknown key `random_state` in training; none of the ")
    assert d.message.endswith("keys of `training` is close; docs/reference/specforge.md#training lists them")


@pytest.mark.parametrize(
    ("numbers", "expected"),
    [((40, 8), "1, 2, 4 or 8"), ((7,), "1 or 7"), ((96,), "1, 2, 3, 4, 6, 8, … or 96"), ((10**12,), "a divisor of")],
)
def test_passing_divisors(numbers, expected):
    assert passing_divisors(*numbers).startswith(expected)


@pytest.mark.parametrize(
    ("name", "text", "said"),
    [
        ("a.yaml", "model:\n  a: 1\n b: 2\n", "line 3 (`b`) is indented 1 space, which matches no block"),
        ("a.yaml", "model:\n  a: x\n    b: 2\n", "line 3 (`b`) is indented more than line 2 (`a`)"),
        ("a.toml", "[optimizer]\nbetas = [0.9, 0.95\neps = 1\n", "an array is left open (the one opened on line 2)"),
        ("a.json", '{"a": 1,}', "JSON allows no trailing comma"),
    ],
)
def test_syntax_errors_say_what_was_expected_and_that_checking_stopped(write, name, text, said):
    [d] = trainspec.check(write(name, text))
    assert d.rule == "syntax-error" and said in d.message
    assert d.message.endswith("checking stopped here, so more problems may follow")


def test_text_shows_every_place_with_gaps_and_a_multi_line_range_to_its_line_end():
    d = Diagnostic(
        "c.toml",
        5,
        7,
        ("x",),
        "r",
        Severity.ERROR,
        "m",
        related=(Related(("y",), 1, 1, 1, 6, "y = 1"),),
        end_line=6,
        end_column=3,
    )
    out = io.StringIO()
    get_reporter("text", color="never")([Result("c.toml", None, [d], lines={1: "y = 1", 5: "xs = [1,"})], out)
    assert out.getvalue().splitlines()[1:7] == [
        "   |",
        " 1 | y = 1",
        "   | ----- y = 1",
        "   ...",
        " 5 | xs = [1,",
        "   |       ^^",
    ]


@pytest.mark.parametrize(
    ("name", "text", "first", "again"),
    [
        ("run.yaml", "model:\n  dim: 1\n  dim: 2\n", (2, 3, 2, 6), (3, 3, 3, 6)),
        ("run.json", '{"model": {"dim": 1,\n "dim": 2}}', (1, 12, 1, 17), (2, 2, 2, 7)),
    ],
)
def test_a_duplicate_key_covers_the_key_and_shows_where_it_was_first_written(write, name, text, first, again):
    [d] = [d for d in trainspec.check(write(name, text), family="specforge") if d.rule == "duplicate-key"]
    assert (d.line, d.column, d.end_line, d.end_column) == again
    [r] = d.related
    assert (r.line, r.column, r.end_line, r.end_column, r.label) == (*first, "first written here")


def test_an_unused_suppression_covers_the_comment(write):
    path = write("job.toml", "[model]\ndim = 4096  # trainspec: ignore[tp-divides-heads]\n")
    [d] = [d for d in check_file(str(path), Options()).diagnostics if d.rule == "unused-suppression"]
    assert (d.line, d.column, d.end_line, d.end_column) == (2, 13, 2, 50)
