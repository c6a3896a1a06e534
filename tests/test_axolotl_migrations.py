"""Axolotl's retired and renamed keys: what its loader refuses is an error naming the replacement, what it
moves is a warning saying where, and rules see the value where the loader puts it."""

from __future__ import annotations

from typing import Any

import pytest

import trainspec
from trainspec.spec.diagnostics import Severity

BASE = """
base_model: NousResearch/Llama-3.2-1B
learning_rate: 0.0002
micro_batch_size: 2
gradient_accumulation_steps: 1
datasets:
  - path: teknium/GPT4-LLM-Cleaned
    type: alpaca
"""

TARGET: dict[str, Any] = {"world_size": 8, "gpu": "h100"}
"""The target the family's GPU and world-size rules read (without one, a note says they were skipped)."""


def found(write, extra: str) -> list[tuple[str, str, Severity, int | None]]:
    path = write("run.yml", BASE + extra)
    return [(d.rule, d.config_path, d.severity, d.line) for d in trainspec.check(path, family="axolotl", **TARGET)]


@pytest.mark.parametrize(
    ("extra", "key", "names"),
    [
        ("max_packed_sequence_len: 2048\n", "max_packed_sequence_len", "sample_packing"),
        ("rope_scaling: {type: linear, factor: 2}\n", "rope_scaling", "model_config"),
        ("dpo_norm_loss: false\n", "dpo_norm_loss", "TRL"),
        ("flash_attn_rms_norm: true\n", "flash_attn_rms_norm", "remove"),
        ("unsloth_lora_mlp: true\n", "unsloth_lora_mlp", "lora_mlp_kernel"),
    ],
)
def test_a_key_the_loader_refuses_is_an_error_naming_what_replaced_it(write, extra, key, names):
    path = write("run.yml", BASE + extra)
    (d,) = trainspec.check(path, family="axolotl", **TARGET)
    assert (d.rule, d.config_path, d.severity, d.line) == ("removed-key", key, Severity.ERROR, 8)
    assert names in d.message and "refuses" in d.message


@pytest.mark.parametrize("extra", ["max_packed_sequence_len: 0\n", "flash_attn_rms_norm: false\n", "rope_scaling:\n"])
def test_a_retired_key_the_loader_lets_pass_is_no_error(write, extra):
    """The loader refuses most of them only when true or non-empty (the removed DPO settings: when set)."""
    assert found(write, extra) == []


def test_a_deprecated_key_the_loader_only_warns_about_is_a_warning(write):
    assert found(write, "eval_max_new_tokens: 128\n") == [
        ("deprecated-key", "eval_max_new_tokens", Severity.WARNING, 8)
    ]


def test_a_renamed_key_moves_where_the_loader_moves_it(write):
    path = write("run.yml", BASE + "noisy_embedding_alpha: 5\n")
    (d,) = trainspec.check(path, family="axolotl", **TARGET)
    assert (d.rule, d.config_path, d.severity, d.line) == ("renamed-key", "noisy_embedding_alpha", Severity.WARNING, 8)
    assert "neftune_noise_alpha" in d.message
    config = trainspec.load(path, family="axolotl")
    assert config.neftune_noise_alpha == 5 and config.noisy_embedding_alpha is None


def test_a_copied_key_stays_and_its_value_is_also_at_the_new_name(write):
    # context parallelism needs flash attention (`context-parallel-needs-flash-attention`)
    text = BASE + "sequence_parallel_degree: 2\nattn_implementation: flash_attention_2\n"
    config = trainspec.load(write("run.yml", text), family="axolotl")
    assert config.context_parallel_size == 2 and config.sequence_parallel_degree == 2


def test_both_names_set_is_refused_or_ignored_as_the_loader_does(write):
    assert found(write, "noisy_embedding_alpha: 5\nneftune_noise_alpha: 4\n") == [
        ("renamed-key-conflict", "noisy_embedding_alpha", Severity.ERROR, 8)
    ]
    assert found(write, "dataset_processes: 4\ndataset_num_proc: 8\n") == [
        ("renamed-key-ignored", "dataset_processes", Severity.WARNING, 8)
    ]
