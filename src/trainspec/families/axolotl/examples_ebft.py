"""Examples for the EBFT rules and the configs Axolotl 0.18.0's loader cannot load.

Axolotl 0.18.0 cannot load any EBFT run (`ebft-unloadable`), so the fix of an EBFT example is the same
run without `rl: ebft` (what 0.18.0 can train); each bad config was checked against the released loader,
which refuses it, and each fix against the same loader, which accepts it.
"""

from __future__ import annotations

from trainspec.spec.examples import Example

from .examples_config import example

STRIDED = "ebft:\n  mode: strided\n"

EXAMPLES: dict[str, Example] = {
    "ebft-section-required": example("rl: ebft\n", ""),
    "ebft-null": example("rl: ebft\nebft: null\n", ""),
    "ebft-unloadable": example("rl: ebft\nebft:\n  mode: structured\n", "ebft:\n  mode: structured\n"),
    "ebft-strided-compile-with-checkpointing": example(
        "rl: ebft\n" + STRIDED + "torch_compile: true\ngradient_checkpointing: true\n",
        STRIDED + "torch_compile: true\ngradient_checkpointing: true\n",
    ),
    "ebft-strided-compile": example(
        "rl: ebft\n" + STRIDED + "torch_compile: true\n", STRIDED + "torch_compile: true\n"
    ),
    "ebft-strided-tokens-per-step": example(
        "rl: ebft\nsequence_len: 4096\n" + STRIDED, "sequence_len: 4096\n" + STRIDED
    ),
    "deepspeed-inline-with-tensor-parallel": example(
        "tensor_parallel_size: 2\ndeepspeed:\n  zero_optimization:\n    stage: 3\n",
        "tensor_parallel_size: 2\ndeepspeed: deepspeed_configs/zero3.json\n",
    ),
    "deepspeed-inline-with-deepcompile": example(
        "deepcompile: true\ndeepspeed:\n  zero_optimization:\n    stage: 3\n",
        "deepcompile: true\ndeepspeed: deepspeed_configs/zero3.json\n",
    ),
    "muon-fsdp-config-null": example(
        "optimizer: muon\nfsdp: [full_shard]\nfsdp_config: null\n",
        "optimizer: muon\nfsdp_version: 2\nfsdp_config:\n  offload_params: false\n",
    ),
    "flash-optimizer-fsdp-config-null": example(
        "optimizer: flash_adamw\nfsdp: [full_shard]\nfsdp_config: null\n",
        "optimizer: flash_adamw\nfsdp_version: 2\nfsdp_config:\n  offload_params: false\n",
    ),
    "q-galore-fsdp-config-null": example(
        "optimizer: q_galore_adamw8bit\nbf16: true\nfsdp: [full_shard]\nfsdp_config: null\n",
        "optimizer: q_galore_adamw8bit\nbf16: true\nfsdp_version: 2\nfsdp_config:\n  use_orig_params: true\n",
    ),
}
