"""`trainspec plan`: the layouts it lists check clean, and no layout that checks clean is missing."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import pytest

from trainspec import Family
from trainspec.cli import main
from trainspec.engine.checker import check_document
from trainspec.engine.pipeline import check_path
from trainspec.families import get_family
from trainspec.layouts.planner import PlanError, nearest, plan
from trainspec.read.files import parse
from trainspec.spec.overrides import Override

from .conftest import ROOT

EXAMPLE_7B = ROOT / "examples" / "kempnerforge_7b_12gpu.toml"
DEGREES = ("dp_replicate", "dp_shard", "tp", "pp", "cp", "ep")

SMALL_DENSE = """\
[model]
dim = 64
n_layers = 2
n_heads = 4
n_kv_heads = 2
vocab_size = 256
max_seq_len = 32
tie_embeddings = true
"""
SMALL_MOE = """\
[model]
dim = 64
n_layers = 2
n_heads = 6
n_kv_heads = 3
vocab_size = 256
num_experts = 2
[train]
compile_model = false
"""


@pytest.mark.parametrize("gpus", [12, 16, 64])
def test_every_layout_of_the_7b_example_checks_clean(gpus):
    (found,) = plan(EXAMPLE_7B, gpus, gpus_per_node=4)
    assert found.layouts
    for layout in found.layouts:
        result = check_path(EXAMPLE_7B, overrides=layout.overrides, world_size=gpus)
        errors = [d.one_line() for d in result.diagnostics if d.is_error]
        assert not errors, (layout.overrides, errors)
        degrees = result.config["distributed"]
        assert math.prod(degrees[d] for d in DEGREES if d != "dp_shard") * degrees["dp_shard"] == gpus


def _clean_layouts(text: str, size: int, values: range | list[int]) -> set[tuple[int, ...]]:
    """Brute force: every degree assignment (dp_shard also -1) that checks without an error, resolved."""
    family = get_family("kempnerforge")
    doc = parse("small.toml", text)
    clean = set()
    for degrees in itertools.product(values, [-1, *values], values, values, values, values):
        overrides = [
            Override(n, f"distributed.{d}={v}") for n, (d, v) in enumerate(zip(DEGREES, degrees, strict=True), 1)
        ]
        result = check_document(doc.snapshot(), family, overrides, (size,))
        if result.ok:
            dp_replicate, dp_shard, *rest = degrees
            if dp_shard == -1:
                dp_shard = size // (dp_replicate * math.prod(rest))
            clean.add((dp_replicate, dp_shard, *rest))
    return clean


@pytest.mark.parametrize("text", [SMALL_DENSE, SMALL_MOE], ids=["dense-tied", "moe"])
@pytest.mark.parametrize("size", [1, 2, 3, 4])
def test_plan_lists_exactly_the_layouts_that_check_clean(write, text, size):
    # every degree from 1 to the world size; at 4 only its divisors (a 3 cannot be part of a product of 4)
    values = range(1, size + 1) if size <= 3 else [1, 2, 4]
    path = write("small.toml", text)
    (found,) = plan(path, size)
    listed = {tuple(layout.values[f"distributed.{d}"] for d in DEGREES) for layout in found.layouts}
    assert listed == _clean_layouts(text, size, values)
    assert len(listed) == len(found.layouts)


def test_ranking_keeps_tensor_parallel_within_a_node_and_the_file_first():
    (at12,) = plan(EXAMPLE_7B, 12, gpus_per_node=4)
    assert at12.layouts[0].overrides == ()  # the file's own layout passes and is the best ranked
    (at16,) = plan(EXAMPLE_7B, 16, gpus_per_node=2)
    tps = [layout.values["distributed.tp"] for layout in at16.layouts]
    first_across = next(i for i, tp in enumerate(tps) if 2 % tp)
    assert all(2 % tp == 0 for tp in tps[:first_across]) and all(2 % tp for tp in tps[first_across:])
    pps = [layout.values["distributed.pp"] for layout in at16.layouts[:first_across]]
    assert pps == sorted(pps)


def test_the_nearest_layout_changes_the_fewest_degrees(capsys):
    (found,) = plan(EXAMPLE_7B, 64, gpus_per_node=8)
    best = nearest(found)
    assert best is not None and best.overrides == ("distributed.dp_shard=16",)
    assert min(len(layout.overrides) for layout in found.layouts) == 1
    assert main(["plan", str(EXAMPLE_7B), "--gpus", "64", "--gpus-per-node", "8", "--format", "json"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)["plans"]
    assert listed["layouts"][listed["nearest"] - 1]["overrides"] == ["distributed.dp_shard=16"]


def test_an_auto_shard_file_needs_no_dp_shard_override(write):
    path = write("auto.toml", SMALL_DENSE + "[distributed]\ndp_shard = -1\n")
    (found,) = plan(path, 4)
    assert not any(o.startswith("distributed.dp_shard=") for layout in found.layouts for o in layout.overrides)
    for layout in found.layouts:
        assert check_path(path, overrides=layout.overrides, world_size=4).ok


def test_errors_no_layout_changes_block_the_plan(capsys):
    code = main(["plan", str(ROOT / "examples" / "broken_kempnerforge.toml"), "--gpus", "8"])
    out = capsys.readouterr().out
    assert code == 1
    assert "model-heads-divide-dim" in out and "fix them first" in out
    lines = [line.split(": error[")[0].rsplit(":", 2)[1] for line in out.splitlines() if ": error[" in line]
    assert lines == sorted(lines, key=int) and len(lines) == 2  # in line order, as `check` lists them


def test_json_lists_every_layout_with_its_overrides(capsys):
    assert main(["plan", str(EXAMPLE_7B), "--gpus", "12,16", "--gpus-per-node", "4", "--format", "json"]) == 0
    plans = json.loads(capsys.readouterr().out)["plans"]
    assert [p["world_size"] for p in plans] == [12, 16]
    assert len(plans[0]["layouts"]) == len(plan(EXAMPLE_7B, 12)[0].layouts)
    assert plans[1]["layouts"][0]["overrides"] == ["distributed.dp_shard=4"]


def test_text_prints_each_layout_as_set_overrides(capsys):
    assert main(["plan", str(EXAMPLE_7B), "--gpus", "16", "--gpus-per-node", "4"]) == 0
    out = capsys.readouterr().out
    assert "1. dp_replicate=1 dp_shard=4 tp=4 pp=1 cp=1 ep=1   --set distributed.dp_shard=4" in out


def test_specforge_layouts_check_clean():
    path = ROOT / "examples" / "specforge_qwen3_8b_dflash.yaml"
    address = ("deployment.trainer.master_addr=10.0.0.1",)  # 8 GPUs at 4 per node take two nodes
    for found in plan(path, [4, 8], gpus_per_node=4, overrides=address):
        assert found.layouts
        for layout in found.layouts:
            assert layout.values["deployment.trainer.nproc_per_node"] <= 4
            assert check_path(path, overrides=(*address, *layout.overrides), world_size=found.world_size).ok


def test_specforge_never_starts_more_processes_on_a_node_than_it_has_gpus():
    path = ROOT / "examples" / "specforge_qwen3_8b_dflash.yaml"
    (found,) = plan(path, 64, gpus_per_node=4)
    assert not found.layouts  # 16 nodes need a master address
    assert found.ruled_out["more processes per node than --gpus-per-node"] > 0
    (found,) = plan(path, 64, gpus_per_node=4, overrides="deployment.trainer.master_addr=10.0.0.1")
    assert found.layouts[0].values["deployment.trainer.nnodes"] == 16
    assert all(layout.values["deployment.trainer.nproc_per_node"] <= 4 for layout in found.layouts)


def test_a_family_without_a_layout_says_so(tmp_path: Path, capsys):
    schema = tmp_path / "tiny.schema.json"
    schema.write_text(json.dumps({"type": "object", "properties": {"steps": {"type": "integer"}}}))
    config = tmp_path / "run.yaml"
    config.write_text("steps: 2\n")
    fam = Family(name="tiny", schema_file=schema, model="tiny:Model", formats=frozenset({"yaml"}))
    with pytest.raises(PlanError, match="declares no parallel layout"):
        plan(config, 8, family=fam)


def test_usage_problems_exit_2(capsys, tmp_path):
    assert main(["plan", str(tmp_path / "nope.toml"), "--gpus", "8"]) == 2
    assert "cannot be planned" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stopped:
        main(["plan", str(EXAMPLE_7B), "--gpus", "0"])
    assert stopped.value.code == 2


def test_the_package_offers_plan_show_and_sweep():
    import trainspec

    (found,) = trainspec.plan(EXAMPLE_7B, 16, gpus_per_node=4)
    assert found.layouts[0].overrides == ("distributed.dp_shard=4",)
    shown = trainspec.show(EXAMPLE_7B, world_size=12)
    assert {q.name: q.value for q in shown.quantities}["data_parallel"] == 3
    swept = trainspec.sweep(EXAMPLE_7B, ["distributed.tp=2,4"], world_size=12)
    assert [v.ok for v in swept.variants] == [False, True]


def test_apply_writes_the_layout_and_keeps_every_other_line(write, capsys):
    original = EXAMPLE_7B.read_text()
    path = write("job.toml", original)
    assert main(["plan", str(path), "--gpus", "16", "--gpus-per-node", "4", "--apply", "2"]) == 0
    (second,) = [p.layouts[1] for p in plan(EXAMPLE_7B, 16, gpus_per_node=4)]
    changed = [(a, b) for a, b in zip(original.splitlines(), path.read_text().splitlines(), strict=True) if a != b]
    assert [b for _, b in changed] == [o.replace("distributed.", "").replace("=", " = ") for o in second.overrides]
    assert check_path(path, world_size=16).ok


def test_apply_adds_missing_keys_and_tables(write, capsys):
    text = "# tiny\n[model]\ndim = 64\nn_heads = 4\nn_kv_heads = 2  # two\n\n[train]\nseq_len = 32\n"
    path = write("tiny.toml", text)
    assert main(["plan", str(path), "--gpus", "4", "--apply", "3"]) == 0
    assert path.read_text().startswith(text)  # the file is kept; the layout is a new [distributed] table
    (found,) = plan(path, 4)
    (own,) = [layout for layout in found.layouts if not layout.overrides]  # the written layout is the file's own
    assert own.values["distributed.dp_replicate"] == 2
    inside = write("inside.toml", text.replace("[train]", "[distributed]\npp = 1\n\n[train]"))
    assert main(["plan", str(inside), "--gpus", "4", "--apply", "2"]) == 0
    assert "[distributed]\npp = 1\ntp = 2\n" in inside.read_text()


def test_apply_edits_yaml_in_place(write, capsys):
    original = (ROOT / "examples" / "specforge_qwen3_8b_dflash.yaml").read_text()
    path = write("run.yaml", original)
    assert main(["plan", str(path), "--gpus", "8", "--apply", "1"]) == 0
    assert path.read_text() == original.replace("nproc_per_node: 4", "nproc_per_node: 8")


def test_apply_refuses_what_it_cannot_do_and_writes_nothing(write, capsys):
    path = write("job.toml", EXAMPLE_7B.read_text())
    assert main(["plan", str(path), "--gpus", "16", "--apply", "1000"]) == 2
    with pytest.raises(SystemExit):
        main(["plan", str(path), "--gpus", "16,32", "--apply", "1"])
    broken = write("broken.toml", (ROOT / "examples" / "broken_kempnerforge.toml").read_text())
    assert main(["plan", str(broken), "--gpus", "8", "--apply", "1"]) == 1
    assert path.read_text() == EXAMPLE_7B.read_text()
    assert broken.read_text() == (ROOT / "examples" / "broken_kempnerforge.toml").read_text()


def test_when_nothing_passes_the_plan_says_which_rules_refused(capsys):
    path = ROOT / "tests" / "corpus" / "specforge" / "qwen3.6-27b-dflash-multiserver-disaggregated.yaml"
    (found,) = plan(path, 4)
    assert not found.layouts
    # 3 topologies (1×4, 2×2, 4×1) × 6 sequence-parallel pairs whose product divides 4: each refused once
    assert sum(found.ruled_out.values()) == 18
    assert "managed-trainer-devices-match-nproc" in found.ruled_out  # the file lists 2 trainer devices
    assert main(["plan", str(path), "--gpus", "4"]) == 1
    assert "the candidates fail" in capsys.readouterr().out


@pytest.mark.parametrize("size", [8, 16, 64])
def test_a_world_size_error_names_the_nearest_layout_and_it_passes(capsys, size):
    from trainspec.engine.runner import Options, check_file

    result = check_file(str(EXAMPLE_7B), Options(world_sizes=(size,)))
    [error] = [d for d in result.diagnostics if d.is_error]
    assert error.rule == "world-size-product"
    hint = error.message.split(f"; the nearest layout that passes at world size {size}: ", 1)[1]
    overrides = hint.split(", ")
    assert overrides and all(o.startswith("distributed.") for o in overrides)
    assert check_path(EXAMPLE_7B, overrides=overrides, world_size=size).ok
    assert len(overrides) == min(len(layout.overrides) for layout in plan(EXAMPLE_7B, size)[0].layouts)


def test_no_layout_hint_without_a_single_world_size():
    from trainspec.engine.runner import Options, check_file

    result = check_file(str(EXAMPLE_7B), Options(world_sizes=(8, 16)))
    assert all("nearest layout" not in d.message for d in result.diagnostics)


@pytest.mark.parametrize(
    ("sets", "layout"),
    [
        (["distributed.dp_shard=-1"], {"dp_shard": 2, "tp": 4, "pp": 1}),
        (["distributed.pp=2"], {"dp_shard": 1, "tp": 1, "pp": 8}),
    ],
)
def test_apply_writes_what_differs_from_the_file_not_from_the_sets(write, capsys, sets, layout):
    path = write("job.toml", EXAMPLE_7B.read_text())
    (found,) = plan(path, 8, overrides=sets)
    [rank] = [
        n
        for n, candidate in enumerate(found.layouts, 1)
        if all(candidate.values[f"distributed.{k}"] == v for k, v in layout.items())
        and candidate.values["distributed.cp"] == 1
        and candidate.values["distributed.dp_replicate"] == 1
    ]
    args = [a for s in sets for a in ("--set", s)]
    assert main(["plan", str(path), "--gpus", "8", *args, "--apply", str(rank)]) == 0
    assert "nothing to change" not in capsys.readouterr().out
    written = check_path(path, world_size=8)  # the file alone, without the --sets, runs at 8
    assert written.ok, [d.one_line() for d in written.diagnostics]
    assert {k: written.config["distributed"][k] for k in layout} == layout


def test_apply_verifies_with_the_sets_that_touch_no_layout_value(write, capsys):
    path = write("job.toml", EXAMPLE_7B.read_text())
    # a non-layout --set that breaks the run stays an override of the check after the rewrite
    assert main(["plan", str(path), "--gpus", "8", "--set", "train.seq_len=999999", "--apply", "1"]) == 1
    assert path.read_text() == EXAMPLE_7B.read_text()


def test_closest_to_the_file_is_counted_against_the_file(write):
    path = write("job.toml", EXAMPLE_7B.read_text())  # dp_shard=3 tp=4 pp=1
    (found,) = plan(path, 8, overrides=["distributed.tp=1", "distributed.pp=8"])
    # against the file with the sets, tp=1 pp=8 dp_shard=1 is one change; against the file, tp=4 dp_shard=2 is one
    assert nearest(found).values["distributed.tp"] == 4
    assert nearest(found).values["distributed.dp_shard"] == 2


def test_a_layout_the_sets_alone_select_is_not_called_the_file_as_it_is(capsys):
    assert main(["plan", str(EXAMPLE_7B), "--gpus", "8", "--set", "distributed.dp_shard=-1"]) == 0
    first = capsys.readouterr().out.splitlines()[3]
    assert "dp_shard=2" in first and first.endswith("(the file with the --sets given)")


@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
@pytest.mark.parametrize("newline", [b"\n", b"\r\n"])
def test_apply_keeps_line_endings_and_byte_order_mark(tmp_path, capsys, bom, newline):
    original = bom + EXAMPLE_7B.read_bytes().replace(b"\n", newline)
    path = tmp_path / "job.toml"
    path.write_bytes(original)
    assert main(["plan", str(path), "--gpus", "8", "--apply", "1"]) == 0, capsys.readouterr().err
    data = path.read_bytes()
    assert data.startswith(bom) and data.count(newline) == original.count(newline)
    assert data.count(b"\n") == original.count(b"\n")
    assert data.replace(b"dp_shard = 2", b"dp_shard = 3") == original
    assert check_path(path, world_size=8).ok


def test_an_invalid_set_of_a_layout_value_is_an_error(capsys):
    assert main(["plan", str(EXAMPLE_7B), "--gpus", "8", "--set", "distributed.tp=abc"]) == 1
    out = capsys.readouterr().out
    assert "errors no layout changes" in out and "distributed.tp" in out
    (found,) = plan(EXAMPLE_7B, 8, overrides=["distributed.tp=abc"])
    assert not found.layouts and [d.rule for d in found.blocking] == ["wrong-type"]


def test_a_syntax_error_is_a_config_error_exit_1(write, capsys):
    path = write("bad.toml", "[model\ndim = 64\n")
    assert main(["plan", str(path), "--gpus", "8"]) == 1
    assert "syntax-error" in capsys.readouterr().err


def test_a_file_that_pins_its_world_size_says_so_and_apply_refuses_other_sizes(write, capsys):
    text = "# trainspec: world-size=12\n" + EXAMPLE_7B.read_text()
    path = write("job.toml", text)
    assert main(["plan", str(path), "--gpus", "8"]) == 0
    assert "pins its world size to 12" in capsys.readouterr().out
    assert main(["plan", str(path), "--gpus", "8", "--apply", "1"]) == 2
    assert "pins its world size to 12" in capsys.readouterr().err
    assert path.read_text() == text
    assert main(["plan", str(path), "--gpus", "12"]) == 0
    assert "pins its world size" not in capsys.readouterr().out


def test_one_override_string_is_one_override():
    (found,) = plan(EXAMPLE_7B, 8, overrides="distributed.tp=8")
    assert found.layouts[0].overrides == ("distributed.dp_shard=1",)  # tp=8 from the override, not t, p, =, ...
    assert found.layouts[0].values["distributed.tp"] == 8


def test_apply_keeps_crlf_and_byte_order_mark_of_yaml(tmp_path, capsys):
    original = b"\xef\xbb\xbf" + (ROOT / "examples" / "specforge_qwen3_8b_dflash.yaml").read_bytes().replace(
        b"\n", b"\r\n"
    )
    path = tmp_path / "run.yaml"
    path.write_bytes(original)
    assert main(["plan", str(path), "--gpus", "8", "--apply", "1"]) == 0, capsys.readouterr().err
    assert path.read_bytes() == original.replace(b"nproc_per_node: 4\r\n", b"nproc_per_node: 8\r\n")
