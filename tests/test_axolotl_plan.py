"""Axolotl's parallel layouts (`plan`), what a config implies at a world size (`show`), and the device mesh
the trainer builds, pinned against `axolotl.utils.distributed._get_parallel_config_kwargs` itself."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import yaml

from trainspec.cli import main
from trainspec.engine.pipeline import check_path
from trainspec.families.axolotl.mesh import Mesh, MeshError, builds_mesh, resolve
from trainspec.layouts.planner import plan
from trainspec.layouts.provenance import show

from .conftest import ROOT

EXAMPLES = ROOT / "tests" / "data" / "axolotl" / "examples-0.18.0"

HEAD = (
    "base_model: NousResearch/Llama-3.2-1B\nlearning_rate: 0.0002\n"
    "datasets:\n  - path: teknium/GPT4-LLM-Cleaned\n    type: alpaca\n"
    "sequence_len: 2048\nmicro_batch_size: 2\n"
)
FSDP2 = "fsdp_version: 2\nfsdp_config:\n  offload_params: false\n"
FSDP = {"fsdp_version": 2, "fsdp_config": {"offload_params": False}}


@pytest.fixture
def write(tmp_path: Path):
    def make(text: str) -> Path:
        path = tmp_path / "config.yaml"
        path.write_text(HEAD + text)
        return path

    return make


@pytest.mark.parametrize(
    ("config", "world_size", "degrees"),
    [
        (FSDP, 8, (1, 8, 1, 1)),  # dp_shard takes the whole world size
        ({**FSDP, "tensor_parallel_size": 2, "dp_replicate_size": 2}, 8, (2, 2, 2, 1)),
        ({**FSDP, "dp_shard_size": 4}, 8, (2, 4, 1, 1)),  # an unset dp_replicate takes the rest, with FSDP
        ({**FSDP, "dp_shard_size": 2, "tensor_parallel_size": 8}, 8, (1, 1, 8, 1)),  # nothing left: dp_shard unused
        ({"tensor_parallel_size": 2}, 8, (1, 4, 2, 1)),  # tp alone builds a mesh; dp_shard takes the rest
        ({"sequence_parallel_degree": 4}, 8, (1, 2, 1, 4)),  # the deprecated name still counts
    ],
)
def test_the_mesh_is_the_trainers(config, world_size, degrees):
    mesh = resolve(config, world_size)
    assert (mesh.dp_replicate, mesh.dp_shard, mesh.tp, mesh.cp) == degrees and mesh.built


@pytest.mark.parametrize(
    ("config", "world_size"),
    [
        ({**FSDP, "tensor_parallel_size": 3}, 8),  # 3 does not divide 8: the mesh covers 6 ranks
        ({"dp_shard_size": 2, "tensor_parallel_size": 2}, 8),  # dp_shard without an fsdp_config
        ({"dp_replicate_size": 2, "tensor_parallel_size": 2}, 8),  # 2 ranks left over, nothing to take them
        ({**FSDP, "dp_shard_size": 4, "dp_replicate_size": 2, "tensor_parallel_size": 2}, 8),  # 16 ranks
        ({"context_parallel_size": 2}, 1),
    ],
)
def test_the_trainer_refuses(config, world_size):
    with pytest.raises(MeshError):
        resolve(config, world_size)


def test_ddp_deepspeed_and_fsdp1_build_no_mesh():
    assert not builds_mesh({}) and not builds_mesh({"dp_shard_size": 4})
    assert not builds_mesh({"fsdp_config": {"offload_params": False}, "tensor_parallel_size": 2})  # FSDP1
    assert resolve({"dp_replicate_size": 3}, 8) == Mesh(8, 1, 1, 1, built=False)


def test_every_layout_plan_offers_checks_clean_and_builds_a_mesh_of_the_world_size(write):
    path = write("gradient_accumulation_steps: 4\nflash_attention: true\n" + FSDP2)  # cp needs flash attention
    found = plan(path, [8, 12], family="axolotl")
    for one in found:
        assert one.layouts and not one.blocking
        assert one.layouts[0].overrides == ()  # the file as it is: dp_shard_size unset takes the world size
        for layout in one.layouts:
            result = check_path(str(path), family="axolotl", overrides=layout.overrides, world_size=one.world_size)
            assert not any(d.is_error for d in result.diagnostics), (layout, result.diagnostics)
            sizes = [int(part.split("=")[1]) for part in layout.resolved.split()]
            assert sizes[0] * sizes[1] * sizes[2] * sizes[3] == one.world_size
    assert len({layout.resolved for layout in found[0].layouts}) == len(found[0].layouts) == 20


def test_the_other_rules_that_read_a_degree_judge_every_layout_too(write):
    found = plan(write("gradient_accumulation_steps: 4\n" + FSDP2), [8], family="axolotl")[0]
    assert found.ruled_out == {"context-parallel-needs-flash-attention": 10}  # every layout with cp > 1
    assert len(found.layouts) == 10 and all(" cp=1 " in layout.resolved for layout in found.layouts)


def test_plan_never_offers_a_layout_the_mesh_rule_refuses(write):
    """Without FSDP, a written dp_replicate_size = 2 leaves ranks nobody takes once tp or cp is on."""
    path, given = write("gradient_accumulation_steps: 4\n"), ["dp_replicate_size=2"]
    found = plan(path, [8], family="axolotl", overrides=given)[0]
    assert found.ruled_out.get("mesh-fits-world-size")
    for layout in found.layouts:
        result = check_path(str(path), family="axolotl", overrides=[*given, *layout.overrides], world_size=8)
        assert not any(d.is_error for d in result.diagnostics), (layout, result.diagnostics)


def test_without_a_mesh_the_data_parallel_degrees_are_not_varied(write):
    found = plan(write("gradient_accumulation_steps: 4\n"), [8], family="axolotl")[0]
    assert found.layouts[0].resolved.startswith("no device mesh: 8 data-parallel")
    assert sum(layout.resolved.startswith("no device mesh") for layout in found.layouts) == 1


def test_a_mesh_that_does_not_fit_is_an_error_naming_the_nearest_layout(write, capsys):
    path = write("gradient_accumulation_steps: 4\n" + FSDP2 + "tensor_parallel_size: 3\n")
    assert main(["check", str(path), "--family", "axolotl", "--world-size", "8"]) == 1
    out = capsys.readouterr().out
    assert "error[mesh-fits-world-size] at world size 8, tensor_parallel_size = 3: the mesh would cover" in out
    assert (
        "1 error(s)" in out
        and "= 6 ranks" in out
        and "the nearest layout that passes at world size 8: tensor_parallel_size=1" in out
    )


def test_show_derives_the_mesh_and_the_batch_of_one_step(write):
    path = write("gradient_accumulation_steps: 4\n" + FSDP2 + "tensor_parallel_size: 2\n")
    derived = {q.name: q.value for q in show(path, family="axolotl", world_size=8).quantities}
    assert derived["mesh"] == "dp_replicate=1 dp_shard=4 cp=1 tp=2"
    assert derived["data_parallel"] == 4
    assert derived["global_batch"] == 2 * 4 * 4 and derived["tokens_per_step"] == 32 * 2048
    assert derived["batch_size"] == 32  # normalize_config: micro × accumulation × world size ÷ tp ÷ cp


def test_a_written_batch_size_leaves_accumulation_at_one(write):
    """The loader keeps `gradient_accumulation_steps` at its default 1 when only `batch_size` is written
    (checked against 0.18.0's validate_config and normalize_config: 2, 1, 128 at 8 GPUs)."""
    derived = {q.name: q for q in show(write("batch_size: 16\n"), family="axolotl", world_size=8).quantities}
    assert derived["gradient_accumulation_steps"].value == 1
    assert derived["global_batch"].value == 16 and derived["batch_size"].value == 128
    assert "not batch_size × data_parallel" in derived["batch_size"].how


def test_show_without_a_world_size_says_what_it_needs(write):
    derived = {q.name: q for q in show(write("gradient_accumulation_steps: 4\n"), family="axolotl").quantities}
    assert derived["sequences_per_rank_per_step"].value == 8
    assert derived["global_batch"].value is None and "world size" in derived["global_batch"].how


@pytest.mark.external
def test_the_mesh_agrees_with_the_trainer_on_the_corpus_and_mutations():
    """Every corpus config, with its degrees, FSDP setup and world size mutated (seeded), resolves to the
    mesh the trainer's own `_get_parallel_config_kwargs` builds, or is refused where it refuses."""
    import axolotl.utils.distributed as distributed  # the 0.18.0 oracle (tools/setup-dev.sh installs it)

    rng = random.Random(27)
    keys = ("dp_shard_size", "dp_replicate_size", "tensor_parallel_size", "context_parallel_size")
    for file in sorted(EXAMPLES.rglob("*.y*ml")):
        config = yaml.safe_load(file.read_text()) or {}
        for _ in range(10):
            mutated = {**config, **{k: rng.choice([None, 1, 2, 3, 4, 8]) for k in keys if rng.random() < 0.5}}
            if rng.random() < 0.3:
                mutated.update(fsdp_config={"offload_params": False}, fsdp_version=rng.choice([1, 2, None]))
            for world_size in (1, 2, 4, 6, 8, 16):
                assert _ours(mutated, world_size) == _trainers(distributed, mutated, world_size), (file, mutated)


def _ours(config: dict, world_size: int) -> tuple[int, ...] | str:
    if not builds_mesh(config):
        return "no mesh"
    try:
        mesh = resolve(config, world_size)
    except MeshError:
        return "refused"
    return (mesh.dp_replicate, mesh.dp_shard, mesh.tp, mesh.cp)


def _trainers(distributed, config: dict, world_size: int) -> tuple[int, ...] | str:
    tp = config.get("tensor_parallel_size") or 1
    cp = config.get("context_parallel_size") or config.get("sequence_parallel_degree") or 1
    fsdp = config.get("fsdp_config") or {}
    version = config.get("fsdp_version") or fsdp.get("fsdp_version") or (1 if fsdp else None)
    if not ((fsdp and version == 2) or (not fsdp and (tp > 1 or cp > 1))):  # ModelLoader's use_parallel_config
        return "no mesh"
    try:
        kwargs = distributed._get_parallel_config_kwargs(
            world_size, tp, cp, config.get("dp_shard_size"), config.get("dp_replicate_size"), bool(fsdp)
        )
    except ValueError:
        return "refused"
    sizes = tuple(kwargs.get(k, 1) for k in ("dp_replicate_size", "dp_shard_size", "tp_size", "cp_size"))
    # accelerate's ParallelismConfig: the degrees must multiply to the number of processes
    return sizes if sizes[0] * sizes[1] * sizes[2] * sizes[3] == world_size else "refused"


def test_plan_names_the_mesh_of_each_layout_in_text_and_json(write, capsys):
    path = str(write("gradient_accumulation_steps: 4\n" + FSDP2))
    assert main(["plan", path, "--gpus", "8", "--gpus-per-node", "4"]) == 0
    assert "   1. dp_replicate=1 dp_shard=8 cp=1 tp=1   (the file as it is)" in capsys.readouterr().out
    assert main(["plan", path, "--gpus", "8", "--format", "json"]) == 0
    (first, *_) = json.loads(capsys.readouterr().out)["plans"][0]["layouts"]
    assert first["resolved"] == "dp_replicate=1 dp_shard=8 cp=1 tp=1" and first["overrides"] == []
