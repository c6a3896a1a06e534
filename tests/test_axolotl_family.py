"""The Axolotl family: registered like any other, recognised by its keys, and its verdict on every example
config of the release, before any cross-field rule, agrees with Axolotl's own loader.

The loader's verdicts are those of `axolotl.utils.config.validate_config` (0.18.0) on each file as
PyYAML reads it; the differential test runs the loader itself. Here the part of the schema and of the
retired keys (`migrations.py`) is pinned: the files they refuse, with the ids and paths, and that
every other file passes them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import trainspec
from trainspec.engine.pipeline import check_path
from trainspec.families import get_family, versions_of
from trainspec.spec.diagnostics import Severity

from .conftest import CORPUS, ROOT

EXAMPLES = ROOT / "tests" / "data" / "axolotl" / "examples-0.18.0"
FILES = sorted(p for p in EXAMPLES.rglob("*") if p.suffix in (".yml", ".yaml"))

REFUSED = {
    # the loader: "Input should be a valid list" (tokens given as a mapping of special tokens)
    "archived/jeopardy-bot/config.yml": {("wrong-type", "tokens")},
    "archived/mpt-7b/config.yml": {("wrong-type", "tokens")},
    "archived/redpajama/config-3b.yml": {("wrong-type", "tokens")},
    # the loader: int_from_float, "got a number with a fractional part" (warmup_steps: 0.1)
    "expert_parallel/qwen3_30ba3b_ep_fft_4gpu.yaml": {("wrong-type", "warmup_steps")},
    "expert_parallel/qwen3_30ba3b_ep_fsdp_fft_4gpu.yaml": {("wrong-type", "warmup_steps")},
    "expert_parallel/qwen3_30ba3b_ep_lora_4gpu.yaml": {("wrong-type", "warmup_steps")},
    # the loader stops earlier, at `save_strategy: best` without `metric_for_best_model`
    "llama-3/diffusion/sft-1b.yaml": {
        ("wrong-type", "warmup_steps"),
        ("save-strategy-best-needs-metric", "save_strategy"),
    },
    # the loader: "`max_packed_sequence_len` is no longer supported", "`flash_attn_rms_norm` is no longer supported."
    "archived/pythia-12b/config.yml": {("removed-key", "max_packed_sequence_len")},
    "archived/stablelm-2/1.6b/fft.yml": {("removed-key", "flash_attn_rms_norm")},
    "archived/stablelm-2/1.6b/lora.yml": {("removed-key", "flash_attn_rms_norm")},
    # the loader: "Input should be a valid string" (`output_dir:` left empty, a null)
    "mistral-medium-3_5/qlora-text.yml": {("wrong-type", "output_dir")},
    "mistral-medium-3_5/qlora-vision.yml": {("wrong-type", "output_dir")},
    # launcher configs, not training configs: the loader says "either datasets or pretraining_dataset is required"
    "cloud/baseten.yaml": {
        ("missing-key", "base_model"),
        ("missing-key", "learning_rate"),
        ("datasets-or-pretraining-dataset-required", "datasets"),
        ("batch-size-two-of-three", "micro_batch_size"),
    },
    "cloud/modal.yaml": {
        ("missing-key", "base_model"),
        ("missing-key", "learning_rate"),
        ("datasets-or-pretraining-dataset-required", "datasets"),
        ("batch-size-two-of-three", "micro_batch_size"),
    },
    # the loader: "`early_stopping_patience` requires save_steps and eval_steps to be set"
    "archived/falcon/config-7b-qlora.yml": {("early-stopping-needs-steps", "early_stopping_patience")},
    "archived/xgen-7b/xgen-7b-8k-qlora.yml": {("early-stopping-needs-steps", "early_stopping_patience")},
    # stricter than the loader, which reads `false` as 0 in an integer field; the message says so
    "llama-2/relora.yml": {("wrong-type", "jagged_restart_anneal_steps")},
}


def test_the_family_is_registered_from_its_versions_file():
    family = get_family("axolotl@0.18.0")
    assert get_family("axolotl") is max(versions_of("axolotl"), key=lambda f: f.released)  # the newest
    assert get_family("axolotl@0.19.0").model_class().__name__ == "AxolotlConfig019"
    assert family.released == "2026-07-17"
    assert family.formats == frozenset({"yaml"}) and family.loader_yaml == "1.1"
    assert family.distribution == "axolotl"
    assert family.model_class().__name__ == "AxolotlConfig"


def test_the_model_ignores_unknown_keys_as_the_loader_does():
    """AxolotlInputConfig keeps pydantic's default (`extra="ignore"`): an unknown key is no error there."""
    model = get_family("axolotl").model_class()
    config = model.model_validate({"base_model": "m", "learning_rate": 2e-5, "not_a_key": 1})
    assert not hasattr(config, "not_a_key")


def test_the_corpus_holds_the_release_examples():
    assert len(FILES) == 210


def test_an_axolotl_file_is_recognised_by_its_keys(write):
    path = write(
        "run.yml",
        """
        base_model: NousResearch/Llama-3.2-1B
        datasets:
          - path: teknium/GPT4-LLM-Cleaned
            type: alpaca
        micro_batch_size: 2
        gradient_accumulation_steps: 4
        learning_rate: 0.0002
        """,
    )
    assert trainspec.check(path, world_size=8, gpu="h100") == []  # the target its GPU and world-size rules read
    result = trainspec.load(path)
    assert result.micro_batch_size == 2


@pytest.mark.parametrize(
    ("path", "family"),
    [
        (CORPUS / "specforge" / "qwen3-8b-eagle3-offline.yaml", "specforge"),
        (ROOT / "examples" / "specforge_qwen3_8b_dflash.yaml", "specforge"),
        (CORPUS / "kempnerforge" / "train" / "debug.toml", "kempnerforge"),
    ],
    ids=lambda v: v if isinstance(v, str) else v.name,
)
def test_other_families_files_stay_theirs(path: Path, family: str):
    assert _detected(path) == family


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(EXAMPLES).as_posix())
def test_every_example_gets_the_loaders_verdict_on_its_fields(path: Path):
    """Every file but the two launcher configs is also recognised by its keys."""
    name = path.relative_to(EXAMPLES).as_posix()
    errors = {
        (d.rule, d.config_path) for d in trainspec.check(path, family="axolotl@0.18.0") if d.severity is Severity.ERROR
    }
    assert errors == REFUSED.get(name, set())
    assert _detected(path) == (None if name.startswith("cloud/") else "axolotl")


def _detected(path: Path) -> str | None:
    """The family a check without `--family` picks."""
    found = check_path(path).family
    return found.name if found is not None else None
