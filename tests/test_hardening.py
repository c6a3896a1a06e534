"""Hostile inputs and arguments: every one ends in a located diagnostic and an exit code, never a traceback."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import warnings

import pytest

import trainspec
from trainspec.api import check_config
from trainspec.cli import main
from trainspec.spec.document import Document
from trainspec.spec.overrides import Override, apply_overrides
from trainspec.spec.schema import Schema
from trainspec.spec.schema_walk import build_validator
from trainspec.spec.wording import show
from trainspec.validate.explain import findings

from .conftest import ROOT

KF_EXAMPLE = ROOT / "examples" / "tiny_kempnerforge.toml"
SF_EXAMPLE = ROOT / "examples" / "specforge_qwen3_8b_dflash.yaml"
HUGE = "1" * 4301
"""One digit more than Python reads or writes (sys.get_int_max_str_digits())."""
TOO_MANY_DIGITS = "this integer has too many digits (more than 4,300 in decimal"


def run(capsys, *args: str) -> tuple[int, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out


def lines_with(out: str, text: str) -> list[str]:
    return [line for line in out.splitlines() if text in line]


# -- 1: a discriminator that is not text ---------------------------------------------------------


@pytest.mark.parametrize("value", ["[]", "{}", '["mot"]', "5"])
def test_a_discriminator_of_another_type_is_a_type_error_at_its_line(capsys, write, value):
    path = write("vlm.toml", f"[vlm]\narch = {value}\n")
    code, out = run(capsys, "check", str(path))
    assert code == 1
    (line,) = lines_with(out, "vlm.arch")
    assert line.startswith(f"{path}:2:8: error[wrong-type] `vlm.arch` must be a string")
    assert '(one of "joint_decoder", "cross_attention", "mot", "moma")' in line


def test_a_discriminator_of_another_type_fails_load_and_check_config_with_diagnostics(write):
    path = write("vlm.toml", "[vlm]\narch = []\n")
    with pytest.raises(trainspec.ConfigError) as exc:
        trainspec.load(path)
    assert [(d.line, d.rule) for d in exc.value.diagnostics if d.config_path == "vlm.arch"] == [(2, "wrong-type")]
    found = check_config({"vlm": {"arch": {}}}, "kempnerforge")
    assert [d.rule for d in found if d.config_path == "vlm.arch"] == ["wrong-type"]


# -- 2: integers longer than Python reads --------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text", "line", "column"),
    [
        ("big.toml", f"[model]\ndim = {HUGE}\n", 2, 7),
        ("neg.toml", f"[model]\n# {HUGE}\nname = '{HUGE}'\ndim = -{HUGE}\n", 4, 7),
        ("underscores.toml", "[model]\ndim = " + "1_" * 4300 + "1\n", 2, 7),
        ("hex.toml", "[model]\ndim = 0x" + "f" * 4000 + "\n", 2, 7),
        ("big.yaml", f"model:\n  dim: {HUGE}\n", 2, 8),
        ("hex.yaml", "model:\n  dim: 0x" + "f" * 4000 + "\n", 2, 8),
        ("tagged.yaml", f"model:\n  dim: !!int {HUGE}\n", 2, 8),
        ("big.json", f'{{"model": {{"name": "{HUGE}",\n "dim": {HUGE}}}}}', 2, 9),
    ],
)
def test_an_integer_with_too_many_digits_is_a_located_syntax_error(capsys, write, name, text, line, column):
    path = write(name, text)
    family = "kempnerforge" if name.endswith(".toml") else "specforge"  # the family that reads the format
    code, out = run(capsys, "check", str(path), "--family", family)
    assert code == 1
    assert f"{path}:{line}:{column}: error[syntax-error] {TOO_MANY_DIGITS}" in out, out[:300]


@pytest.mark.parametrize(
    "override",
    [f"--set=model.dim={HUGE}", f"--model.dim={HUGE}", "--model.dim=0x" + "f" * 4000, f"--model.dim=-{HUGE}"],
)
def test_an_override_with_too_many_digits_is_an_invalid_value(capsys, override):
    code, out = run(capsys, "check", str(KF_EXAMPLE), override)
    assert code == 1
    (line,) = lines_with(out, "error[")
    assert f"error[override-invalid-value] `model.dim`: {TOO_MANY_DIGITS}" in line


def test_a_file_with_too_many_digits_does_not_stop_a_directory_run(tmp_path):
    for n in range(30):
        shutil.copy(KF_EXAMPLE, tmp_path / f"job{n:02}.toml")
    bad = tmp_path / "job17.toml"
    bad.write_text(KF_EXAMPLE.read_text().replace("dim = 64", f"dim = {HUGE}"))
    proc = subprocess.run(
        [sys.executable, "-m", "trainspec", "check", str(tmp_path), "--jobs", "2", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    found = json.loads(proc.stdout)["diagnostics"]
    assert {d["file"] for d in found} == {str(tmp_path / f"job{n:02}.toml") for n in range(30)}
    (error,) = [d for d in found if d["severity"] == "error"]
    assert (error["file"], error["line"], error["column"], error["rule"]) == (str(bad), 5, 7, "syntax-error")


def test_values_too_long_to_write_are_shown_not_raised():
    assert show(10**5000) == show([1, {"a": 10**5000}]) == "(a number too long to show)"
    assert show(10**4000) == "1" + "0" * 4000


def test_rule_messages_with_huge_computed_numbers_are_still_written(capsys, write):
    nines = "9" * 4300
    path = write("job.toml", f"[model]\ndim = 1{'0' * 400}1\nn_heads = 3\n[distributed]\ntp = {nines}\npp = {nines}\n")
    code, out = run(capsys, "check", str(path), "--world-size", "8")
    assert code == 1 and "failed on this config" not in out
    (heads,) = lines_with(out, "error[model-heads-divide-dim]")
    assert heads.endswith(f"(head_dim would be {'3' * 401} and a fraction)")
    assert "= (a number too long to show)" in lines_with(out, "error[world-size-auto-shard-divisible]")[0]


# -- 3: overrides through absent sections ----------------------------------------------------------


def test_set_through_an_absent_section_creates_it_and_checks_it(capsys):
    path = "deployment.disaggregated.managed_local.mooncake.metadata_port"
    code, out = run(capsys, "check", str(SF_EXAMPLE), "--set", f"{path}=1")
    assert code == 1
    origin = f"{SF_EXAMPLE}: override #1 (--set {path}=1): error[missing-key]"
    assert lines_with(out, "error[") == [
        f"{origin} `deployment.disaggregated.managed_local.capture_servers` is required but missing",
        f"{origin} `deployment.disaggregated.managed_local.trainer_cuda_visible_devices` is required but missing",
    ]


def test_set_inside_a_list_or_scalar_the_file_wrote_is_refused(capsys, write):
    path = write("job.toml", "model = [1, 2]\n[data]\ndatasets = [1]\n")
    code, out = run(capsys, "check", str(path), "--set", "model.dim=8", "--set", "data.datasets[0].path=x")
    assert code == 1
    assert "error[override-unknown-path] `model` is [1, 2] in the file, not a table" in out
    assert "error[override-unknown-path] `data.datasets[0]` is 1 in the file, not a table" in out


def test_removing_a_key_of_an_absent_section_creates_nothing():
    schema = Schema(
        {"type": "object", "properties": {"sec": {"type": "object", "properties": {"x": {"type": "integer"}}}}}
    )
    doc = Document("f.yaml", "yaml", "", {}, dict)
    assert apply_overrides(doc, [Override(1, "sec.x=null")], schema) == []
    assert doc.data == {}


@pytest.mark.parametrize("value", ["1j", "{1,2}", "b'x'", "[1j]", "'\\]'"])
def test_python_literals_that_are_not_config_values_are_read_as_text(capsys, value):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code, out = run(capsys, "check", str(KF_EXAMPLE), f"--model.dim={value}")
    assert code == 1 and not caught  # not even Python's warnings about the text as source
    (line,) = lines_with(out, "error[")
    assert "error[wrong-type] `model.dim` must be an integer" in line


# -- 10: a KempnerForge override with a space in it --------------------------------------------------


def test_a_kempnerforge_override_with_a_space_is_an_override(capsys):
    code, out = run(capsys, "check", str(KF_EXAMPLE), "--optimizer.betas=(0.9, 0.95)")
    assert "file-not-found" not in out and code == 0
    code, out = run(capsys, "check", str(KF_EXAMPLE), "--optimizer.betas=(0.9, 1.5)")
    assert code == 1 and "override #1 (--optimizer.betas=(0.9, 1.5)): error[betas-range]" in out


# -- 11: conditions in messages ---------------------------------------------------------------------


def test_a_conditional_requirement_names_its_condition(capsys, write):
    path = write("run.yaml", SF_EXAMPLE.read_text().replace("  mode: disaggregated\n", ""))
    code, out = run(capsys, "check", str(path))
    assert code == 1
    (line,) = lines_with(out, "error[")
    assert line == (
        f"{path}:35:3: error[deployment-disaggregated-needs-mode] `deployment.mode` is required when "
        "`deployment.disaggregated` is a table/mapping but missing"
    )


def test_a_condition_that_cannot_be_worded_is_left_out_never_empty():
    schema = Schema(
        {
            "type": "object",
            "properties": {"a": {}, "b": {}},
            "if": {"properties": {"a": {"not": {"const": 1}}}},
            "then": {"required": ["b"]},
        }
    )
    (found,) = findings(schema, build_validator(schema), {"a": 2})
    assert found.message == "`b` is required but missing"


# -- what the fuzz found -----------------------------------------------------------------------------


def test_every_problem_of_a_section_that_may_be_null_is_reported_once(capsys):
    dis = "deployment.disaggregated"
    code, out = run(
        capsys,
        "check",
        str(SF_EXAMPLE),
        "--set",
        f"{dis}.consumer_state_dir=' x'",
        "--set",
        f"{dis}.managed_local.mooncake.metrics_port=[]",
    )
    assert code == 1 and "failed on this config" not in out
    assert [line.split("error[")[1].split("]")[0] for line in lines_with(out, "error[")] == [
        "disaggregated-consumer-state-dir-shape",
        "missing-key",
        "missing-key",
        "wrong-type",
    ]


def test_a_section_whose_tag_names_no_variant_still_reports_what_every_variant_rejects(capsys, write):
    path = write("vlm.toml", '[vision_encoder]\n[vlm]\narch = "perceiver"\nfreeze_schedule = 5\nmax_text_len = "x"\n')
    code, out = run(capsys, "check", str(path))
    assert code == 1 and "failed on this config" not in out
    assert [line.split(" `")[0] for line in lines_with(out, "error[")] == [
        f"{path}:3:8: error[vlm-arch-registered]",
        f"{path}:4:19: error[wrong-type]",
        f"{path}:5:16: error[wrong-type]",
    ]


# -- found after the audit ---------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["", "a.b", "x[0]", 'q"uote', "[", "plain"])
def test_a_map_key_of_any_text_is_a_path_that_reads_back(capsys, write, key):
    from trainspec.spec.paths import format_path, parse_path

    path = ("data", "anneal_weights", key)
    assert parse_path(format_path(path)) == path
    config = write("job.toml", f"[data.anneal_weights]\n{json.dumps(key)} = -1.0\n")
    code, out = run(capsys, "check", str(config), "--world-size", "1")
    assert code == 0 and "internal-error" not in out
    assert f"{config}:2:1: warning[value-domain] {format_path(path)} = -1.0 is negative" in out


def test_huge_numbers_in_memory_and_in_rules_are_reported_not_raised(write, capsys):
    (d, *_) = check_config({"model": {"dim": -(10**5000)}}, "kempnerforge")
    assert (d.rule, d.config_path) == ("out-of-range", "model.dim") and "too many digits" in d.message
    config = write("job.toml", f"[train]\nmax_steps = {'9' * 400}\n")
    _code, out = run(capsys, "check", str(config), "--world-size", "1")
    assert "internal-error" not in out and "failed on this config" not in out
