"""`plan` offers only layouts the trainer can build: every layout it lists for the bundled examples, at
every small world size, checks without an error (build-time rules included)."""

from __future__ import annotations

import pytest

import trainspec
from trainspec.families import versions_of
from trainspec.layouts.planner import plan

from .conftest import ROOT

EXAMPLES = [ROOT / "examples" / name for name in ("kempnerforge_7b_12gpu.toml", "tiny_kempnerforge.toml")]
EXAMPLES.append(ROOT / "examples" / "specforge_qwen3_8b_dflash.yaml")
DEBUG = ROOT / "tests" / "corpus" / "kempnerforge" / "train" / "debug.toml"
SMALL = "[model]\ndim = 256\nn_layers = 4\nn_heads = 4\nn_kv_heads = 4\n\n"


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_no_offered_layout_breaks_a_rule(path):
    for found in plan(path, list(range(1, 17)), gpus_per_node=4):
        for layout in found.layouts:
            problems = trainspec.check(path, world_size=found.world_size, overrides=layout.overrides)
            errors = [d for d in problems if d.is_error]
            assert not errors, (found.world_size, layout.overrides, [d.message for d in errors])


def test_pipeline_stages_never_exceed_the_layers_nor_context_parallel_the_mesh():
    (found,) = plan(DEBUG, 8)  # 4 layers
    values = [layout.values for layout in found.layouts]
    assert values and all(v["distributed.pp"] <= 4 for v in values)
    assert all(v["distributed.cp"] == 1 for v in values)
    assert found.ruled_out.get("pp-exceeds-layers") and found.ruled_out.get("cp-not-wired")


DATA_PARALLEL = ("distributed.dp_replicate", "distributed.dp_shard", "distributed.tp", "distributed.ep")


@pytest.mark.parametrize("version", [f.id for f in versions_of("kempnerforge")])
def test_pipeline_layouts_are_offered_only_without_a_data_parallel_dimension(version):
    """A pipeline stage in a mesh with dp_shard, dp_replicate, tp (a size-1 dp_shard) or ep fails in FSDP
    wrapping (kempnerforge-build §7 row 21); a mesh of pipeline stages alone builds."""
    accum = ["train.grad_accum_steps=4"]  # 1F1B needs a micro-batch per stage
    for found in plan(DEBUG, [2, 4, 8, 12], family=version, overrides=accum):
        piped = [layout.values for layout in found.layouts if layout.values["distributed.pp"] > 1]
        assert all(all(v[p] == 1 for p in DATA_PARALLEL) for v in piped), (found.world_size, piped)
        assert [v["distributed.pp"] for v in piped] == ([found.world_size] if found.world_size <= 4 else [])
        if found.world_size > 2:
            assert found.ruled_out.get("pp-stage-fsdp") or found.ruled_out.get("pp-stage-fsdp-auto-shard")


@pytest.mark.parametrize("version", [f.id for f in versions_of("kempnerforge")])
@pytest.mark.parametrize(
    ("distributed", "world_size", "rule"),
    [
        ("dp_shard = 4\ntp = 4\npp = 2\n", 32, "pp-stage-fsdp"),  # upstream's 29b_32gpu_tp4_pp2 layout
        ("dp_shard = 1\ntp = 2\npp = 2\n", 4, "pp-stage-fsdp"),  # tp adds a size-1 dp_shard
        ("dp_shard = 1\ndp_replicate = 2\npp = 2\n", 4, "pp-stage-fsdp"),
        ("pp = 2\n", 4, "pp-stage-fsdp-auto-shard"),  # dp_shard = -1 resolves to 2
        ("pp = 2\n", 2, None),  # pipeline stages alone
        ("dp_shard = 1\npp = 4\n", 4, None),
    ],
)
def test_a_pipeline_beside_data_parallelism_fails_when_the_job_builds(tmp_path, version, distributed, world_size, rule):
    config = tmp_path / "pp.toml"
    config.write_text(SMALL + "[train]\ngrad_accum_steps = 4\n\n[distributed]\n" + distributed)
    found = trainspec.check(config, family=version, world_size=world_size)
    errors = [d for d in found if d.is_error]
    assert [d.rule for d in errors] == ([rule] if rule else [])
    if rule:
        assert "PipelineStageModule" in errors[0].message and "cross_attention_layers" in errors[0].message
        assert errors[0].path == ("distributed", "pp")


def test_context_parallelism_at_the_world_size_is_never_offered():
    """cp = world size only warns that it runs as plain data parallelism and says to set cp = 1: no plan."""
    for found in plan(DEBUG, [2, 4, 8]):
        assert all(layout.values["distributed.cp"] == 1 for layout in found.layouts)
        assert found.ruled_out.get("cp-becomes-data-parallel") == 1
        assert not any("cp" in w for layout in found.layouts for w in layout.warnings)


@pytest.mark.parametrize(("world_size", "errors"), [(2, 0), (4, 1), (16, 1)])
def test_context_parallelism_alone_fails_above_its_degree(tmp_path, world_size, errors):
    """cp = 2 with dp_shard = -1 passes the loader's product check at any even size, but the mesh has no
    cp dimension: above cp it covers only part of the ranks (reference §3.2, §7 row 2)."""
    config = tmp_path / "cp.toml"
    config.write_text("[distributed]\ncp = 2\n")
    found = trainspec.check(config, family="kempnerforge", world_size=world_size)
    assert [d.rule for d in found if d.is_error] == ["cp-mesh-smaller-than-world"] * errors
    assert "cp-becomes-data-parallel" in [d.rule for d in found]
