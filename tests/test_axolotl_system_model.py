"""The system, model and parallelism rules of the Axolotl family, run directly on YAML configs.

Until the family is registered these tests fill the few schema defaults the rules read
themselves (`DEFAULTS`, Axolotl 0.18.0's defaults), as the engine does, and pass written
values to `raw` rules. Each example must break its own rule and nothing else of this module's
rules may fire on a fix.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml

from trainspec.families.axolotl.examples_system_model import EXAMPLES
from trainspec.families.axolotl.rules_system_model import RULES
from trainspec.rules import ABSENT, Rule
from trainspec.schema import get

DEFAULTS: dict[str, Any] = {
    "val_set_size": 0.0,
    "load_in_8bit": False,
    "load_in_4bit": False,
    "gradient_checkpointing": False,
    "activation_offloading": False,
    "bf16": "auto",
    "micro_batch_size": 1,
    "lr_scheduler": "cosine",
}
BY_ID = {r.id: r for r in RULES}


def written(data: Any, path: tuple[str | int, ...]) -> Any:
    for part in path:
        if not isinstance(data, dict) or part not in data:
            return ABSENT
        data = data[part]
    return data


def found(rule: Rule, text: str) -> list[str]:
    """The messages `rule` gives on the YAML `text`."""
    data = yaml.safe_load(text)
    if rule.raw:
        values = [written(data, p) for p in rule.parsed_paths]
    else:
        filled = {**DEFAULTS, **data}
        values = [get(filled, p) for p in rule.parsed_paths]
    return [v.message for v in rule.run(values, None)]


def test_every_rule_has_an_example_and_names_the_validator_it_mirrors():
    assert set(EXAMPLES) == set(BY_ID)
    for r in RULES:
        assert re.fullmatch(r"Mirrors `\w+ValidationMixin\.\w+`\.", r.doc.splitlines()[-1]), r.id
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", r.id)


@pytest.mark.parametrize("rule_id", sorted(EXAMPLES))
def test_the_example_breaks_its_rule_and_the_fix_breaks_none(rule_id):
    example = EXAMPLES[rule_id]
    assert example.bad is not None
    assert found(BY_ID[rule_id], example.bad)
    assert {r.id: m for r in RULES if (m := found(r, example.good))} == {}


def run(rule_id: str, text: str) -> list[str]:
    """The rule's messages on `text`, with a base model added when it names none."""
    return found(BY_ID[rule_id], text if "base_model" in text else "base_model: NousResearch/Llama-3.2-1B\n" + text)


EDGES: list[tuple[str, str, bool]] = [
    # before-validators see null as unset
    ("max-memory-with-gpu-memory-limit", "max_memory: null\ngpu_memory_limit: 20\n", False),
    ("max-memory-with-gpu-memory-limit", "max_memory: {}\ngpu_memory_limit: 0\n", True),
    # bf16 left out is "auto", which the loader counts as mixed precision; written null is off
    ("better-transformer-no-amp", "flash_optimum: true\n", True),
    ("better-transformer-no-amp", "flash_optimum: true\nbf16: null\n", False),
    ("better-transformer-no-amp", "flash_optimum: true\nbf16: false\nfp16: true\n", True),
    # the offload aliases turn checkpointing on and set activation offloading
    ("activation-offloading-needs-gradient-checkpointing", "gradient_checkpointing: offload_disk\n", False),
    (
        "selective-checkpointing-offloading",
        "gradient_checkpointing: offload\nactivation_offloading: hidden_states\nselective_checkpointing: true\n",
        True,
    ),
    ("selective-checkpointing-needs-gradient-checkpointing", "selective_checkpointing: {}\n", True),
    ("selective-checkpointing-needs-gradient-checkpointing", "selective_checkpointing: false\n", False),
    (
        "selective-checkpointing-adapter-matmul",
        "adapter: lora\ngradient_checkpointing: true\nselective_checkpointing: {save: [addmm]}\n",
        True,
    ),
    (
        "selective-checkpointing-adapter-matmul",
        "adapter: lora\ngradient_checkpointing: true\nselective_checkpointing: true\n",
        False,
    ),
    # the deprecated fsdp_ prefix is stripped first; the later spelling wins
    (
        "mxfp4-no-cpu-ram-efficient-loading",
        "model_quantization_config: Mxfp4Config\nfsdp_config: {fsdp_cpu_ram_efficient_loading: true}\n",
        True,
    ),
    (
        "mxfp4-no-cpu-ram-efficient-loading",
        "model_quantization_config: Mxfp4Config\nfsdp_config: {cpu_ram_efficient_loading: 1}\n",
        False,
    ),
    # sequence_parallel_degree stands in for an unset context_parallel_size
    ("context-parallel-needs-flash-attention", "sequence_parallel_degree: 4\n", True),
    ("context-parallel-needs-flash-attention", "context_parallel_size: 1\nsequence_parallel_degree: 4\n", False),
    ("context-parallel-needs-flash-attention", "context_parallel_size: 2\nflash_attention: true\n", False),
    ("context-parallel-needs-flash-attention", "context_parallel_size: 2\ngemma4_hybrid_attn_impl: true\n", False),
    ("context-parallel-needs-flash-attention", "context_parallel_size: 2\nuse_glm_dsa_kernels: true\n", True),
    (
        "context-parallel-needs-flash-attention",
        "context_parallel_size: 2\nuse_glm_dsa_kernels: true\nplugins: [axolotl.integrations.kernels.KernelsPlugin]\n",
        False,
    ),
    ("relora-incompatible", "relora: true\njagged_restart_steps: 50\nadapter: lora\nfsdp_config: {}\n", True),
    ("relora-needs-lora-adapter", "relora: true\njagged_restart_steps: 50\n", True),
    (
        "relora-needs-lora-adapter",
        "relora: true\njagged_restart_steps: 50\nadapter: qlora\nload_in_4bit: true\n",
        False,
    ),
    ("early-stopping-eval-divides-save", "early_stopping_patience: 2\nsave_steps: 0.5\neval_steps: 0.25\n", False),
    ("neftune-noise-alpha-positive", "neftune_noise_alpha: -1\n", True),
    ("mpt-no-gradient-checkpointing", "base_model: someone/prompt-tuned\ngradient_checkpointing: true\n", True),
]
"""Conditions where the loader's reading is easy to get wrong; each was run through the loader too."""


@pytest.mark.parametrize(("rule_id", "text", "fires"), EDGES)
def test_the_loaders_exact_conditions(rule_id, text, fires):
    assert bool(run(rule_id, text)) is fires
