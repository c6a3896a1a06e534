"""`check --sweep`: one process checks every combination, and each variant says what checking it alone says."""

from __future__ import annotations

import json
import random

import pytest

from trainspec.cli import main
from trainspec.engine.runner import Options, check_file
from trainspec.engine.sweeper import Axis, SweepError, parse_axis, sweep
from trainspec.spec.diagnostics import Diagnostic

from .conftest import ROOT

EXAMPLE_7B = ROOT / "examples" / "kempnerforge_7b_12gpu.toml"
SPECFORGE = ROOT / "examples" / "specforge_qwen3_8b_dflash.yaml"
AXES = (
    "optimizer.lr=1e-4,3e-4,1e-3,0,-1,3e-3,1e-2,3e-2,0.1,0.3",
    "train.seq_len=512,1024,2048,4096,8192,16384,2.5,4096.0,[1],null",
    "distributed.tp=1,2,3,4,6,8,12,16,0,-1",
)


def alone(file, assignments, fixed=(), sizes=(), **options):
    """The variant checked on its own, as `trainspec check FILE --set ... --world-size ...` does."""
    sets = (*fixed, *(f"{path}={value}" for path, value in assignments))
    # a sweep leaves the nearest-layout search of each failing variant to `trainspec plan`
    result = check_file(str(file), Options(overrides=sets, world_sizes=sizes, layout_hints=False, **options))
    return sorted(result.diagnostics, key=Diagnostic.sort_key)


def test_a_thousand_variants_fail_exactly_as_each_alone():
    found = sweep(EXAMPLE_7B, AXES, overrides=["distributed.dp_shard=-1"], world_size=(12, 16, 64))
    assert len(found.variants) == 1000
    assert 0 < len(found.failing) < 1000
    for variant in random.Random(7).sample(found.variants, 40):
        expected = alone(EXAMPLE_7B, variant.assignments, ("distributed.dp_shard=-1",), (12, 16, 64))
        assert sorted(variant.result.diagnostics, key=Diagnostic.sort_key) == expected, variant.assignments


def test_select_ignore_and_warnings_as_errors_apply_to_each_variant(write):
    path = write("job.toml", EXAMPLE_7B.read_text().replace("tp = 4", "tp = 4  # trainspec: ignore[tp-divides]"))
    axes = ["distributed.tp=3,4,16", "model.num_experts=0,8"]
    options = {"ignore": ("value-domain",), "warnings_as_errors": True}
    found = sweep(path, axes, world_size=(12,), **options)
    for variant in found.variants:
        assert sorted(variant.result.diagnostics, key=Diagnostic.sort_key) == alone(
            path, variant.assignments, sizes=(12,), **options
        )


def test_specforge_variants_match_their_own_loader_reading():
    axes = ["deployment.trainer.nproc_per_node=1,2,4,8", "training.batch_size=1,2,null", "training.role=auto,all"]
    found = sweep(SPECFORGE, axes)
    assert found.failing and len(found.failing) < len(found.variants)
    for variant in found.variants:
        assert sorted(variant.result.diagnostics, key=Diagnostic.sort_key) == alone(SPECFORGE, variant.assignments)


def test_a_vlm_arch_sweep_is_judged_with_the_files_arch(write):
    path = write("vlm.toml", (ROOT / "tests/corpus/kempnerforge/train/vlm_7b.toml").read_text())
    found = sweep(path, ["vlm.arch=joint_decoder,cross_attention,mot"])
    for variant in found.variants:
        assert sorted(variant.result.diagnostics, key=Diagnostic.sort_key) == alone(path, variant.assignments)


def test_values_keep_their_commas_inside_brackets_and_quotes():
    assert parse_axis("optimizer.betas=[0.9,0.95], [0.8,0.9]") == Axis("optimizer.betas", ("[0.9,0.95]", "[0.8,0.9]"))
    assert parse_axis('checkpoint.dir="a,b",c') == Axis("checkpoint.dir", ('"a,b"', "c"))
    for bad in ("optimizer.lr", "=1,2", "optimizer.lr=1,,2"):
        with pytest.raises(SweepError):
            parse_axis(bad)


def test_text_lists_the_failing_variants_and_a_summary(capsys):
    code = main(["check", str(EXAMPLE_7B), "--world-size", "12", "--sweep", "distributed.tp=1,4,5", "--sweep",
                 "train.batch_size=2,4"])  # fmt: skip
    out = capsys.readouterr().out.splitlines()
    assert code == 1
    assert out[-1] == "4 of 6 variants fail (at world size 12)"
    failing = [line for line in out if not line.startswith("  ")][:-1]
    assert failing == [
        f"{EXAMPLE_7B} [distributed.tp={tp} train.batch_size={b}]" for tp in (1, 5) for b in (2, 4)
    ]  # tp 4 is the file's own, passing layout at 12; tp 1 needs dp_shard 12, tp 5 divides nothing


def test_json_lists_every_variant(capsys):
    code = main(["check", str(EXAMPLE_7B), "--world-size", "12", "--format", "json", "--sweep", "distributed.tp=1,4"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1
    assert [v["ok"] for v in doc["variants"]] == [False, True]
    assert doc["variants"][0]["assignments"] == [{"path": "distributed.tp", "value": "1"}]
    assert doc["summary"] == {"variants": 2, "failing": 1}
    assert any(d["rule"] == "world-size-product" for d in doc["variants"][0]["diagnostics"])


def test_a_clean_sweep_exits_0(capsys):
    assert main(["check", str(EXAMPLE_7B), "--world-size", "12", "--sweep", "optimizer.lr=1e-4,2e-4"]) == 0
    assert capsys.readouterr().out.strip() == "0 of 2 variants fail (at world size 12)"


def test_a_sweep_checks_the_command_line_sizes_not_the_project_ones(capsys, monkeypatch):
    monkeypatch.chdir(EXAMPLE_7B.parent.parent)  # the repository's pyproject.toml gives the example 12
    file = "examples/kempnerforge_7b_12gpu.toml"
    assert main(["check", file, "--world-size", "8,16,64", "--sweep", "optimizer.lr=1e-4,3e-4"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "2 of 2 variants fail (a variant fails if it fails at any of the world sizes 8, 16, 64)"
    main(["check", file, "--world-size", "8,16,64", "--sweep", "optimizer.lr=1e-4", "--format", "json"])
    assert json.loads(capsys.readouterr().out)["world_sizes"] == [8, 16, 64]
    assert main(["check", file, "--sweep", "optimizer.lr=1e-4"]) == 0
    assert capsys.readouterr().out.strip() == "0 of 1 variant fails (at world size 12)"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--sweep", "optimizer.lr"], "PATH=V1,V2"),
        (["--sweep", "optimizer.lr=1", "--format", "sarif"], "text or json"),
        ([str(SPECFORGE), "--sweep", "optimizer.lr=1"], "one config file"),
    ],
)
def test_usage_problems_exit_2(capsys, args, message):
    try:
        code = main(["check", str(EXAMPLE_7B), *args])
    except SystemExit as stopped:
        code = stopped.code
    assert code == 2
    assert message in capsys.readouterr().err


def test_an_unreadable_file_is_reported_once(capsys, tmp_path):
    assert main(["check", str(tmp_path / "nope.toml"), "--sweep", "optimizer.lr=1,2"]) == 2
    assert "file-not-found" in capsys.readouterr().out


def test_the_command_line_sweep_agrees_with_check_variant_by_variant(capsys):
    common = [str(EXAMPLE_7B), "--world-size", "12,16", "--format", "json", "--set", "distributed.dp_shard=-1"]
    assert main(["check", *common, "--sweep", "distributed.tp=3,4", "--sweep", "train.seq_len=4096,9000"]) == 1
    variants = json.loads(capsys.readouterr().out)["variants"]
    for variant in variants:
        sets = [a for item in variant["assignments"] for a in ("--set", f"{item['path']}={item['value']}")]
        main(["check", *common, *sets])
        alone = [d for d in json.loads(capsys.readouterr().out)["diagnostics"] if d["severity"] != "note"]
        assert variant["diagnostics"] == alone
        assert variant["ok"] == (not any(d["severity"] == "error" for d in alone))


def test_one_string_is_one_axis_and_one_override():
    found = sweep(EXAMPLE_7B, "distributed.tp=2,4", overrides="train.batch_size=2", world_size=12)
    assert found.axes == (Axis("distributed.tp", ("2", "4")),)
    assert [v.ok for v in found.variants] == [False, True]
    assert all(v.result.config is None for v in found.variants)  # results as `check` reports them
    listed = sweep(EXAMPLE_7B, ["distributed.tp=2,4"], overrides=["train.batch_size=2"], world_size=12)
    assert [v.result.diagnostics for v in found.variants] == [v.result.diagnostics for v in listed.variants]


def test_a_path_swept_twice_is_refused():
    with pytest.raises(SweepError, match=r"`distributed\.tp` is swept twice"):
        sweep(EXAMPLE_7B, ["distributed.tp=4", "distributed.tp=1,2"])


DEBUG = ROOT / "tests" / "corpus" / "kempnerforge" / "train" / "debug.toml"  # dp_shard = -1


def test_at_several_world_sizes_a_variant_fails_if_it_fails_at_any_and_says_where_it_passes(capsys):
    args = ["check", str(DEBUG), "--world-size", "4,6,8", "--sweep", "distributed.tp=1,4", "--format", "json"]
    assert main(args) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["world_sizes"] == [4, 6, 8]
    by_tp = {v["assignments"][0]["value"]: v for v in out["variants"]}
    assert by_tp["1"]["ok"] and by_tp["1"]["passes_at_world_sizes"] == [4, 6, 8]
    assert not by_tp["4"]["ok"] and by_tp["4"]["passes_at_world_sizes"] == [4, 8]  # 6 is not divisible by 4
    assert main(args[:-2]) == 1
    text = capsys.readouterr().out
    assert "passes only at world sizes 4, 8" in text
    assert "1 of 2 variants fail (a variant fails if it fails at any of the world sizes 4, 6, 8)" in text


def test_an_error_of_no_particular_size_fails_every_size():
    found = sweep(DEBUG, "distributed.tp=3", world_size=[4, 6])  # tp does not divide 4 heads
    (variant,) = found.variants
    assert not variant.ok and found.passes_at(variant) == ()
