"""The public API: load returns the typed model; ConfigError carries every diagnostic."""

from __future__ import annotations

import time
from typing import Any

import pytest

import trainspec
from trainspec.api import check_config

from .conftest import CORPUS


def test_load_returns_the_generated_model_with_defaults_and_derived_values():
    config = trainspec.load(CORPUS / "kempnerforge" / "train" / "vlm_7b_mot.toml", world_size=4)
    assert type(config).__name__ == "JobConfig"
    assert config.model.n_kv_heads == 8 and config.train.seq_len == 768
    assert config.eval.interval == 1000  # section absent from the file: defaults
    assert config.vlm.arch == "mot" and config.vlm.max_text_len == 512
    assert config.adapter.type == "mlp_2layer"  # derived default of a VLM run
    assert config.vlm.module_patterns["mot"] == ["transformer.layers", "transformer.layers.*"]


def test_load_applies_overrides_and_world_size(write):
    path = write("job.toml", "[distributed]\ndp_shard = -1\ntp = 2\n")
    config = trainspec.load(
        path, overrides=["optimizer.lr=1e-3", "model.n_heads=16", "model.n_kv_heads=4"], world_size=4
    )
    assert config.optimizer.lr == 0.001 and config.model.n_heads == 16
    with pytest.raises(trainspec.ConfigError) as exc:
        trainspec.load(path, world_size=3)
    assert [d.rule for d in exc.value.diagnostics if d.is_error] == ["world-size-auto-shard-divisible"]


def test_config_error_lists_every_problem(write):
    path = write("job.toml", "[model]\ndim = 4100\n[train]\nseq_len = 9999\nbatch_size = 0\n")
    with pytest.raises(trainspec.ConfigError) as exc:
        trainspec.load(path)
    rules = [d.rule for d in exc.value.diagnostics if d.is_error]
    assert rules == ["model-heads-divide-dim", "seq-len-within-max", "out-of-range"]
    assert "3 error(s)" in str(exc.value) and f"{path}:2:1" in str(exc.value)


def test_warnings_do_not_stop_load_but_are_reported_by_check(write):
    path = write("job.toml", "[model]\nnum_experts = 4\n")
    assert trainspec.load(path).model.num_experts == 4
    assert [d.rule for d in trainspec.check(path) if d.severity is trainspec.Severity.WARNING] == ["moe-compile"]


def test_check_never_raises_for_config_problems(tmp_path):
    diagnostics = trainspec.check(tmp_path / "missing.toml")
    assert [d.rule for d in diagnostics] == ["file-not-found"]
    bad = tmp_path / "bad.toml"
    bad.write_text("[model\n")
    assert [d.rule for d in trainspec.check(bad)] == ["syntax-error"]


def test_generated_models_give_plain_typed_values(write):
    path = write(
        "job.toml",
        "[optimizer]\nbetas = [0.8, 0.9]\n[distributed]\ndp_shard = 2\n"
        '[[data.datasets]]\npath = "/data/web"\nweight = 2.0\n',
    )
    config = trainspec.load(path, world_size=2)
    assert config.distributed.dp_shard * 2 == 4
    assert config.optimizer.betas[0] + config.optimizer.betas[1] == pytest.approx(1.7)
    assert config.data.datasets[0].path == "/data/web" and config.data.datasets[0].weight == 2.0


def recursive() -> dict[str, Any]:
    config: dict[str, Any] = {"model": {"dim": 4096}, "train": {"seq_lenn": 1}}
    config["model"]["self"] = config
    return config


def nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = {"a": value}
    return value


@pytest.mark.parametrize(
    ("config", "rule", "path"),
    [
        (recursive(), "invalid-value", "model.self"),
        ({"model": {"dim": 4096, "norm_eps": 1e-5j}}, "wrong-type", "model.norm_eps"),
        ({"model": {"dim": 4096, 3: 1}}, "wrong-type", "model"),
        ({"model": {"dim": 4096, "x": object()}}, "wrong-type", "model.x"),
        ({"optimizer": {"betas": [0.9, {0.95}]}}, "wrong-type", "optimizer.betas[1]"),
        ({"model": {"dim": 4096, "x": nested(100_000)}}, "invalid-value", "model.x" + ".a" * 98),
    ],
)
def test_check_config_says_where_a_config_cannot_be_data_and_checks_the_rest(config, rule, path):
    """A recursive dict looped forever; a complex value or an integer key raised TypeError."""
    started = time.monotonic()
    config.setdefault("train", {"seq_lenn": 1})
    found = check_config(config, "kempnerforge", world_size=1)
    assert time.monotonic() - started < 10
    assert (rule, path) in [(d.rule, d.config_path) for d in found if d.is_error]
    assert "unknown-key" in [d.rule for d in found]  # the rest of the config is still checked


def test_check_config_reads_tuples_as_lists_and_a_null_section_as_absent():
    assert check_config({"optimizer": {"betas": (0.8, 0.9)}}, "kempnerforge", world_size=1) == []
    video_only = {"video": None, "vlm": None, "vision_encoder": None, "adapter": None}
    assert check_config(video_only, "kempnerforge@5666d0d", world_size=1) == []
    assert [d.rule for d in check_config({"train": None}, "kempnerforge", world_size=1)] == ["wrong-type"]


@pytest.mark.parametrize(
    "call",
    [
        lambda: trainspec.check(None),
        lambda: trainspec.load(None),
        lambda: check_config(None, "kempnerforge"),
        lambda: check_config([("model", {})], "kempnerforge"),
        lambda: check_config({}, 3),
    ],
)
def test_a_wrong_argument_type_is_a_type_error_that_says_what_was_expected(call):
    with pytest.raises(TypeError, match=r"takes .*, not (NoneType|list|int)"):
        call()
