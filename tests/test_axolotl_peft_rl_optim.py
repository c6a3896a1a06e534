"""The Axolotl rules for adapters, RL trainers, optimizers and FSDP, run by the rule engine.

Each case's verdict is the one Axolotl 0.18.0's own `validate_config` gives (at one GPU unless a
world size is named): the rules must refuse what it refuses, for the same reason, and accept
what it accepts. The configs are the examples' small SFT run plus a few keys.
"""

from __future__ import annotations

import re

import pytest

from trainspec.families.axolotl.examples_peft_rl_optim import BASE, EXAMPLES
from trainspec.families.axolotl.fsdp_prefix import NOTICES, migrate_fsdp_prefix
from trainspec.families.axolotl.rules_peft_rl_optim import RULES
from trainspec.read.files import parse
from trainspec.rules.evaluate import run_rules
from trainspec.spec.diagnostics import Severity
from trainspec.spec.rules import Context

DEFAULTS = {"optimizer": "adamw_torch_fused", "micro_batch_size": 1, "gradient_accumulation_steps": 1, "bf16": "auto"}
"""The schema defaults the rules that read filled-in values see (those the loader's model has)."""


def findings(text: str, world_size: int | None = None) -> list[tuple[str, Severity, str]]:
    """What this area's migration and rules say about `text` (the world-size rules only at a known world size)."""
    doc = parse("example.yaml", text)
    migrated = migrate_fsdp_prefix(doc)
    rules = [r for r in RULES if world_size is not None or not r.needs_world_size]
    config = {**DEFAULTS, **doc.data}
    return [
        (d.rule, d.severity, d.message)
        for d in [*migrated, *run_rules(doc, rules, config, [], Context().at(world_size))]
    ]


def ids(extra: str, world_size: int | None = None) -> set[str]:
    return {
        rule
        for rule, _, _ in findings(BASE + "micro_batch_size: 1\ngradient_accumulation_steps: 1\n" + extra, world_size)
    }


SEVERITY = {**{r.id: r.severity for r in RULES}, **{k: n.severity for k, n in NOTICES.items()}}
DOCS = {**{r.id: r.doc for r in RULES}, **{k: n.doc for k, n in NOTICES.items()}}


def test_every_id_has_one_example_and_says_what_it_mirrors():
    assert set(SEVERITY) == set(EXAMPLES)
    assert len(SEVERITY) == len(RULES) + len(NOTICES)
    for rule_id, doc in DOCS.items():
        mixin = r"(LoRA|RL|GRPOVllm|Optimization)ValidationMixin"
        assert re.fullmatch(rf"Mirrors `{mixin}\.\w+`\.", doc.splitlines()[-1]), rule_id


@pytest.mark.parametrize("rule_id", sorted(SEVERITY))
def test_each_example_breaks_its_rule_and_the_fix_breaks_none(rule_id):
    example = EXAMPLES[rule_id]
    size = example.run.world_sizes[0] if example.run.world_sizes else None
    assert example.bad is not None
    bad = findings(example.bad, size)
    assert {severity for found, severity, _ in bad if found == rule_id} == {SEVERITY[rule_id]}, bad
    assert findings(example.good, size) == []


KERNELS = "plugins:\n  - axolotl.integrations.kernels.KernelsPlugin\nuse_kernels: true\n"
DSV4_MOE = "use_scattermoe: true\nuse_dsv4_kernels: true\n"
"""ScatterMoE with DeepSeek-V4's kernels: the kernels plugin turns `lora_mlp_kernel` off (each case with it was
probed through Axolotl 0.18.0 and 0.19.0)."""
LORA_8BIT = "adapter: lora\nload_in_8bit: true\n"
LORA_8BIT_ID, REMOTE = {"lora-kernels-with-8bit-lora"}, {"lora-kernels-with-remote-code"}
CASES = [
    # the fsdp_ prefix is stripped and the version taken from fsdp_config before any FSDP check
    ("optimizer: muon\nfsdp_config:\n  version: 2\n", None, set()),
    ("optimizer: muon\nfsdp_config:\n  fsdp_version: 2\n", None, set()),
    ("optimizer: muon\nfsdp_config:\n  version: 1\n", None, {"muon-needs-ddp-or-fsdp2", "fsdp1-deprecated"}),
    ("optimizer: muon\nfsdp: [full_shard]\n", None, {"muon-needs-ddp-or-fsdp2"}),
    ("optimizer: muon\nfsdp: [full_shard]\nfsdp_version: 2\n", None, set()),
    ("optimizer: muon\nfsdp_config: {}\n", None, set()),
    ("fsdp_config:\n  offload_params: true\n", None, {"fsdp1-deprecated"}),
    (
        "fsdp_version: 2\nfsdp_config:\n  fsdp_cpu_offload_pin_memory: false\n",
        None,
        {"fsdp-pin-memory", "fsdp-config-prefix"},
    ),
    (
        "fsdp_version: 2\nfsdp_config:\n  cpu_offload_pin_memory: false\n  fsdp_offload_params: true\n",
        None,
        {"fsdp-config-prefix"},
    ),
    ("fsdp_config:\n  fsdp_version: 2\n  cpu_offload_pin_memory: false\n  offload_params: true\n", None, set()),
    (
        "optimizer: adamw_8bit\nfsdp_config:\n  fsdp_offload_params: true\n",
        None,
        {"fsdp1-offload-with-8bit-optimizer", "fsdp1-deprecated", "fsdp-config-prefix"},
    ),
    ("optimizer: adamw_torch_8bit\nfsdp_version: 2\nfsdp_config:\n  offload_params: true\n", None, set()),
    # upstream compares fsdp_version with the number 2 here: a quoted "2" passes
    ("fsdp_version: '2'\nrl: dpo\nload_in_8bit: true\nadapter: lora\n", None, set()),
    (
        "fsdp_config:\n  fsdp_version: 2\nrl: dpo\nload_in_8bit: true\nadapter: lora\n",
        None,
        {"fsdp2-quantized-preference-rl"},
    ),
    # Q-GaLore reads bf16 as written: the default "auto" is not written
    ("optimizer: q_galore_adamw8bit\nbf16: auto\n", None, set()),
    ("optimizer: q_galore_adamw8bit\nbf16: false\n", None, {"q-galore-without-mixed-precision"}),
    (
        "optimizer: q_galore_adamw8bit\nbf16: true\nfsdp_version: 2\nfsdp_config:\n  fsdp_use_orig_params: true\n",
        None,
        {"fsdp-config-prefix"},
    ),
    ("optimizer: q_galore_adamw8bit\nbf16: true\nadapter: lora\ndeepspeed: ds.json\n", None, {"q-galore-setup"}),
    # AdamW's settings: a zero is not set, the default optimizer is AdamW, null is none
    ("adam_beta1: 0.9\n", None, set()),
    ("adam_beta1: 0.0\noptimizer: adafactor\n", None, set()),
    ("adam_beta1: 0.9\noptimizer: null\n", None, {"adamw-params-without-adamw"}),
    ("adam_epsilon: 1.0e-8\noptimizer: muon\n", None, {"adamw-params-without-adamw"}),
    # KTO: skip_prepare_dataset sets remove_unused_columns to false when it is not written
    ("rl: kto\nskip_prepare_dataset: true\n", None, set()),
    ("rl: kto\nskip_prepare_dataset: true\nremove_unused_columns: true\n", None, {"kto-remove-unused-columns"}),
    ("rl: kto\nremove_unused_columns: null\n", None, {"kto-remove-unused-columns"}),
    # the deprecated attention flags choose the backend batch flattening needs
    ("batch_flattening: true\nflash_attention: true\n", None, {"batch-flattening-no-effect"}),
    ("batch_flattening: auto\nattn_implementation: sdpa\n", None, set()),
    (
        "batch_flattening: true\nattn_implementation: flash_attention_2\nsample_packing: true\n",
        None,
        {"batch-flattening-setup", "batch-flattening-no-effect"},
    ),
    ("liger_cross_entropy: false\nchunked_cross_entropy: true\n", None, set()),
    ("cut_cross_entropy: true\nliger_fused_linear_cross_entropy: true\n", None, {"cross-entropy-patches-conflict"}),
    # null where upstream expects a mapping or a number: its loader fails
    ("rl: gdpo\ntrl: null\n", None, {"gdpo-aggregation"}),
    ("rl: grpo\ntrl:\n  use_liger_loss: true\ncontext_parallel_size: null\n", None, {"grpo-liger-context-parallel"}),
    ("rl: grpo\ntrl:\n  use_liger_loss: true\ncontext_parallel_size: 1\n", None, set()),
    # DPO's loss list
    ("rl: dpo\ndpo_loss_weights: [1.0]\n", None, {"dpo-loss-weights"}),
    ("rl: orpo\ndpo_loss_type: [sigmoid]\n", None, {"dpo-loss-weights"}),
    ("dpo_loss_type: [sigmoid]\n", None, {"dpo-loss-weights"}),
    ("rl: dpo\ndpo_loss_type: [sigmoid, ipo]\ndpo_loss_weights: [1.0, 2.0]\n", None, set()),
    # GRPO's generation batch, at one and at several GPUs
    ("rl: grpo\ntrl:\n  num_generations: 4\n  generation_batch_size: 8\n", 2, set()),
    ("rl: grpo\ntrl:\n  num_generations: 4\n  generation_batch_size: 8\n", 4, {"grpo-generation-batch-per-rank"}),
    ("rl: grpo\ntrl:\n  num_generations: 4\n  generation_batch_size: 6\n", None, {"grpo-generation-batch-size"}),
    ("rl: grpo\n", 8, set()),
    ("rl: grpo\ntrl:\n  num_generations: 1\n", 8, {"grpo-num-generations"}),
    # QLoRA RL with reentrant checkpointing fails only when distributed
    (
        "rl: dpo\nadapter: qlora\nload_in_4bit: true\ngradient_checkpointing: true\n"
        "gradient_checkpointing_kwargs:\n  use_reentrant: true\n",
        1,
        set(),
    ),
    # LoRA kernels: any one of them counts, whatever the adapter for remote code
    ("lora_o_kernel: true\ntrust_remote_code: true\n", None, {"lora-kernels-with-remote-code"}),
    ("adapter: lora\nload_in_8bit: true\nlora_mlp_kernel: false\n", None, set()),
    # the kernels plugin turns lora_mlp_kernel off under the MoE kernels with DeepSeek-V4's, before these checks
    (f"{LORA_8BIT}lora_mlp_kernel: true\n{KERNELS}{DSV4_MOE}", None, set()),
    (f"lora_mlp_kernel: true\ntrust_remote_code: true\n{KERNELS}{DSV4_MOE}", None, set()),
    (f"lora_o_kernel: true\nlora_mlp_kernel: true\ntrust_remote_code: true\n{KERNELS}{DSV4_MOE}", None, REMOTE),
    (f"{LORA_8BIT}lora_mlp_kernel: true\n{KERNELS}use_scattermoe: true\n", None, {"lora-kernels-with-8bit-lora"}),
    # `use_scattermoe: 1` is not `is True` to the plugin: the kernel stays on
    (f"{LORA_8BIT}lora_mlp_kernel: true\n{KERNELS}use_scattermoe: 1\nuse_dsv4_kernels: true\n", None, LORA_8BIT_ID),
    ("adapter: lora\npeft_layers_to_transform: [0]\nunfrozen_parameters: []\n", None, set()),
    (
        "adapter: qlora\nload_in_4bit: true\ndeepspeed: zero2.json\n"
        "gradient_checkpointing_kwargs:\n  use_reentrant: false\n",
        None,
        set(),
    ),
]


@pytest.mark.parametrize(("extra", "world_size", "expected"), CASES, ids=[str(i) for i in range(len(CASES))])
def test_verdicts_agree_with_the_loader(extra, world_size, expected):
    assert ids(extra, world_size) == expected


def test_messages_name_the_values_and_the_fix():
    [(_, _, grpo)] = findings(
        BASE + "micro_batch_size: 2\ngradient_accumulation_steps: 1\nrl: grpo\ntrl:\n  num_generations: 3\n"
    )
    assert "generation batch 2 (micro_batch_size × gradient_accumulation_steps = 2 × 1)" in grpo
    assert "trl.num_generations = 3" in grpo and "gradient_accumulation_steps: 3" in grpo
    [(_, _, muon)] = findings(BASE + "optimizer: muon\nfsdp: [full_shard]\n")
    assert muon == 'optimizer = "muon" works only with FSDP2, but fsdp_version = 1; set fsdp_version: 2'


def test_the_prefix_migration_moves_each_prefixed_key_where_the_loader_reads_it():
    text = (
        BASE + "fsdp_version: 2\nfsdp_config:\n  fsdp_offload_params: true\n  fsdp_state_dict_type: FULL_STATE_DICT\n"
    )
    doc = parse("example.yaml", text)
    found = migrate_fsdp_prefix(doc)
    assert doc.data["fsdp_config"] == {"offload_params": True, "state_dict_type": "FULL_STATE_DICT"}
    assert [(d.config_path, d.line) for d in found] == [
        ("fsdp_config.fsdp_offload_params", 10),
        ("fsdp_config.fsdp_state_dict_type", 11),
    ]
    assert found[1].message.endswith("write fsdp_config.state_dict_type")
    assert doc.where(("fsdp_config", "offload_params")).line == 10  # later findings point at the written key


@pytest.mark.parametrize(
    ("keys", "kept"),
    [
        ("  offload_params: false\n  fsdp_offload_params: true\n", True),
        ("  fsdp_offload_params: true\n  offload_params: false\n", False),
    ],
)
def test_of_two_keys_the_loader_reads_as_one_the_later_wins(keys, kept):
    doc = parse("example.yaml", BASE + "fsdp_version: 2\nfsdp_config:\n" + keys)
    [found] = migrate_fsdp_prefix(doc)
    assert doc.data["fsdp_config"] == {"offload_params": kept}
    assert found.severity is Severity.WARNING and ("written later, wins" in found.message) is not kept


def test_trainspec_migrate_renames_the_keys_in_place(tmp_path):
    from trainspec.spec.family import Family
    from trainspec.write.migrate import migrate

    family = Family(name="fsdp-only", schema_file=tmp_path / "s.json", model="x:X", migrations=(migrate_fsdp_prefix,))
    text = "fsdp_config:\n  fsdp_offload_params: true  # offload\n  reshard_after_forward: true\nfsdp_version: 2\n"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("trainspec.write.migrate.get_family", lambda name: family)
        result = migrate("a.yaml", "fsdp-only", text)
    assert result.new_text == text.replace("fsdp_offload_params", "offload_params")
