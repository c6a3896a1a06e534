"""`trainspec show`: every resolved value with its origin, and the quantities the family derives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trainspec import Family, rule
from trainspec.cli import main
from trainspec.families import versions_of
from trainspec.layouts.provenance import SCHEMA_DEFAULT, show

from .conftest import ROOT

EXAMPLE_7B = ROOT / "examples" / "kempnerforge_7b_12gpu.toml"
MODELS = ROOT / "tests" / "corpus" / "kempnerforge" / "model"


def show_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    code = main(["show", "--format", "json", *args])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(
    ("name", "parameters"),
    [("llama_7b.toml", 8_030_261_248), ("llama_13b.toml", 14_840_386_560)],
)
def test_parameter_count_of_the_corpus_presets(capsys, name, parameters):
    code, out = show_json(capsys, str(MODELS / name))
    assert code == 0
    assert out["derived"]["parameters"]["value"] == parameters


def test_parameter_count_of_the_default_model(capsys, write):
    code, out = show_json(capsys, str(write("job.toml", "[train]\nmax_steps = 10\n")))
    assert code == 0
    assert out["derived"]["parameters"]["value"] == 6_738_415_616
    assert out["derived"]["head_dim"]["value"] == 128
    assert out["derived"]["n_kv_heads_effective"]["value"] == 32  # absent: KempnerForge keeps 32


def test_moe_experts_are_counted_per_moe_layer(capsys, write):
    dense = "[model]\ndim = 64\nn_layers = 4\nn_heads = 4\nn_kv_heads = 4\nvocab_size = 100\nffn_hidden_dim = 128\n"
    moe = dense + "num_experts = 4\nmoe_frequency = 2\n[train]\ncompile_model = false\n"
    _, base = show_json(capsys, str(write("dense.toml", dense)))
    _, mixed = show_json(capsys, str(write("moe.toml", moe)))
    # two of the four layers become MoE layers: each swaps its MLP for 4 experts and a 64×4 router
    mlp = 3 * 64 * 128
    extra = 2 * (4 * mlp + 64 * 4 - mlp)
    assert mixed["derived"]["parameters"]["value"] - base["derived"]["parameters"]["value"] == extra


@pytest.mark.parametrize(
    ("multiplier", "parameters"),
    [
        ("", 17_648_896),  # the default 1.0: ffn_hidden_dim 100 makes 96-wide experts (a multiple of 16)
        ("moe_expert_ffn_multiplier = 0.5\n", 17_648_896 - 5 * 2 * 3 * 256 * (96 - 48)),
        ("moe_expert_ffn_multiplier = 0.3\n", 17_648_896 - 5 * 2 * 3 * 256 * (96 - 32)),  # 30 rounds to 32
    ],
)
def test_moe_experts_have_the_expert_width(capsys, write, multiplier, parameters):
    # the reference's example: 2 MoE layers of 4 routed and 1 shared expert each
    text = (
        "[model]\ndim = 256\nn_layers = 2\nn_heads = 4\nn_kv_heads = 4\nvocab_size = 32000\n"
        "tie_embeddings = false\nnum_experts = 4\nmoe_frequency = 1\nmoe_shared_experts = 1\n"
        f"ffn_hidden_dim = 100\n{multiplier}[train]\ncompile_model = false\n"
    )
    code, out = show_json(capsys, str(write("moe.toml", text)))
    assert code == 0, out["diagnostics"]
    assert out["derived"]["parameters"]["value"] == parameters


def test_origins_name_the_line_the_override_the_default_and_the_hook(capsys):
    _, out = show_json(capsys, str(EXAMPLE_7B), "--set", "train.batch_size=2", "--set", "vlm.arch=joint_decoder")
    origins = {v["path"]: v["origin"] for v in out["values"]}
    values = {v["path"]: v["value"] for v in out["values"]}
    lines = EXAMPLE_7B.read_text().splitlines()
    line = next(n for n, text in enumerate(lines, 1) if text.startswith("dim = "))
    assert origins["model.dim"] == f"{EXAMPLE_7B}:{line}"
    assert origins["train.batch_size"].startswith("override #1") and values["train.batch_size"] == 2
    assert origins["model.norm_eps"] == SCHEMA_DEFAULT
    assert "resolve hook" in origins["adapter.type"]  # a VLM run gets the default adapter from the family


def test_a_value_the_resolve_hook_changes_is_derived_not_overridden(capsys):
    _, out = show_json(capsys, str(EXAMPLE_7B), "--set", "model.n_kv_heads=null")
    leaf = next(v for v in out["values"] if v["path"] == "model.n_kv_heads")
    assert leaf["value"] == 32 and "resolve hook" in leaf["origin"]


def test_layout_quantities_follow_the_world_size(capsys):
    code, out = show_json(capsys, str(EXAMPLE_7B), "--world-size", "12")
    derived = {k: v["value"] for k, v in out["derived"].items()}
    assert code == 0
    assert derived["data_parallel"] == 3
    assert derived["tokens_per_step"] == 4 * 4096 * 8 * 3  # batch · seq_len · accumulation · data parallel
    # bf16 weights, tp 4 × dp_shard 3: tensor parallelism leaves the embedding and the norms whole on every
    # tp rank, FSDP pads each shard to equal rows (kempnerforge-build reference §8.3: 801,037,014 per rank)
    assert derived["memory_parameters"] == 801_037_014 * 2
    assert derived["memory_gradients"] == derived["memory_parameters"]
    assert derived["memory_optimizer"] == 801_037_014 * 2 * 2  # AdamW: two moments


def test_replication_keeps_a_whole_copy_per_replica(capsys):
    _, sharded = show_json(capsys, str(EXAMPLE_7B), "--world-size", "12")
    _, replicated = show_json(
        capsys, str(EXAMPLE_7B), "--world-size", "12", "--set", "distributed.dp_replicate=3", "--set",
        "distributed.dp_shard=1", "--set", "train.mixed_precision=fp32",
    )  # fmt: skip
    groups = {k: v["value"] for k, v in sharded["derived"].items() if k.startswith("parameters_")}
    # only tp shards (the embedding and norms stay whole): fp32
    per_rank = groups["parameters_embedding"] + groups["parameters_norms"]
    per_rank += (groups["parameters_head"] + groups["parameters_attention"] + groups["parameters_mlp"]) // 4
    assert replicated["derived"]["memory_parameters"]["value"] == per_rank * 4


def test_auto_shard_without_a_world_size_says_what_is_missing(capsys):
    code, out = show_json(capsys, str(MODELS / "llama_7b.toml"))
    assert code == 0
    assert out["derived"]["data_parallel"]["value"] is None
    assert "--world-size" in out["derived"]["data_parallel"]["how"]


def test_a_config_with_errors_shows_values_and_only_the_quantities_its_errors_leave(capsys):
    code, out = show_json(capsys, str(ROOT / "examples" / "broken_kempnerforge.toml"))
    assert code == 1
    assert out["values"] and out["derived"]["parameters"]["value"] is None
    assert "model.dim" in out["derived"]["parameters"]["how"] and "withheld" in out["note"]
    assert out["derived"]["data_parallel"]["value"] == 3  # distributed has no error
    assert any(d["rule"] == "model-heads-divide-dim" for d in out["diagnostics"])


IMAGE_VLM = """[model]
dim = 256
n_layers = 4
n_heads = 4
n_kv_heads = 4
[vision_encoder]
type = "random"
feature_dim = 64
num_tokens = 16
[data]
tokenizer_path = "gpt2"
{source}[vlm]
"""


@pytest.mark.parametrize("family", [f.id for f in versions_of("kempnerforge")])
def test_a_data_error_withholds_nothing_the_model_and_layout_give(capsys, write, family):
    """vlm-needs-hf-data is about where the data comes from: the model, its counts and its memory do not read it."""
    broken = write("job.toml", IMAGE_VLM.format(source=""))
    code, out = show_json(capsys, str(broken), "--family", family, "--world-size", "2")
    assert code == 1 and [d["rule"] for d in out["diagnostics"] if d["severity"] == "error"] == ["vlm-needs-hf-data"]
    fixed = write("fixed.toml", IMAGE_VLM.format(source='hf_dataset_name = "coco"\n'))
    _, clean = show_json(capsys, str(fixed), "--family", family, "--world-size", "2")
    assert out["derived"] == clean["derived"] and out["derived"]["parameters"]["value"] > 0
    assert out["derived"]["memory_total"]["value"] > 0 and not out["note"]


def test_an_error_withholds_only_what_is_derived_from_its_value(capsys, write):
    """A layout error (tp does not divide the heads) leaves the parameter counts; a model error withholds them."""
    code, out = show_json(capsys, str(write("job.toml", "[distributed]\ntp = 3\n")), "--world-size", "3")
    assert code == 1 and out["derived"]["parameters"]["value"] == 6_738_415_616
    memory = out["derived"]["memory_total"]
    assert memory["value"] is None and "distributed.tp" in memory["how"] and "withheld" in out["note"]
    code, out = show_json(capsys, str(write("job.toml", "[model]\ndim = 4100\n")), "--world-size", "1")
    assert out["derived"]["parameters"]["value"] is None and "model.dim" in out["derived"]["parameters"]["how"]


def test_specforge_mode_role_and_world_size(capsys):
    code, out = show_json(capsys, str(ROOT / "examples" / "specforge_qwen3_8b_dflash.yaml"))
    derived = {k: v["value"] for k, v in out["derived"].items()}
    assert code == 0
    assert derived["data_mode"] == "online" and derived["deployment_mode"] == "disaggregated"
    assert derived["role"] == "auto" and derived["world_size"] == 4
    role = next(v for v in out["values"] if v["path"] == "training.role")
    assert "normalize hook" in role["origin"]


def test_text_output_lists_values_and_derived_quantities(capsys):
    assert main(["show", str(EXAMPLE_7B), "--world-size", "12"]) == 0
    out = capsys.readouterr().out
    assert "model.dim = 4096" in out and "parameters = 8,030,261,248" in out
    assert "memory_optimizer = " in out and "GiB" in out


def test_missing_file_is_a_usage_error(capsys, tmp_path):
    assert main(["show", str(tmp_path / "nope.toml")]) == 2
    assert "file-not-found" in capsys.readouterr().out


@rule("steps-even", "error", "steps")
def steps_even(steps: int):
    """Steps come in pairs."""
    if steps % 2:
        yield f"steps = {steps} is odd"


def test_a_family_without_derive_shows_values_only(tmp_path: Path):
    schema = tmp_path / "tiny.schema.json"
    schema.write_text(
        json.dumps(
            {
                "type": "object",
                "properties": {"steps": {"type": "integer", "default": 10}, "name": {"type": "string"}},
            }
        )
    )
    config = tmp_path / "run.yaml"
    config.write_text("name: x\n")
    fam = Family(name="tiny", schema_file=schema, model="tiny:Model", rules=[steps_even], formats=frozenset({"yaml"}))
    shown = show(config, family=fam)
    assert shown.ok and not shown.quantities and "derives no quantities" in shown.note
    assert {(leaf.path, leaf.origin) for leaf in shown.leaves} == {("name", f"{config}:1"), ("steps", SCHEMA_DEFAULT)}


def test_values_json_cannot_write_are_shown_as_text(capsys, write):
    text = EXAMPLE_7B.read_text().replace("[model]\n", "[model]\nwhen = 2024-01-02\n")
    code, out = show_json(capsys, str(write("job.toml", text)))
    assert code == 1  # an unknown key, still shown with where it was written
    leaf = next(v for v in out["values"] if v["path"] == "model.when")
    line = text.splitlines().index("when = 2024-01-02") + 1
    assert leaf["value"] == "2024-01-02" and leaf["origin"].endswith(f"job.toml:{line}")


def test_one_override_string_is_one_override():
    shown = show(EXAMPLE_7B, overrides="model.dim=2048")
    assert shown.ok
    leaf = next(leaf for leaf in shown.leaves if leaf.path == "model.dim")
    assert leaf.value == 2048 and leaf.origin.startswith("override #1")


def test_specforge_shows_the_size_it_runs_at_and_names_a_disagreeing_one(capsys):
    config = str(ROOT / "examples" / "specforge_qwen3_8b_dflash.yaml")  # 1 node × 4 processes
    code, out = show_json(capsys, config, "--world-size", "8")
    assert code == 1 and out["world_size"] == 4  # the size typed is checked, as `check` does: the topology refuses it
    assert [d["rule"] for d in out["diagnostics"] if d["severity"] == "error"] == [
        "world-size-matches-trainer-topology"
    ]
    assert out["derived"]["world_size"]["value"] == 4 and out["derived"]["data_parallel"]["value"] == 4
    assert "world size 8 given disagrees with the 4" in out["note"]
    assert out["world_size_from"] == "the config's own topology, not the --world-size given"
    code, out = show_json(capsys, config, "--world-size", "4")
    assert code == 0 and out["note"] is None and out["world_size_from"] == "--world-size"
    assert out["derived"]["world_size"]["how"] == "deployment.trainer.nnodes × nproc_per_node"


def test_show_says_where_its_world_size_came_from(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    first = {
        "examples/kempnerforge_7b_12gpu.toml": "at world size 12 (from the entry for "
        "examples/kempnerforge_7b_12gpu.toml in pyproject.toml)",
        "examples/specforge_qwen3_8b_dflash.yaml": "at world size 4 (from the config's "
        "deployment.trainer.nnodes × nproc_per_node = 1 × 4)",
        "examples/broken_kempnerforge.toml": "at no world size (none given)",
    }
    for file, said in first.items():
        main(["show", file])
        assert said in capsys.readouterr().out, file
    main(["show", "examples/kempnerforge_7b_12gpu.toml", "--world-size", "8"])
    assert "at world size 8 (from --world-size)" in capsys.readouterr().out
    main(["show", "examples/kempnerforge_7b_12gpu.toml", "--isolated"])
    assert "at no world size (none given)" in capsys.readouterr().out
    directive = tmp_path / "job.toml"
    directive.write_text(
        "# trainspec: world-size=12\n" + (ROOT / "examples" / "kempnerforge_7b_12gpu.toml").read_text()
    )
    main(["show", str(directive)])
    assert "at world size 12 (from the file's directive)" in capsys.readouterr().out
