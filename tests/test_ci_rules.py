"""Rule control and the rule catalogue: --select/--ignore, suppression comments, `rules`, `explain`, examples."""

from __future__ import annotations

import json

import pytest

from trainspec.api import check
from trainspec.cli import main
from trainspec.engine.runner import run_example
from trainspec.families import all_families, every_version, get_family
from trainspec.read.suppressions import find
from trainspec.rules.catalogue import catalogue, engine_rules, family_rules
from trainspec.spec.diagnostics import Severity
from trainspec.spec.family import Family

TESTED_ELSEWHERE = {
    "unclaimed-config": "tests/test_unclaimed.py (a directory walk meets a config no family claims)",
    "pattern-mismatch": "test_pattern_mismatch_without_a_rule_id",
    "invalid-family-schema": "tests/test_third_party_family.py::test_an_invalid_family_schema_is_a_usage_error",
    "internal-error": "tests/test_pipeline.py::test_an_unexpected_exception_is_an_internal_error_and_the_run_goes_on",
    "hook-failed": "tests/test_pipeline.py::test_a_failing_family_hook_is_reported_and_the_check_goes_on",
    "model-mismatch": "tests/test_pipeline.py::test_load_reports_a_model_that_refuses_what_the_schema_accepts",
    "verify-failed": "tests/test_distributed.py (a local check that raises, on a live group)",
    "config-differs-across-ranks": "tests/test_distributed_ranks.py",
    "device-bf16-unsupported": "tests/test_distributed.py",
    "device-fp8-unsupported": "tests/test_distributed.py",
    "device-count-per-node": "tests/test_distributed.py",
    "invalid-project-config": "tests/test_project.py (needs a project configuration beside the file)",
    "world-size-from-project": "tests/test_project.py (needs a project configuration beside the file)",
    "installed-release": "tests/test_installed.py (needs the trainer's package installed)",
    "installed-release-unknown": "tests/test_installed.py (needs the trainer's package installed)",
    "diagnostics-truncated": "tests/test_hostile_inputs.py (needs more than a thousand diagnostics)",
    "gpu-unknown": "tests/test_target.py (no built-in family has a rule that reads the device yet)",
}
"""Ids no config file of a built-in family can produce (engine ids, the device checks' notices), each with a test
of its own."""

BROKEN = "[model]\ndim = 4100\nn_heads = 32\nn_kv_heads = 8\n\n[optimizer]\neps = 0.0\n"


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def rules_of(capsys, *args: str) -> list[tuple[str, str]]:
    _code, out, _ = run(capsys, "check", "--format", "json", "--world-size", "4", *args)
    return [(d["rule"], d["severity"]) for d in json.loads(out)["diagnostics"]]


# -- --select, --ignore, --warnings-as-errors ------------------------------------------------


def test_select_and_ignore_take_ids_and_prefixes(capsys, write):
    path = str(write("job.toml", BROKEN))
    assert rules_of(capsys, path) == [("model-heads-divide-dim", "error"), ("value-domain", "warning")]
    assert rules_of(capsys, path, "--select", "value-domain") == [("value-domain", "warning")]
    assert rules_of(capsys, path, "--select", "model-,value") == rules_of(capsys, path)
    assert rules_of(capsys, path, "--ignore", "model-heads") == [("value-domain", "warning")]
    assert rules_of(capsys, path, "--select", "model", "--select", "value", "--ignore", "value-domain") == [
        ("model-heads-divide-dim", "error")
    ]


def test_warnings_as_errors_fails_the_check(capsys, write):
    path = str(write("job.toml", "[optimizer]\neps = 0.0\n"))
    assert run(capsys, "check", path, "--world-size", "4")[0] == 0
    assert rules_of(capsys, path, "--warnings-as-errors") == [("value-domain", "error")]
    assert run(capsys, "check", path, "--world-size", "4", "--warnings-as-errors")[0] == 1


def test_unknown_select_id_is_a_usage_error(capsys, write):
    code, _, err = run(capsys, "check", str(write("job.toml", "[model]\n")), "--ignore", "no-such-rule")
    assert code == 2 and "`no-such-rule` (in --select/--ignore) matches no rule id" in err


# -- suppression comments -----------------------------------------------------------------------


def test_suppression_on_the_line_and_on_the_line_above(capsys, write):
    path = str(
        write(
            "job.toml",
            (
                "[model]\n"
                "dim = 4100  # trainspec: ignore[model-heads-divide-dim]\n"
                "n_heads = 32\n"
                "n_kv_heads = 8\n"
                "\n"
                "[optimizer]\n"
                "# trainspec: ignore[value-domain]\n"
                "# (eps = 0 on purpose: a numerics experiment)\n"
                "eps = 0.0\n"
            ),
        )
    )
    assert rules_of(capsys, path) == []


def test_yaml_suppression_with_several_ids(capsys, write):
    text = (
        "model:\n  target_model_path: m\ndata:\n  hidden_states_path: h\ntraining:\n"
        "  sp_ulysses_size: 2  # trainspec: ignore[training-sp-needs-usp, training-usp-batch-size-1]\n"
    )
    path = str(write("run.yaml", text))
    code, out, _ = run(capsys, "check", path, "--family", "specforge", "--ignore", "world-size")
    assert code == 0
    assert out.replace(path, "run.yaml").splitlines() == [
        "run.yaml:6:23: warning[unused-suppression] the suppression of `training-usp-batch-size-1` matches no "
        "diagnostic on line 6; remove it",
        "0 error(s), 1 warning(s) in 1 file; world size 1",
    ]


def test_unused_and_unknown_suppressions_warn(capsys, write):
    path = str(
        write(
            "job.toml",
            "# trainspec: ignore[model-heads-divide-dim]\n[model]\ndim = 4096  # trainspec: ignore[no-such-rule]\n",
        )
    )
    diagnostics = json.loads(run(capsys, "check", path, "--world-size", "4", "--format", "json")[1])["diagnostics"]
    assert [(d["line"], d["column"], d["rule"], d["message"]) for d in diagnostics] == [
        (
            1,
            1,
            "unused-suppression",
            "the suppression of `model-heads-divide-dim` matches no diagnostic on line 2; remove it",
        ),
        (
            3,
            13,
            "unused-suppression",
            "`no-such-rule` in this suppression comment is not a rule id (see `trainspec rules`)",
        ),
    ]


def test_world_size_suppression_is_not_unused_without_a_world_size(capsys, write):
    path = str(write("job.toml", "[distributed]\ndp_shard = 2  # trainspec: ignore[world-size-product]\n"))
    assert run(capsys, "check", path)[0] == 0
    assert "unused-suppression" not in run(capsys, "check", path)[1]
    assert rules_of(capsys, path, "--world-size", "4") == []  # 2 != 4, suppressed
    assert rules_of(capsys, path, "--world-size", "2") == [("unused-suppression", "warning")]


def test_suppressions_apply_before_select(capsys, write):
    """A comment for a rule --select leaves out is still used: selection does not make it stale."""
    path = str(
        write("job.toml", "[model]\ndim = 4100  # trainspec: ignore[model-heads-divide-dim]\n[optimizer]\neps = 0.0\n")
    )
    assert rules_of(capsys, path, "--select", "value-domain,unused") == [("value-domain", "warning")]


def test_suppression_parsing():
    found = find(
        'a = "# trainspec: ignore[x]"\nb = 1 #trainspec:ignore[ y ,z ]\n# trainspec: ignore[w]\n#\nc = 2\n', "#"
    )
    assert [(s.comment_line, s.target_line, s.ids) for s in found] == [(2, 2, ("y", "z")), (3, 5, ("w",))]


# -- the catalogue: rules, explain, examples -----------------------------------------------------------


def test_rules_lists_every_rule_once_per_family(capsys):
    code, out, _ = run(capsys, "rules", "--format", "json")
    rows = json.loads(out)
    assert code == 0
    assert [(r["family"], r["id"]) for r in rows] == [(i.family, i.id) for i in catalogue()]
    ids = {r["id"] for r in rows}
    assert {
        "unknown-key",
        "missing-key",
        "wrong-type",
        "not-allowed-value",
        "out-of-range",
        "pattern-mismatch",
        "invalid-value",
        "non-finite-number",
        "duplicate-key",
        "syntax-error",
        "unused-suppression",
    } <= ids
    for family in all_families().values():
        assert {r.id for r in family.rules} <= {r["id"] for r in rows if r["family"] == family.name}


def test_engine_ids_are_grouped_by_the_stage_that_reports_them(capsys):
    _code, out, _ = run(capsys, "rules", "--format", "json")
    category = {r["id"]: r["category"] for r in json.loads(out)}
    assert category["syntax-error"] == "read" and category["world-size-unknown"] == "world-size"
    assert category["tp-divides-heads"] is None  # a family's rule
    _, out, _ = run(capsys, "rules", "kempnerforge")
    engine = out.split("engine (every family)\n")[1].splitlines()
    assert engine[0] == "  reading and parsing the file:" and engine[1].split()[0] == "duplicate-key"
    assert engine.index("  the schema validator:") < [line.split()[0] for line in engine].index("unknown-key")
    assert run(capsys, "explain", "unknown-key")[1].splitlines()[1] == "category: the schema validator"


def test_rules_text_for_one_family(capsys):
    code, out, _ = run(capsys, "rules", "kempnerforge")
    lines = out.splitlines()
    newest = get_family("kempnerforge")
    assert code == 0 and lines[0] == f"{newest.id} (follows {newest.follows})"
    assert "engine (every family)" in lines
    row = next(line for line in lines if line.split()[0] == "tp-divides-heads")
    assert row.split()[1] == "error"
    assert row.endswith(
        "Tensor parallelism splits attention heads across ranks.  [model.n_heads, distributed.tp, model.n_kv_heads]"
    )
    assert "specforge" not in lines
    assert run(capsys, "rules", "nope")[0] == 2


def test_explain_prints_doc_example_output_and_fix(capsys):
    code, out, _ = run(capsys, "explain", "tp-divides-heads")
    assert code == 0
    assert out.startswith(
        "tp-divides-heads (error, family kempnerforge)\npaths: model.n_heads, distributed.tp, model.n_kv_heads\n\n"
        "Tensor parallelism splits attention heads across ranks.\n"
    )
    assert (
        "    $ trainspec check example.toml\n    example.toml:6:1: error[tp-divides-heads] distributed.tp = 3 "
        "must divide model.n_heads = 32 and model.n_kv_heads = 8 (tensor parallelism splits the heads across "
        "ranks); distributed.tp values that pass: 1, 2, 4 or 8\n" in out
    )
    assert "Fix (example.toml):\n\n    [model]\n" in out and out.rstrip().endswith("tp = 4")


def test_explain_unknown_rule_suggests(capsys):
    code, _, err = run(capsys, "explain", "tp-divides-head")
    assert code == 2 and "did you mean tp-divides-heads" in err


CATALOGUE = catalogue()


@pytest.mark.parametrize("info", CATALOGUE, ids=[f"{i.family}:{i.id}" for i in CATALOGUE])
def test_every_rule_has_an_explanation(capsys, info):
    assert info.summary.strip() and info.doc.strip()
    code, out, _ = run(capsys, "explain", info.id)
    assert code == 0 and info.doc.strip() in out


RUNNABLE = [i for i in CATALOGUE if i.id not in TESTED_ELSEWHERE]
VERSIONED = [
    (family.id, info)
    for family in sorted(every_version().values(), key=lambda f: f.id)
    for info in family_rules(family)
    if info.example is not None and family.version
]
"""Every family version's own rules, each checked as that version (`name@version`)."""


def test_only_ids_tested_elsewhere_lack_an_example():
    assert {i.id for i in CATALOGUE if i.example is None} == set(TESTED_ELSEWHERE)


@pytest.mark.parametrize(("family", "info"), VERSIONED, ids=[f"{f}:{i.id}" for f, i in VERSIONED])
def test_every_versions_examples_break_their_rule_as_that_version(family, info):
    bad = run_example(info.example, fixed=False, family=family)
    assert info.id in {d.rule for d in bad}, bad
    good = run_example(info.example, fixed=True, family=family)
    assert not [d for d in good if d.rule == info.id or d.severity is not Severity.NOTE], good


@pytest.mark.parametrize("info", RUNNABLE, ids=[f"{i.family}:{i.id}" for i in RUNNABLE])
def test_every_example_breaks_its_rule_and_the_fix_clears_it(info):
    assert info.example is not None, f"{info.family} rule {info.id} has no example (add it to the family's `examples`)"
    bad = run_example(info.example, fixed=False)
    assert info.id in {d.rule for d in bad}, bad
    assert {d.severity for d in bad if d.rule == info.id} == {info.severity}, "reported as the catalogue says"
    good = run_example(info.example, fixed=True)
    assert not [d for d in good if d.rule == info.id or d.severity is not Severity.NOTE], good


def test_pattern_mismatch_without_a_rule_id(tmp_path):
    schema = tmp_path / "tiny.schema.json"
    schema.write_text(
        json.dumps(
            {
                "type": "object",
                "additionalProperties": False,
                "properties": {"run_id": {"type": "string", "pattern": "^[a-z0-9-]+$", "description": "Run name."}},
            }
        )
    )
    family = Family(name="tiny", schema_file=schema, model="tiny:Model", formats=frozenset({"yaml"}))
    (tmp_path / "bad.yaml").write_text("run_id: My Run\n")
    (tmp_path / "good.yaml").write_text("run_id: my-run\n")
    assert [d.rule for d in check(tmp_path / "bad.yaml", family=family)] == ["pattern-mismatch"]
    assert check(tmp_path / "good.yaml", family=family) == []


def test_engine_ids_are_documented_once():
    ids = [r.id for r in engine_rules()]
    assert len(ids) == len(set(ids))
    assert all(r.family == "engine" for r in engine_rules())


def test_a_world_size_prefix_suppression_is_not_called_unused_without_a_world_size(tmp_path, capsys):
    from trainspec.cli import main

    path = tmp_path / "job.toml"
    path.write_text("[distributed]\ndp_shard = 3  # trainspec: ignore[world-size]\n")
    assert main(["check", str(path)]) == 0
    assert "unused-suppression" not in capsys.readouterr().out
    assert main(["check", str(path), "--world-size", "4"]) == 0  # suppressed
    assert "world-size-product" not in capsys.readouterr().out


def test_a_directive_inside_a_string_is_not_a_suppression_and_blank_lines_are_skipped():
    text = (
        'name = "x # trainspec: ignore[model-heads-divide-dim]"\n'
        "# trainspec: ignore[tp-divides-heads]\n\n"
        "n_heads = 30\n"
    )
    (only,) = find(text, "#")
    assert (only.comment_line, only.target_line, only.ids) == (2, 4, ("tp-divides-heads",))
    (plain,) = find("note: don't panic  # trainspec: ignore[unknown-key]\n", "#")
    assert plain.ids == ("unknown-key",)
