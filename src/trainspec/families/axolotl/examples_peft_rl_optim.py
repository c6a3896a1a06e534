"""Examples for the adapter, RL and optimizer rules: a small LoRA/SFT run with one change that breaks a rule.

Every config is the same short SFT run (`BASE`) plus the keys the rule reads; the fix replaces
or removes one piece of them, so each example shows exactly what changes. Axolotl's own loader
refuses (or warns about) each bad config for the reason the rule gives and accepts each fix.
"""

from __future__ import annotations

from trainspec.spec.errors import InvalidValue
from trainspec.spec.examples import Example, Run

BASE = """base_model: HuggingFaceTB/SmolLM2-135M
datasets:
  - path: mhenrichsen/alpaca_2k_test
    type: alpaca
num_epochs: 1
learning_rate: 0.0002
output_dir: ./outputs/out
"""


def _fix(extra: str, old: str, new: str = "", *, world_size: int = 0, batch: tuple[int, int] = (1, 1)) -> Example:
    """`BASE` with a micro batch size and gradient accumulation (`batch`) plus `extra`, fixed by replacing
    `old` (which must occur in those added lines) with `new`."""
    tail = f"micro_batch_size: {batch[0]}\ngradient_accumulation_steps: {batch[1]}\n{extra}"
    if old not in tail:
        raise InvalidValue(f"{old!r} is not in the example")
    run = Run(world_sizes=(world_size,)) if world_size else Run()
    return Example(BASE + tail, BASE + tail.replace(old, new), "yaml", run=run)


_QLORA_REENTRANT = """rl: dpo
adapter: qlora
load_in_4bit: true
gradient_checkpointing: true
gradient_checkpointing_kwargs:
  use_reentrant: true
"""
_GRPO = "rl: grpo\ntrl:\n  num_generations: 4\n"
_FSDP1 = "fsdp_version: 1\nfsdp_config:\n  offload_params: true\n"
_FSDP2 = _FSDP1.replace("fsdp_version: 1", "fsdp_version: 2")

EXAMPLES: dict[str, Example] = {
    "vllm-mode-unset": _fix(
        _GRPO + "  use_vllm: true\n", "  use_vllm: true\n", "  use_vllm: true\n  vllm_mode: colocate\n", batch=(1, 4)
    ),
    "lr-groups-with-loraplus": _fix(
        "adapter: lora\nloraplus_lr_ratio: 16\nlr_groups:\n  - name: attention\n    modules: [q_proj]\n    lr: 0.001\n",
        "loraplus_lr_ratio: 16\n",
    ),
    "unfrozen-parameters-with-peft-layers": _fix(
        "adapter: lora\npeft_layers_to_transform: [0, 1]\nunfrozen_parameters:\n  - model.embed_tokens.*\n",
        "unfrozen_parameters:\n  - model.embed_tokens.*\n",
    ),
    "peft-layers-pattern-without-layers": _fix(
        "adapter: lora\npeft_layers_pattern: [layers]\n",
        "adapter: lora\n",
        "adapter: lora\npeft_layers_to_transform: [0, 1]\n",
    ),
    "fused-mlp-with-lora": _fix("adapter: lora\nflash_attn_fuse_mlp: true\n", "flash_attn_fuse_mlp: true\n"),
    "onebitllms-with-lora": _fix("adapter: lora\nuse_onebitllms: true\n", "adapter: lora\n"),
    "qlora-zero3-non-reentrant": _fix(
        "adapter: qlora\nload_in_4bit: true\ngradient_checkpointing: true\ngradient_checkpointing_kwargs:\n"
        "  use_reentrant: false\ndeepspeed: deepspeed_configs/zero3_bf16.json\n",
        "use_reentrant: false",
        "use_reentrant: true",
    ),
    "lora-kernels-with-8bit-lora": _fix(
        "adapter: lora\nload_in_8bit: true\nlora_mlp_kernel: true\n", "lora_mlp_kernel: true", "lora_mlp_kernel: false"
    ),
    "lora-kernels-with-remote-code": _fix(
        "lora_qkv_kernel: true\ntrust_remote_code: true\n", "trust_remote_code: true", "trust_remote_code: false"
    ),
    "sample-packing-with-rl": _fix(
        "rl: dpo\nattn_implementation: flash_attention_2\nsample_packing: true\n",
        "sample_packing: true",
        "sample_packing: false",
    ),
    "kto-sample-packing": _fix(
        "rl: kto\nremove_unused_columns: false\neval_sample_packing: true\n",
        "eval_sample_packing: true",
        "eval_sample_packing: false",
    ),
    "kto-remove-unused-columns": _fix("rl: kto\n", "rl: kto\n", "rl: kto\nremove_unused_columns: false\n"),
    "grpo-liger-context-parallel": _fix(
        "rl: grpo\ntrl:\n  use_liger_loss: true\nattn_implementation: flash_attention_2\ncontext_parallel_size: 2\n",
        "context_parallel_size: 2\n",
    ),
    "rl-qlora-reentrant-distributed": _fix(
        _QLORA_REENTRANT, "use_reentrant: true", "use_reentrant: false", world_size=2
    ),
    "gdpo-aggregation": _fix(
        "rl: gdpo\ntrl:\n  multi_objective_aggregation: sum_then_normalize\n",
        "multi_objective_aggregation: sum_then_normalize",
        "multi_objective_aggregation: normalize_then_sum",
    ),
    "ipo-deprecated": _fix("rl: ipo\n", "rl: ipo\n", "rl: dpo\ndpo_loss_type: [ipo]\n"),
    "dpo-loss-weights": _fix(
        "rl: dpo\ndpo_loss_type: [sigmoid, ipo]\ndpo_loss_weights: [1.0]\n",
        "dpo_loss_weights: [1.0]",
        "dpo_loss_weights: [1.0, 0.5]",
    ),
    "grpo-num-generations": _fix(
        "rl: grpo\ntrl:\n  num_generations: 1\n", "num_generations: 1", "num_generations: 2", batch=(1, 2)
    ),
    "grpo-generation-batch-size": _fix(
        "rl: grpo\ntrl:\n  num_generations: 3\n",
        "gradient_accumulation_steps: 1",
        "gradient_accumulation_steps: 3",
        batch=(2, 1),
    ),
    "grpo-generation-batch-per-rank": _fix(
        _GRPO, "gradient_accumulation_steps: 2", "gradient_accumulation_steps: 4", world_size=2, batch=(2, 2)
    ),
    "adamw-params-without-adamw": _fix(
        "optimizer: adafactor\nadam_beta2: 0.95\n", "optimizer: adafactor", "optimizer: adamw_torch"
    ),
    "muon-needs-ddp-or-fsdp2": _fix(_FSDP1 + "optimizer: muon\n", "fsdp_version: 1", "fsdp_version: 2"),
    "flash-optimizer-needs-ddp-or-fsdp2": _fix(
        "optimizer: flash_adamw\ndeepspeed: deepspeed_configs/zero2.json\n", "deepspeed: deepspeed_configs/zero2.json\n"
    ),
    "q-galore-setup": _fix(
        "bf16: true\noptimizer: q_galore_adamw8bit\nfsdp_version: 2\nfsdp_config:\n  offload_params: false\n",
        "offload_params: false",
        "use_orig_params: true",
    ),
    "q-galore-without-mixed-precision": _fix("optimizer: q_galore_adamw8bit\n", "optimizer:", "bf16: true\noptimizer:"),
    "batch-flattening-setup": _fix(
        "attn_implementation: sdpa\nbatch_flattening: true\n",
        "attn_implementation: sdpa",
        "attn_implementation: flash_attention_2",
        batch=(2, 1),
    ),
    "batch-flattening-no-effect": _fix(
        "attn_implementation: flash_attention_2\nbatch_flattening: true\n",
        "batch_flattening: true",
        "batch_flattening: auto",
    ),
    "cross-entropy-patches-conflict": _fix(
        "chunked_cross_entropy: true\nliger_cross_entropy: true\n", "liger_cross_entropy: true\n"
    ),
    "fsdp1-deprecated": _fix(_FSDP1, "fsdp_version: 1", "fsdp_version: 2"),
    "fsdp-pin-memory": _fix(
        "fsdp_version: 2\nfsdp_config:\n  cpu_offload_pin_memory: false\n",
        "  cpu_offload_pin_memory: false\n",
        "  cpu_offload_pin_memory: false\n  offload_params: true\n",
    ),
    "fsdp2-quantized-preference-rl": _fix(
        "rl: dpo\nadapter: qlora\nload_in_4bit: true\nfsdp_version: 2\nfsdp_config:\n  offload_params: false\n",
        "fsdp_version: 2\nfsdp_config:\n  offload_params: false\n",
    ),
    "fsdp-config-prefix": _fix(
        "fsdp_version: 2\nfsdp_config:\n  fsdp_offload_params: true\n", "fsdp_offload_params", "offload_params"
    ),
    "fsdp1-offload-with-8bit-optimizer": _fix(
        "optimizer: adamw_8bit\n" + _FSDP1,
        "optimizer: adamw_8bit\nfsdp_version: 1",
        "optimizer: adamw_torch_8bit\nfsdp_version: 2",
    ),
    "fsdp2-with-bnb-8bit-optimizer": _fix("optimizer: adamw_bnb_8bit\n" + _FSDP2, "adamw_bnb_8bit", "adamw_torch_8bit"),
    "deepcompile-needs-deepspeed": _fix("deepcompile: true\n", "deepcompile: true\n"),
}
