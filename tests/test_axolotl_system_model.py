"""The system, model and parallelism rules of the Axolotl family, on the loader's exact conditions.

Every rule's example runs in tests/test_ci_rules.py. Here: each rule names the validator it
mirrors, and the cases where the loader's reading is easy to get wrong (truthiness, a written
`null` against an unwritten key, the loader's own rewrites) give the loader's verdict. Each case
was also run through Axolotl 0.18.0's `validate_config`, which agrees.
"""

from __future__ import annotations

import re

import pytest

from trainspec.api import check
from trainspec.families.axolotl.examples_system_model import EXAMPLES
from trainspec.families.axolotl.rules_system_model import RULES

MODEL = "base_model: NousResearch/Llama-3.2-1B\n"
REST = "datasets:\n  - path: tatsu-lab/alpaca\n    type: alpaca\nlearning_rate: 0.0002\n"


def test_every_rule_has_an_example_and_names_the_validator_it_mirrors():
    assert set(EXAMPLES) == {r.id for r in RULES}
    for r in RULES:
        assert re.fullmatch(r"Mirrors `\w+ValidationMixin\.\w+`\.", r.doc.splitlines()[-1]), r.id


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
    # sequence_parallel_degree stands in for an unset context_parallel_size (the family's migration)
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
def test_the_loaders_exact_conditions(tmp_path, rule_id, text, fires):
    path = tmp_path / "config.yaml"
    path.write_text((text if "base_model" in text else MODEL + text) + REST)
    assert (rule_id in {d.rule for d in check(path, family="axolotl")}) is fires
