"""The Axolotl oracle itself (tests/axolotl_loader.py): it refuses, accepts and warns as the release
does at the target, and shows the loader's environment probes the job's machine."""

from __future__ import annotations

import pytest

from .axolotl_loader import TARGET, WORLD_SIZE, load, require

pytestmark = pytest.mark.external  # the loader imports torch and transformers

BASE = """\
base_model: NousResearch/Llama-3.2-1B
datasets:
  - path: teknium/GPT4-LLM-Cleaned
    type: alpaca
output_dir: ./out
micro_batch_size: 1
gradient_accumulation_steps: 1
num_epochs: 1
learning_rate: 0.0002
bf16: true
"""


@pytest.fixture(scope="module", autouse=True)
def _loader():
    require()


def verdict(write, extra: str = ""):
    return load(write("config.yaml", BASE + extra))


def test_the_target_is_stated_once():
    assert TARGET["capabilities"]["n_gpu"] == WORLD_SIZE
    assert set(TARGET) == {"capabilities", "env_capabilities"}


def test_accepts_a_plain_config(write):
    assert verdict(write).outcome == "accepted"


def test_refuses_with_the_loaders_message(write):
    found = verdict(write, "warmup_steps: 10\nwarmup_ratio: 0.1\n")
    assert found.outcome == "refused"
    assert "warmup_steps and warmup_ratio are mutually exclusive" in found.refused


def test_reports_a_type_error_at_its_field(write):
    assert verdict(write, "warmup_steps: 0.5\n").refused.startswith("warmup_steps: Input should be a valid integer")


def test_reads_yaml_1_1(write):
    assert verdict(write, "sample_packing: yes\n").outcome != "refused"  # PyYAML reads `yes` as true


def test_warnings_are_the_loaders_log(write):
    found = verdict(write, "sdpa_varlen: true\n")  # only affects packed rows: a warning, not a refusal
    assert found.outcome == "warnings"
    assert any("sdpa_varlen" in w for w in found.warnings)


def test_the_machine_has_what_the_job_needs(write):
    """fp8 backends, ring_flash_attn and mistral_common are the job's to install, not this machine's."""
    assert verdict(write, "fp8: true\n").accepted
    assert verdict(write, "context_parallel_size: 2\nflash_attention: true\n").accepted
    assert verdict(write, "tokenizer_use_mistral_common: true\n").accepted


def test_a_plugin_whose_module_does_not_import_here_still_validates(write):
    plugin = "plugins:\n  - axolotl.integrations.cut_cross_entropy.CutCrossEntropyPlugin\ncut_cross_entropy: true\n"
    assert verdict(write, plugin).accepted
    refused = verdict(write, plugin + "chunked_cross_entropy: true\n").refused
    assert "Cut Cross Entropy does not support chunked cross entropy" in refused


def test_each_load_starts_afresh(write):
    """Plugins registered by one load are gone in the next, as in a new process."""
    verdict(write, "plugins:\n  - axolotl.integrations.cut_cross_entropy.CutCrossEntropyPlugin\n")
    assert verdict(write, "chunked_cross_entropy: true\n").outcome != "refused"


def test_a_deepspeed_file_is_the_jobs(write):
    """The validators that read the DeepSpeed file find it (on the job's machine); a number is no file."""
    tensor_parallel = "tensor_parallel_size: 2\ndeepspeed: deepspeed_configs/zero3.json\n"
    assert verdict(write, tensor_parallel).outcome != "refused"
    assert verdict(write, "deepcompile: true\ndeepspeed: deepspeed_configs/zero3.json\n").outcome != "refused"
    assert verdict(write, "tensor_parallel_size: 2\ndeepspeed: 1\n").refused.startswith("TypeError: deepspeed: 1")
