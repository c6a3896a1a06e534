"""For each rule of `rules_config`: an Axolotl config that breaks it, and the fix.

Every example is the same small supervised run (`BASE`, with a LoRA adapter where the
rule is about one) plus the keys the rule reads; the fix changes only those keys.
Both were checked against Axolotl 0.18.0's own loader: it refuses (or warns about)
the broken config for the rule's reason and accepts the fixed one.
The rules that read the target GPU are checked on a GPU where they fire (`--gpu`).
"""

from __future__ import annotations

from trainspec.spec.examples import Example, Run

BASE = (
    "base_model: HuggingFaceTB/SmolLM2-135M\n"
    "datasets:\n"
    "  - path: mhenrichsen/alpaca_2k_test\n"
    "    type: alpaca\n"
    "micro_batch_size: 1\n"
    "gradient_accumulation_steps: 1\n"
    "learning_rate: 0.0002\n"
    "num_epochs: 1\n"
)
LORA = "adapter: lora\nlora_r: 8\nlora_alpha: 16\nlora_target_linear: true\n"
CHAT = (
    "base_model: HuggingFaceTB/SmolLM2-135M\n"
    "datasets:\n"
    "  - path: mlabonne/FineTome-100k\n"
    "    type: chat_template\n"
    "{dataset}"
    "micro_batch_size: 1\n"
    "gradient_accumulation_steps: 1\n"
    "learning_rate: 0.0002\n"
    "num_epochs: 1\n"
)


def example(bad: str, good: str, *, lora: bool = False, world_size: int = 0, gpu: str = "") -> Example:
    """The base run with `bad` (then `good`) appended, checked at `world_size` on `gpu` when given."""
    base = BASE + (LORA if lora else "")
    return Example(base + bad, base + good, "yaml", run=Run(world_sizes=(world_size,) if world_size else (), gpu=gpu))


def dataset_example(bad: str, good: str) -> Example:
    """A chat dataset whose entry gets `bad` (then `good`), each line indented under it."""
    return Example(CHAT.format(dataset=bad), CHAT.format(dataset=good), "yaml")


FSDP1 = "fsdp_version: 1\nfsdp_config:\n  offload_params: false\n"
FSDP2 = FSDP1.replace("fsdp_version: 1", "fsdp_version: 2")

EXAMPLES: dict[str, Example] = {
    "fix-untrained-token-not-trainable": example(
        "fix_untrained_tokens: [1, 2]\npeft_trainable_token_indices: [1]\n",
        "fix_untrained_tokens: [1, 2]\npeft_trainable_token_indices: [1, 2]\n",
        lora=True,
    ),
    "attention-flag-with-attn-implementation": example(
        "attn_implementation: flash_attention_2\nflash_attention: true\n", "attn_implementation: flash_attention_2\n"
    ),
    "legacy-attention-flag": example("flash_attention: true\n", "attn_implementation: flash_attention_2\n"),
    "gemma4-hybrid-attention-needs-flash-attention-2": example(
        "gemma4_hybrid_attn_impl: true\nattn_implementation: sdpa\n",
        "gemma4_hybrid_attn_impl: true\nattn_implementation: flash_attention_2\n",
    ),
    "attn-implementation-name": example("attn_implementation: flash\n", "attn_implementation: flash_attention_2\n"),
    "large-head-attention-policy": example("large_head_attention: flash\n", "large_head_attention: triton_flash\n"),
    "torch-compile-option-allowed": example(
        "torch_compile: true\ntorch_compile_options:\n  max_autotune: true\n",
        "torch_compile: true\ntorch_compile_options:\n  max_autotune_gemm: true\n",
    ),
    "torch-compile-options-need-torch-compile": example(
        "torch_compile_options:\n  shape_padding: true\n",
        "torch_compile: true\ntorch_compile_options:\n  shape_padding: true\n",
    ),
    "cudagraphs-with-sample-packing": example(
        "attn_implementation: flash_attention_2\nsample_packing: true\n"
        "torch_compile: true\ntorch_compile_options:\n  triton.cudagraphs: true\n",
        "attn_implementation: flash_attention_2\nsample_packing: true\ntorch_compile: true\n",
    ),
    "fp32-norms-need-fsdp2": example("fp32_norms: true\n" + FSDP1, "fp32_norms: true\n" + FSDP2),
    "fp32-norm-classes-without-fp32-norms": example(
        "fp32_norm_classes: [LlamaRMSNorm]\n" + FSDP2, "fp32_norms: true\nfp32_norm_classes: [LlamaRMSNorm]\n" + FSDP2
    ),
    "sdpa-varlen-without-sample-packing": example(
        "attn_implementation: sdpa\nsdpa_varlen: true\n", "attn_implementation: sdpa\n"
    ),
    "sage-attention-without-padding": example(
        "attn_implementation: sage\n", "attn_implementation: sage\npad_to_sequence_len: true\n", lora=True
    ),
    "sage-attention-full-finetune": example(
        "attn_implementation: sage\npad_to_sequence_len: true\n",
        "attn_implementation: sage\npad_to_sequence_len: true\n" + LORA,
    ),
    "save-strategy-best-needs-metric": example(
        "save_strategy: best\n", "save_strategy: best\nmetric_for_best_model: eval_loss\n"
    ),
    "lora-target-modules-regex": example(
        "adapter: lora\nlora_r: 8\nlora_alpha: 16\nlora_target_modules: [q_proj, (k_proj]\n",
        "adapter: lora\nlora_r: 8\nlora_alpha: 16\nlora_target_modules: [q_proj, k_proj]\n",
    ),
    "dedup-with-streaming": example(
        "dataset_exact_deduplication: true\nstreaming: true\nmax_steps: 100\n",
        "dataset_exact_deduplication: true\n",
    ),
    "dedup-with-skip-prepare": example(
        "dataset_exact_deduplication: true\nskip_prepare_dataset: true\n", "dataset_exact_deduplication: true\n"
    ),
    "gc-steps-deprecated": example("gc_steps: 10\n", "gc_collect_steps: 10\ntorch_empty_cache_steps: 10\n"),
    "lora-kernels-with-fsdp1": example(
        "lora_mlp_kernel: true\n" + FSDP1, "lora_mlp_kernel: true\n" + FSDP2, lora=True, world_size=8
    ),
    "quantize-moe-experts-setup": example(
        "adapter: lora\nlora_r: 8\nlora_alpha: 16\nlora_target_modules: [q_proj]\nquantize_moe_experts: true\n",
        "adapter: lora\nlora_r: 8\nlora_alpha: 16\nlora_target_modules: [q_proj]\nquantize_moe_experts: true\n"
        "load_in_8bit: true\n",
    ),
    "beta-matches-trl-beta": example("beta: 0.1\ntrl:\n  beta: 0.2\n", "beta: 0.1\ntrl:\n  beta: 0.1\n"),
    "qat-exclusive": example(
        "load_in_4bit: true\nqat:\n  weight_dtype: int8\n", "qat:\n  weight_dtype: int8\n", lora=True
    ),
    "quantized-load-needs-adapter": example("load_in_8bit: true\n", "load_in_8bit: true\n" + LORA),
    "adapter-known": example("adapter: lorra\nlora_r: 8\nlora_alpha: 16\nlora_target_linear: true\n", LORA),
    "qlora-quantization": example(
        "adapter: qlora\nlora_r: 8\nlora_alpha: 16\nlora_target_linear: true\n",
        "adapter: qlora\nlora_r: 8\nlora_alpha: 16\nlora_target_linear: true\nload_in_4bit: true\n",
    ),
    "lora-target-parameters-dropout": example(
        "lora_target_parameters: [mlp.experts.gate_up_proj]\nlora_dropout: 0.05\n",
        "lora_target_parameters: [mlp.experts.gate_up_proj]\nlora_dropout: 0.0\n",
        lora=True,
    ),
    "chat-template-jinja-needed": dataset_example(
        "    chat_template: jinja\n",
        "    chat_template: jinja\n    chat_template_jinja: \"{{ messages[0]['content'] }}\"\n",
    ),
    "message-field-conflict": dataset_example(
        # the legacy field warns as well (legacy-message-field), at the same place
        "    message_field_role: from  # trainspec: ignore[legacy-message-field]\n"
        "    message_property_mappings:\n      role: speaker\n",
        "    message_property_mappings:\n      role: speaker\n",
    ),
    "legacy-message-field": dataset_example(
        "    message_field_role: from\n", "    message_property_mappings:\n      role: from\n"
    ),
    "fsdp-size-based-wrap-needs-min-params": example(
        "fsdp_version: 2\nfsdp_config:\n  auto_wrap_policy: SIZE_BASED_WRAP\n",
        "fsdp_version: 2\nfsdp_config:\n  auto_wrap_policy: SIZE_BASED_WRAP\n  min_num_params: 100000000\n",
    ),
    "wandb-run-id-without-name": example("wandb_run_id: abc123\n", "wandb_run_id: abc123\nwandb_name: smol-lora\n"),
    "trust-remote-code": example("trust_remote_code: true\n", "trust_remote_code: false\n"),
    "processor-kwargs-reserved": example(
        "processor_kwargs:\n  revision: main\n  use_fast: true\n",
        "revision_of_model: main\nprocessor_kwargs:\n  use_fast: true\n",
    ),
    "save-safetensors-false": example("save_safetensors: false\n", "save_safetensors: true\n"),
    "batch-size-set": Example(BASE.replace("gradient_accumulation_steps: 1\n", "batch_size: 8\n"), BASE, "yaml"),
    "bf16-unsupported-gpu": example("bf16: true\n", "bf16: false\nfp16: true\n", gpu="v100"),
    "fp8-needs-fp8-gpu": example("fp8: true\ntorch_compile: true\n", "torch_compile: true\n", gpu="l40s"),
    "sdpa-packing-bf16": example(
        "attn_implementation: sdpa\nsample_packing: true\n",
        "attn_implementation: flash_attention_2\nsample_packing: true\n",
        gpu="a100",
    ),
    "sage-attention-compute-capability": example(
        "attn_implementation: sage\npad_to_sequence_len: true\n",
        "attn_implementation: sdpa\npad_to_sequence_len: true\n",
        lora=True,
        gpu="t4",
    ),
    "fp8-attention-needs-hopper": example(
        "attn_implementation: fp8\n", "attn_implementation: flash_attention_2\n", gpu="l40s"
    ),
}
