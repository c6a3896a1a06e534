"""Examples of the rules Axolotl 0.19.0 adds or changes (`rules_0_19_0.py`): a config that breaks each,
and the fix. Each pair was run through 0.19.0's own loader (tests/axolotl_loader.py, the second oracle):
it refuses (or warns about) the bad config for the rule's reason and accepts the fix.
"""

from __future__ import annotations

from trainspec.spec.examples import Example, Run

from .examples_data_training import run

LORA = "adapter: lora\nlora_r: 8\nlora_alpha: 16\nlora_target_linear: true\n"
QLORA = "adapter: qlora\nload_in_4bit: true\nlora_r: 8\nlora_alpha: 16\nlora_target_linear: true\n"
FSDP2 = "fsdp_version: 2\nfsdp_config:\n  reshard_after_forward: true\n"


def pair(bad: str, good: str, *, batch: str | None = None, gpu: str = "", world_size: int = 0) -> Example:
    """The small run with `bad` lines, fixed by `good` in their place."""
    parts = {"batch": batch} if batch is not None else {}
    options = Run(world_sizes=(world_size,) if world_size else (), gpu=gpu)
    return Example(bad=run(bad, **parts), good=run(good, **parts), fmt="yaml", run=options)


CHANGED: dict[str, Example] = {
    # batch_size alone also gets the loader's hint (batch-size-set), at the same place
    "batch-size-two-of-three": pair("batch_size: 16  # trainspec: ignore[batch-size-set]\n", "", batch=""),
}
"""Base rules whose example no longer breaks them in 0.19.0 (a config with only micro_batch_size loads)."""

ADDED: dict[str, Example] = {
    "fp8-config-needs-fp8": pair(
        "fp8_config:\n  recipe: rowwise\n", "fp8: true\ntorch_compile: true\nfp8_config:\n  recipe: rowwise\n"
    ),
    "fp8-all-gather-tensorwise-only": pair(
        "fp8: true\ntorch_compile: true\n"
        + FSDP2
        + "fp8_enable_fsdp_float8_all_gather: true\nfp8_config:\n  recipe: rowwise\n",
        "fp8: true\ntorch_compile: true\n"
        + FSDP2
        + "fp8_enable_fsdp_float8_all_gather: true\nfp8_config:\n  recipe: tensorwise\n",
    ),
    "ple-cpu-offload-setup": pair("ple_cpu_offload: true\n" + LORA, "ple_cpu_offload: true\n" + QLORA),
    "ple-cpu-offload-multi-gpu": pair("ple_cpu_offload: true\n" + QLORA, QLORA, world_size=2),
    "polora-setup": pair("optimizer: polora\n", "optimizer: polora\n" + LORA),
    "polora-weight-decay": pair("optimizer: polora\nweight_decay: 0.01\n" + LORA, "optimizer: polora\n" + LORA),
    "dpo-liger-kernel-ipo": pair(
        "rl: dpo\ndpo_use_liger_kernel: true\ndpo_loss_type: [ipo]\n",
        "rl: dpo\ndpo_use_liger_kernel: true\ndpo_loss_type: [sigmoid]\n",
    ),
    "dpo-liger-kernel-first-loss-only": pair(
        "rl: dpo\ndpo_use_liger_kernel: true\ndpo_loss_type: [sigmoid, hinge]\n",
        "rl: dpo\ndpo_use_liger_kernel: true\ndpo_loss_type: [sigmoid]\n",
    ),
    "fsdp2-cpu-ram-efficient-loading-4bit": pair(
        QLORA + FSDP2 + "  cpu_ram_efficient_loading: true\n",
        QLORA + FSDP2 + "  cpu_ram_efficient_loading: false\n",
    ),
    "qat-ternary-activation-int8": pair(
        "qat:\n  weight_dtype: ternary\n  activation_dtype: float8_e4m3fn\n",
        "qat:\n  weight_dtype: ternary\n  activation_dtype: int8\n",
    ),
    "ebft-strided-compile-checkpointing": pair(
        "rl: ebft\nebft:\n  mode: strided\ntorch_compile: true\ngradient_checkpointing: true\n",
        "rl: ebft\nebft:\n  mode: strided\ngradient_checkpointing: true\n",
    ),
    "ebft-strided-activation-offloading-flex": pair(
        "rl: ebft\nebft:\n  mode: strided\nattn_implementation: flex_attention\ngradient_checkpointing: true\n"
        "activation_offloading: true\n",
        "rl: ebft\nebft:\n  mode: strided\nattn_implementation: flex_attention\ngradient_checkpointing: true\n",
    ),
    "flash-attention-torch-unregistered": pair(
        "attn_implementation: flash_attention_torch\n", "attn_implementation: flash_attention_2\n"
    ),
}
