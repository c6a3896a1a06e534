"""Examples of the plugin rules (`rules_plugins*.py`): the small supervised run with the plugin listed,
plus the keys the rule reads; the fix changes only those keys. Each was checked against Axolotl 0.18.0's
own loader (tests/test_axolotl_plugins.py runs them through it)."""

from __future__ import annotations

from trainspec.spec.examples import Example

from .examples_config import BASE, LORA
from .plugins import usual


def plugin_example(plugin: str, bad: str, good: str, *, lora: str = "") -> Example:
    """The base run (bf16, with the adapter settings `lora`) listing `plugin`, with `bad` (then `good`) added."""
    head = BASE + "bf16: true\n" + lora + f"plugins:\n  - {usual(plugin)}\n"
    return Example(head + bad, head + good, "yaml")


KERNELS = "use_kernels: true\n"
EXPERTS_LORA = "adapter: lora\nlora_r: 8\nlora_alpha: 16\nlora_target_parameters:\n  - experts\n"
"""LoRA on the experts only, as the DeepSeek-V4 kernels want it."""

EXAMPLES: dict[str, Example] = {
    "plugin-name-unloadable": Example(
        BASE + "plugins:\n  - liger\n", BASE + f"plugins:\n  - {usual('liger')}\n", "yaml"
    ),
    "liger-swiglu-with-glu-activation": plugin_example(
        "liger", "liger_swiglu: true\nliger_glu_activation: true\n", "liger_glu_activation: true\n"
    ),
    "liger-swiglu-deprecated": plugin_example("liger", "liger_swiglu: true\n", "liger_glu_activation: true\n"),
    "liger-glu-with-tiled-mlp": plugin_example(
        "liger",
        "liger_glu_activation: true\ntiled_mlp: true\n",
        "liger_glu_activation: true\ntiled_mlp: true\ntiled_mlp_use_original_mlp: true\n",
    ),
    "liger-rms-norm-tensor-parallel": plugin_example(
        "liger", "liger_rms_norm: true\ntensor_parallel_size: 2\n", "liger_rms_norm: true\ntensor_parallel_size: 1\n"
    ),
    "liger-token-scaling-needs-flce": plugin_example(
        "liger",
        "liger_use_token_scaling: true\n",
        "liger_use_token_scaling: true\nliger_fused_linear_cross_entropy: true\n",
    ),
    "liger-losses-tensor-parallel": plugin_example(
        "liger",
        "liger_fused_linear_cross_entropy: true\ntensor_parallel_size: 2\n",
        "liger_fused_linear_cross_entropy: true\ntensor_parallel_size: 1\n",
    ),
    "cut-cross-entropy-needs-half": Example(
        BASE + "plugins:\n  - axolotl.integrations.cut_cross_entropy.CutCrossEntropyPlugin\ncut_cross_entropy: true\n",
        BASE + "plugins:\n  - axolotl.integrations.cut_cross_entropy.CutCrossEntropyPlugin\ncut_cross_entropy: true\n"
        "bf16: true\n",
        "yaml",
    ),
    "cut-cross-entropy-chunked": plugin_example(
        "cut_cross_entropy", "chunked_cross_entropy: true\n", "cut_cross_entropy: true\n"
    ),
    "expert-parallel-sizes-positive": plugin_example(
        "expert_parallel", "expert_parallel_size: 0\n", "expert_parallel_size: 1\n"
    ),
    "expert-parallel-rdma-needs-infiniband": plugin_example(
        "expert_parallel",
        "expert_parallel_size: 2\nexpert_parallel_num_rdma_bytes: 1073741824\n",
        "expert_parallel_size: 2\nexpert_parallel_num_rdma_bytes: 0\n",
    ),
    "spectrum-fsdp-orig-params": plugin_example(
        "spectrum",
        "fsdp:\n  - full_shard\nfsdp_version: 2\nfsdp_config:\n  use_orig_params: false\n",
        "fsdp:\n  - full_shard\nfsdp_version: 2\nfsdp_config:\n  use_orig_params: true\n",
    ),
    "nemo-gym-needs-configs-and-datasets": plugin_example(
        "nemo_gym",
        "nemo_gym_enabled: true\nnemo_gym_datasets:\n  - path: data/train.jsonl\n",
        "nemo_gym_enabled: true\nnemo_gym_config_paths:\n  - resources_servers/example/configs/example.yaml\n"
        "nemo_gym_datasets:\n  - path: data/train.jsonl\n",
    ),
    "swanlab-mode-known": plugin_example(
        "swanlab", "swanlab_project: sft\nswanlab_mode: online\n", "swanlab_project: sft\nswanlab_mode: cloud\n"
    ),
    "swanlab-project-not-blank": plugin_example(
        "swanlab", "use_swanlab: false\nswanlab_project: ' '\n", "use_swanlab: false\n"
    ),
    "swanlab-needs-project": plugin_example(
        "swanlab", "use_swanlab: true\n", "use_swanlab: true\nswanlab_project: sft\n"
    ),
    "diffusion-mask-ratios-ordered": plugin_example(
        "diffusion",
        "diffusion:\n  min_mask_ratio: 0.8\n  max_mask_ratio: 0.5\n",
        "diffusion:\n  min_mask_ratio: 0.3\n  max_mask_ratio: 0.5\n",
    ),
    "expert-backend-known": plugin_example(
        "kernels", KERNELS + "expert_backend: triton\n", KERNELS + "expert_backend: scattermoe\n"
    ),
    "scattermoe-with-sonicmoe": plugin_example(
        "kernels", KERNELS + "use_scattermoe: true\nuse_sonicmoe: true\n", KERNELS + "use_scattermoe: true\n"
    ),
    "nvfp4-merge-aware-setup": plugin_example(
        "kernels",
        KERNELS + "expert_backend: scattermoe\nnvfp4_merge_aware: true\n",
        KERNELS + "expert_backend: sonicmoe\nnvfp4_merge_aware: true\n",
        lora=LORA,
    ),
    "dsv4-fp4-grouped-mode-nvfp4": plugin_example(
        "kernels", KERNELS + "dsv4_fp4_grouped_mode: fp8\n", KERNELS + "dsv4_fp4_grouped_mode: nvfp4\n"
    ),
    "dsv4-fp8-nonexpert-mode-known": plugin_example(
        "kernels", KERNELS + "dsv4_fp8_nonexpert_mode: fp16\n", KERNELS + "dsv4_fp8_nonexpert_mode: bf16\n"
    ),
    "moe-dequant-chunk-size-positive": plugin_example(
        "kernels", KERNELS + "moe_dequant_chunk_size: 0\n", KERNELS + "moe_dequant_chunk_size: 8\n"
    ),
    "moe-grouped-backend-known": plugin_example(
        "kernels",
        KERNELS + "dsv4_fp4_grouped_mode: nvfp4\nmoe_grouped_backend: dequant\n",
        KERNELS + "dsv4_fp4_grouped_mode: nvfp4\nmoe_grouped_backend: marlin\n",
    ),
    "moe-grouped-backend-no-effect": plugin_example(
        "kernels",
        KERNELS + "moe_grouped_backend: marlin\n",
        KERNELS + "dsv4_fp4_grouped_mode: nvfp4\nmoe_grouped_backend: marlin\n",
    ),
    "nonexpert-quantization-known": plugin_example(
        "kernels", KERNELS + "nonexpert_quantization: int8\n", KERNELS + "nonexpert_quantization: fp8_blockwise\n"
    ),
    "gemma4-nonexpert-deprecated": plugin_example(
        "kernels", KERNELS + "gemma4_nf4_nonexpert: true\n", KERNELS + "nonexpert_quantization: nf4\n"
    ),
    "kernels-plugin-sets-use-kernels": plugin_example(
        "kernels", "use_scattermoe: true\n", KERNELS + "use_scattermoe: true\n"
    ),
    "dsv4-kernels-attention-lora": plugin_example(
        "kernels",
        KERNELS + "use_dsv4_kernels: true\nlora_target_linear: true\n",
        KERNELS + "use_dsv4_kernels: true\n",
        lora=EXPERTS_LORA,
    ),
    "dsv4-kernels-attention-lora-excluded": plugin_example(
        "kernels",
        KERNELS + "use_dsv4_kernels: true\nlora_target_linear: true\nlora_exclude_modules:\n  - indexer\n",
        KERNELS + "use_dsv4_kernels: true\n",
        lora=EXPERTS_LORA,
    ),
    "experts-implementation-reset": plugin_example(
        "kernels",
        KERNELS + "experts_implementation: scattermoe\n",
        KERNELS + "use_scattermoe: true\nexperts_implementation: scattermoe\n",
    ),
    "dsv4-lora-mlp-kernel-translated": plugin_example(
        "kernels",
        KERNELS + "use_scattermoe: true\nuse_dsv4_kernels: true\nlora_mlp_kernel: true\n",
        KERNELS + "use_scattermoe: true\nuse_dsv4_kernels: true\ndsv4_shared_mlp_lora_kernel: true\n",
        lora=EXPERTS_LORA,
    ),
}
