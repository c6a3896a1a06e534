"""Axolotl's own overrides (`load_cfg(config, **overrides)`): applied to the file as read, values converted
as its command line converts them; where Axolotl ends elsewhere than trainspec's `--set`, an error says so."""

from __future__ import annotations

from typing import Any

import pytest

import trainspec
from trainspec.families.axolotl.overrides import coerce

BASE = """
base_model: NousResearch/Llama-3.2-1B
learning_rate: 0.0002
micro_batch_size: 2
gradient_accumulation_steps: 1
datasets:
  - path: teknium/GPT4-LLM-Cleaned
    type: alpaca
adapter: lora
lora_r: 8
lora_alpha: 16
lora_target_linear: true
load_in_8bit: false
"""

TARGET: dict[str, Any] = {"world_size": 8, "gpu": "h100"}
"""The target the family's GPU and world-size rules read (without one, a note says they were skipped)."""


def found(write, *overrides: str, extra: str = "") -> list[tuple[str, str]]:
    path = write("run.yml", BASE + extra)
    return [(d.rule, d.message) for d in trainspec.check(path, family="axolotl", overrides=overrides, **TARGET)]


@pytest.mark.parametrize(
    ("text", "current", "value"),
    [
        ("yes", None, True),
        ("No", None, False),
        ("~", None, None),
        ("8", None, 8),
        ("1e-4", None, 1e-4),
        ("cosine", None, "cosine"),
        ("1", False, True),
        ("on", True, False),
        ("2.5", 4, "2.5"),
        ("3", 0.5, 3.0),
        ("[a, b]", ["a"], "[a, b]"),
    ],
)
def test_a_value_is_converted_as_axolotl_converts_it(text, current, value):
    result = coerce(text, current)
    assert result == value and type(result) is type(value)


def test_overrides_axolotl_applies_alike_pass(write):
    assert found(write, "micro_batch_size=4", "trl.beta=0.1", "load_in_8bit=true") == []


def test_a_value_axolotl_converts_to_something_it_refuses_is_an_error(write):
    """`no` is text for YAML 1.2 and the string field, but Axolotl's override reads it as false."""
    ((rule, message),) = found(write, "eval_strategy=no")
    assert rule == "override-refused-by-loader" and "`eval_strategy`" in message and "false" in message


def test_a_path_axolotl_cannot_reach_is_an_error(write):
    ((rule, message),) = found(write, "datasets[0].type=completion")
    assert rule == "override-refused-by-loader" and "nothing deeper" in message


def test_strict_ignores_an_override_of_a_key_the_file_does_not_set(write):
    ((rule, message),) = found(write, "warmup_steps=10", extra="strict: true\n")
    assert rule == "override-refused-by-loader" and "ignores" in message
    assert found(write, "load_in_8bit=true", extra="strict: true\n") == []


def test_overrides_apply_before_the_retired_keys_are_checked(write):
    """The loader validates after its overrides: a retired key set from the command line is refused too."""
    rules = [rule for rule, _ in found(write, "max_packed_sequence_len=2048")]
    assert "override-refused-by-loader" in rules
