"""`plan` offers only layouts the trainer can build: every layout it lists for the bundled examples, at
every small world size, checks without an error (build-time rules included)."""

from __future__ import annotations

import pytest

import trainspec
from trainspec.layouts.planner import plan

from .conftest import ROOT

EXAMPLES = [ROOT / "examples" / name for name in ("kempnerforge_7b_12gpu.toml", "tiny_kempnerforge.toml")]
EXAMPLES.append(ROOT / "examples" / "specforge_qwen3_8b_dflash.yaml")
DEBUG = ROOT / "tests" / "corpus" / "kempnerforge" / "train" / "debug.toml"


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
    assert all(v["distributed.cp"] == 1 or v["distributed.cp"] == 8 for v in values)
    assert found.ruled_out.get("pp-exceeds-layers") and found.ruled_out.get("cp-not-wired")


@pytest.mark.parametrize(("world_size", "errors"), [(2, 0), (4, 1), (16, 1)])
def test_context_parallelism_alone_fails_above_its_degree(tmp_path, world_size, errors):
    """cp = 2 with dp_shard = -1 passes the loader's product check at any even size, but the mesh has no
    cp dimension: above cp it covers only part of the ranks (reference §3.2, §7 row 2)."""
    config = tmp_path / "cp.toml"
    config.write_text("[distributed]\ncp = 2\n")
    found = trainspec.check(config, family="kempnerforge", world_size=world_size)
    assert [d.rule for d in found if d.is_error] == ["cp-mesh-smaller-than-world"] * errors
    assert "cp-becomes-data-parallel" in [d.rule for d in found]
