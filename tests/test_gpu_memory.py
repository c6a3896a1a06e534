"""`--gpu-memory`: the family's memory estimate as a check, and `plan` keeping the layouts that fit."""

from __future__ import annotations

import json

import pytest

from trainspec.cli import main
from trainspec.layouts.planner import plan
from trainspec.spec.layout_space import parse_size

from .conftest import ROOT

SEVEN_B = ROOT / "tests" / "corpus" / "kempnerforge" / "train" / "7b.toml"  # about 87 GiB per rank at 8 GPUs
EXAMPLE = ROOT / "examples" / "kempnerforge_7b_12gpu.toml"
GiB = 2**30


@pytest.mark.parametrize(
    ("text", "size"),
    [("80GiB", 80 * GiB), ("141GB", 141 * 10**9), ("1.5 TiB", int(1.5 * 2**40)), ("1024", 1024), (" 2mib ", 2 * 2**20)],
)
def test_sizes(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize(
    "text", ["", "eighty GiB", "80 GiBs", "0GiB", "-1GB", "0.5", "9" * 400, "\u00b2GB", "\u0668GB"]
)
def test_not_sizes(text):
    with pytest.raises(ValueError):
        parse_size(text)


def test_an_estimate_above_the_gpu_is_an_error_naming_the_largest_part(capsys):
    assert main(["check", str(SEVEN_B), "--world-size", "8", "--gpu-memory", "64GiB"]) == 1
    out = capsys.readouterr().out
    assert "error[gpu-memory-exceeded]" in out and "exceeds --gpu-memory 64.0 GiB" in out
    assert "the largest part is memory_grad_accumulation" in out and "dp_shard=8 (FSDP)" in out
    assert main(["check", str(SEVEN_B), "--world-size", "8", "--gpu-memory", "96GiB"]) == 0


def test_without_a_world_size_memory_is_not_judged_and_a_note_says_so(capsys):
    assert main(["check", str(SEVEN_B), "--gpu-memory", "1GiB"]) == 0
    assert "note[world-size-unknown] --gpu-memory not checked" in capsys.readouterr().out


def test_a_memory_model_that_fails_is_reported_not_passed_over(capsys, monkeypatch):
    from dataclasses import replace

    from trainspec import families

    def broken(config, world_size):
        raise ZeroDivisionError("no layout")

    family = families.get_family("kempnerforge")
    monkeypatch.setitem(families.every_version(), family.id, replace(family, memory=broken))
    code = main(["check", str(SEVEN_B), "--family", family.id, "--world-size", "8", "--gpu-memory", "80GiB"])
    out = capsys.readouterr().out
    assert code == 1 and "error[hook-failed] the memory estimate of family kempnerforge failed" in out


def test_several_world_sizes_say_which_one_does_not_fit(capsys):
    assert main(["check", str(SEVEN_B), "--world-size", "8,64", "--gpu-memory", "64GiB"]) == 1
    out = capsys.readouterr().out
    assert "at world size 8: the estimated memory" in out and "at world size 64: the estimated" in out


def test_the_project_configuration_sets_it(tmp_path, capsys):
    (tmp_path / "job.toml").write_text(SEVEN_B.read_text())
    (tmp_path / ".trainspec.toml").write_text('gpu-memory = "64GiB"\n')
    assert main(["check", str(tmp_path / "job.toml"), "--world-size", "8"]) == 1
    assert "gpu-memory-exceeded" in capsys.readouterr().out
    assert main(["check", str(tmp_path / "job.toml"), "--world-size", "8", "--gpu-memory", "96GiB"]) == 0


def test_an_unreadable_project_setting_is_a_located_usage_error(tmp_path, capsys):
    (tmp_path / "job.toml").write_text(SEVEN_B.read_text())
    (tmp_path / ".trainspec.toml").write_text('gpu-memory = "eighty"\n')
    assert main(["check", str(tmp_path / "job.toml"), "--world-size", "8"]) == 2


def test_plan_keeps_what_fits_and_ranks_by_headroom():
    (everything,) = plan(EXAMPLE, 16, gpus_per_node=4)
    (fitting,) = plan(EXAMPLE, 16, gpus_per_node=4, gpu_memory=30 * GiB)
    assert 0 < len(fitting.layouts) < len(everything.layouts)
    memory = [layout.memory for layout in fitting.layouts]
    assert all(m is not None and m <= 30 * GiB for m in memory)
    assert memory == sorted(memory)  # the most headroom first
    assert fitting.ruled_out["gpu-memory-exceeded"] == len(everything.layouts) - len(fitting.layouts)


def test_plan_output_shows_the_estimate(capsys):
    assert main(["plan", str(EXAMPLE), "--gpus", "16", "--gpu-memory", "30GiB", "--format", "json"]) == 0
    layouts = json.loads(capsys.readouterr().out)["plans"][0]["layouts"]
    assert all(layout["memory_per_rank"] <= 30 * GiB for layout in layouts)
    assert main(["plan", str(EXAMPLE), "--gpus", "16", "--gpu-memory", "30GiB"]) == 0
    out = capsys.readouterr().out
    assert "ranked by: the most memory left under --gpu-memory" in out and "GiB per rank)" in out
