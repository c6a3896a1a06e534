"""The rules of Axolotl's config classes (`rules_config*`), run directly on parsed YAML.

The examples were checked against Axolotl 0.18.0's loader (it refuses or warns about
each broken config and accepts each fixed one); here each rule must fire on its broken
config and no rule of these modules on any fixed one. GPU rules take the target device
(`--gpu`, from trainspec's catalogue of GPUs).
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from trainspec.families.axolotl.attention import attention
from trainspec.families.axolotl.capabilities import Capabilities, capabilities, sm_number
from trainspec.families.axolotl.examples_config import EXAMPLES
from trainspec.families.axolotl.rules_config import RULES, fsdp_version
from trainspec.spec.device import Device, target
from trainspec.spec.paths import Path
from trainspec.spec.rules import ABSENT, Rule, Violation
from trainspec.spec.schema import get

DEFAULTS: dict[Path, Any] = {("bf16",): "auto", ("tf32",): "auto", ("save_safetensors",): True, ("lora_dropout",): 0.0}
"""The schema defaults these rules read that are not null (the engine fills them before rules run)."""

BY_ID = {r.id: r for r in RULES}
GPUS = {name: target(name) for name in ("v100", "t4", "a100", "l40s", "h100", "b200", "mi300x")}


def _value(data: dict[str, Any], path: Path, raw: bool) -> Any:
    if raw:
        for part in path:
            if not isinstance(data, dict) or part not in data:
                return ABSENT
            data = data[part]
        return data
    found = get(data, path)
    return DEFAULTS.get(path) if found is None else found


def run(rule: Rule, text: str, *, world_size: int = 1, device: Device | None = None) -> list[Violation]:
    """The rule's findings on a YAML config, as the engine would call it."""
    data = yaml.safe_load(text)
    values = [_value(data, p, rule.raw) for p in rule.parsed_paths]
    kwargs: dict[str, Any] = {}
    if rule.needs_world_size:
        kwargs["world_size"] = world_size
    if rule.needs_registries:
        kwargs["registries"] = {}
    if rule.needs_device:
        kwargs["device"] = device or GPUS["h100"]
    return [f if isinstance(f, Violation) else Violation(f) for f in rule.check(*values, **kwargs)]


def fired(text: str, *, world_size: int = 1, device: Device | None = None) -> set[str]:
    return {r.id for r in RULES if run(r, text, world_size=world_size, device=device)}


def test_every_rule_has_one_example_and_ids_are_unique():
    assert len(BY_ID) == len(RULES)
    assert set(EXAMPLES) == set(BY_ID)
    assert {i for i, e in EXAMPLES.items() if e.run.gpu} == {r.id for r in RULES if r.needs_device}


def test_every_rule_names_the_validator_it_mirrors():
    for r in RULES:
        last = r.doc.splitlines()[-1]
        assert last.startswith("Mirrors `") and last.endswith("`."), r.id
        cls, _, method = last[len("Mirrors `") : -2].partition(".")
        assert cls and method, r.id


@pytest.mark.parametrize("rule_id", sorted(EXAMPLES))
def test_an_example_breaks_its_rule_and_the_fix_breaks_none(rule_id):
    example = EXAMPLES[rule_id]
    size = example.run.world_sizes[0] if example.run.world_sizes else 1
    device = target(example.run.gpu or "h100")
    assert rule_id in fired(example.bad or "", world_size=size, device=device)
    assert fired(example.good, world_size=size, device=device) == set()
    if example.run.gpu:
        assert rule_id not in fired(example.bad or "", device=GPUS["h100"])  # each passes on an H100


# -- the GPU as the loader reads it ------------------------------------------------------------


def test_capabilities_follow_the_loader_probe():
    assert capabilities(GPUS["h100"]) == Capabilities(bf16=True, tf32=True, fp8=True, compute_capability="sm_90")
    assert capabilities(GPUS["l40s"]) == Capabilities(bf16=True, tf32=True, fp8=False, compute_capability="sm_89")
    assert capabilities(GPUS["v100"]) == Capabilities(bf16=False, tf32=False, fp8=False, compute_capability="sm_70")
    assert capabilities(GPUS["b200"]).compute_capability == "sm_100"
    assert capabilities(GPUS["mi300x"]) == Capabilities(bf16=True, tf32=False, fp8=True, compute_capability=None)
    assert sm_number("sm_120") == 120 and sm_number("gfx942") is None


def test_sage_attention_runs_on_the_listed_capabilities_only():
    sage = "attn_implementation: sage\n"
    assert "sage-attention-compute-capability" not in fired(sage, device=GPUS["a100"])
    assert "sage-attention-compute-capability" in fired(sage, device=GPUS["b200"])  # sm_100 is not listed
    assert "sage-attention-compute-capability" in fired(sage, device=GPUS["mi300x"])  # no capability: refused


def test_fp8_attention_accepts_newer_capabilities_and_skips_an_unknown_one():
    fp8 = "attn_implementation: fp8\n"
    assert "fp8-attention-needs-hopper" not in fired(fp8, device=GPUS["b200"])
    assert "fp8-attention-needs-hopper" not in fired(fp8, device=GPUS["mi300x"])


def test_sdpa_packing_warns_off_sm_90_even_with_bf16_auto():
    text = "attn_implementation: sdpa\nsample_packing: true\n"  # bf16 defaults to auto, which counts
    assert "sdpa-packing-bf16" in fired(text, device=GPUS["b200"])
    assert "sdpa-packing-bf16" not in fired(text + "bf16: false\n", device=GPUS["b200"])


def test_bf16_warning_spares_merging_and_auto():
    assert "bf16-unsupported-gpu" not in fired("bf16: true\nmerge_lora: true\n", device=GPUS["v100"])
    assert "bf16-unsupported-gpu" not in fired("bf16: auto\n", device=GPUS["v100"])
    assert "bf16-unsupported-gpu" in fired("bfloat16: true\nbf16: false\n", device=GPUS["v100"])


# -- the loader's own readings ------------------------------------------------------------------


def test_the_attention_backend_as_the_loader_settles_it():
    flags = dict.fromkeys(("xformers", "sage", "flex", "flash", "sdp", "eager"), None)
    assert attention("sdpa", None, *flags.values()) == "sdpa"
    assert attention(None, None, None, None, None, True, True, None) == "flash_attention_2"  # flash before sdp
    assert attention(None, True, *flags.values()) == "flash_attention_2"  # gemma4 hybrid
    assert attention(None, None, *flags.values()) is None
    assert fired("sage_attention: true\n") >= {"legacy-attention-flag", "sage-attention-full-finetune"}


def test_a_legacy_flag_is_warned_about_once_and_refused_beside_attn_implementation():
    text = "flash_attention: true\nsdp_attention: true\n"
    assert [v.message.split(":")[0] for v in run(BY_ID["legacy-attention-flag"], text)] == ["flash_attention"]
    combined = fired("attn_implementation: sdpa\nflash_attention: true\n")
    assert "attention-flag-with-attn-implementation" in combined and "legacy-attention-flag" not in combined
    assert fired("gemma4_hybrid_attn_impl: true\nsdp_attention: true\n") == {"legacy-attention-flag"}


def test_the_fsdp_version_after_the_loader_defaults():
    assert fsdp_version(None, {"version": 2}) == "2"
    assert fsdp_version(None, {"fsdp_version": 2}) == "2"
    assert fsdp_version(None, {"offload_params": False}) == "1"
    assert fsdp_version(None, {}) == "None"
    assert "fp32-norms-need-fsdp2" not in fired("fp32_norms: true\nfsdp_config:\n  version: 2\n")
    assert "fp32-norms-need-fsdp2" in fired("fp32_norms: true\n")


def test_lora_kernels_read_only_the_top_level_fsdp_version_and_need_several_gpus():
    text = "lora_mlp_kernel: true\nfsdp_config:\n  version: 2\n"  # the loader checks before it reads version
    assert "lora-kernels-with-fsdp1" in fired(text, world_size=8)
    assert "lora-kernels-with-fsdp1" not in fired(text, world_size=1)
    assert "lora-kernels-with-fsdp1" in fired("lora_o_kernel: true\nfsdp_config: {}\n", world_size=2)
    assert "lora-kernels-with-fsdp1" not in fired("lora_o_kernel: true\n", world_size=2)


def test_torch_compile_options_count_even_when_empty():
    assert "torch-compile-options-need-torch-compile" in fired("torch_compile_options: {}\n")
    assert "torch-compile-options-need-torch-compile" not in fired("torch_compile: auto\ntorch_compile_options: {}\n")


def test_beta_against_trl():
    assert "beta-matches-trl-beta" in fired("beta: 0.1\ntrl: null\n")  # the loader fails reading trl.beta
    assert "beta-matches-trl-beta" not in fired("beta: 0.1\ntrl:\n  beta: null\n")
    assert "beta-matches-trl-beta" not in fired("beta: 0.1\n")


def test_qat_reads_the_section_as_written():
    assert "qat-exclusive" not in fired("qat: {}\nload_in_4bit: true\nadapter: lora\n")
    assert "qat-exclusive" in fired("qat:\n  weight_dtype: int8\npeft:\n  loftq_config:\n    loftq_bits: 4\n")


def test_quantize_moe_experts_reports_each_missing_piece():
    found = run(BY_ID["quantize-moe-experts-setup"], "quantize_moe_experts: true\nlora_target_linear: true\n")
    assert len(found) == 3


def test_a_plugin_adapter_needs_its_plugin():
    rule = BY_ID["adapter-known"]
    mora = "adapter: mora\n"
    assert "MoraPlugin" in run(rule, mora)[0].message
    assert run(rule, mora + "plugins:\n  - axolotl.integrations.mora.MoraPlugin\n") == []
    assert run(rule, "adapter: dora\nplugins:\n  - my_company.AdapterPlugin\n") == []  # it may register any
    assert run(rule, "adapter: dora\nplugins:\n  - axolotl.integrations.liger.LigerPlugin\n") != []
    assert list(rule.check("dora", None, registries={"adapter": ("dora",)})) == []


def test_qlora_checks_depend_on_merging():
    assert len(run(BY_ID["qlora-quantization"], "adapter: qlora\nload_in_8bit: true\n")) == 2  # 8bit, and not 4bit
    merging = "adapter: qlora\nmerge_lora: true\nload_in_4bit: true\n"
    assert "can" in run(BY_ID["qlora-quantization"], merging)[0].message
    assert run(BY_ID["qlora-quantization"], "adapter: qlora\nmerge_lora: true\n") == []


def test_dataset_checks_skip_preference_and_synthetic_datasets():
    jinja = "datasets:\n  - path: a\n    type: chat_template\n    chat_template: jinja\n"
    assert "chat-template-jinja-needed" in fired(jinja)
    assert "chat-template-jinja-needed" not in fired(jinja + "rl: dpo\n")
    synthetic = "datasets:\n  - type: _synthetic\n    message_field_role: from\n"
    assert "legacy-message-field" not in fired(synthetic)


def test_a_null_legacy_message_field_counts_as_left_out():
    text = (
        "datasets:\n  - path: a\n    message_field_content: null\n    message_property_mappings:\n      content: text\n"
    )
    assert not fired(text) & {"message-field-conflict", "legacy-message-field"}  # as in a resolved config's dump


def test_fsdp_prefixed_keys_are_the_same_keys():
    text = "fsdp_config:\n  fsdp_auto_wrap_policy: SIZE_BASED_WRAP\n"
    assert "fsdp-size-based-wrap-needs-min-params" in fired(text)
    assert "fsdp-size-based-wrap-needs-min-params" not in fired(text + "  fsdp_min_num_params: 1000\n")


def test_untrained_tokens_against_a_mapping_of_layers():
    text = "fix_untrained_tokens: 1\npeft_trainable_token_indices:\n  embed_tokens: [1]\n"
    assert "fix-untrained-token-not-trainable" in fired(text)  # the loader looks among the layer names


def test_deprecated_gc_steps():
    assert "torch_empty_cache_steps" not in run(BY_ID["gc-steps-deprecated"], "gc_steps: -1\n")[0].message
    assert "ignored" in run(BY_ID["gc-steps-deprecated"], "gc_steps: 5\ngc_collect_steps: 3\n")[0].message
