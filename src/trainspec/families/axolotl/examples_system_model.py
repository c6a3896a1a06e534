"""Examples of the system, model and parallelism rules (`rules_system_model.py`): a config that
breaks each, and the fix.

Every example is a small fine-tuning run (`run`) with a few keys added; the fix changes only
those keys. Each pair was checked against Axolotl 0.18.0's own loader: it refuses (or warns
about) the broken config for the rule's reason and accepts the fix.
"""

from __future__ import annotations

from trainspec.spec.examples import Example

MODEL = "base_model: NousResearch/Llama-3.2-1B\n"
ALPACA = "  - path: tatsu-lab/alpaca\n    type: alpaca\n"
DATASETS = "datasets:\n" + ALPACA
BATCH = "micro_batch_size: 1\ngradient_accumulation_steps: 4\nlearning_rate: 0.0002\n"
PRETRAINING = "pretraining_dataset:\n  - path: allenai/c4\n    name: en\n    type: pretrain\n"
STREAMING = "streaming: true\n"
UNSTREAMED = PRETRAINING.replace(":\n", ":  # trainspec: ignore[pretraining-dataset-without-streaming]\n", 1)
"""The pretraining data without `streaming: true`, for the examples of rules that fire either way: its warning
is suppressed (with streaming on, `streaming-needs-max-steps` and `streaming-no-val-set-size` would fire instead)."""
LORA = "adapter: lora\nlora_r: 16\nlora_alpha: 32\nlora_target_linear: true\nlora_mlp_kernel: false\n"
FLASH = "attn_implementation: flash_attention_2\n"
CHECKPOINTING = "gradient_checkpointing: true\n"
RELORA = LORA + "relora: true\njagged_restart_steps: 100\n"
EVALS = "val_set_size: 0.05\nsave_steps: 100\n"
STREAM_PACKING = "streaming: true\nmax_steps: 1000\nsample_packing: true\n" + FLASH


def run(extra: str, *, model: str = MODEL, data: str = DATASETS, batch: str = BATCH) -> str:
    """A whole config: the model, its data, the batch and `extra`."""
    return model + data + batch + extra


def pair(bad: str, good: str, **parts: str) -> Example:
    """The run with `bad` added, and with `good` instead."""
    return Example(run(bad, **parts), run(good, **parts), fmt="yaml")


EXAMPLES: dict[str, Example] = {
    "max-memory-with-gpu-memory-limit": pair(
        "max_memory:\n  cpu: 64GiB\ngpu_memory_limit: 20\n", "gpu_memory_limit: 20\n"
    ),
    "deepspeed-with-fsdp": pair(
        "deepspeed: deepspeed_configs/zero2.json\nfsdp:\n  - full_shard\n", "deepspeed: deepspeed_configs/zero2.json\n"
    ),
    "quantization-config-with-bnb": pair(
        LORA + "model_quantization_config: FineGrainedFP8Config\nload_in_8bit: true\n",
        LORA + "model_quantization_config: FineGrainedFP8Config\n",
    ),
    "chat-template-jinja-needs-template": pair("chat_template: jinja\n", "chat_template: chatml\n"),
    "pretraining-needs-max-steps": Example(
        run("", data=UNSTREAMED), run(STREAMING + "max_steps: 1000\n", data=PRETRAINING), fmt="yaml"
    ),
    "pretraining-group-by-length": pair(
        STREAMING + "max_steps: 1000\ngroup_by_length: true\n", STREAMING + "max_steps: 1000\n", data=PRETRAINING
    ),
    "pretraining-no-val-set-size": Example(
        run("max_steps: 1000\nval_set_size: 0.05\n", data=UNSTREAMED),
        run(STREAMING + "max_steps: 1000\n", data=PRETRAINING),
        fmt="yaml",
    ),
    "streaming-no-val-set-size": pair(
        "streaming: true\nmax_steps: 1000\nval_set_size: 0.05\n", "streaming: true\nmax_steps: 1000\n"
    ),
    "streaming-needs-max-steps": pair("streaming: true\n", "streaming: true\nmax_steps: 1000\n"),
    "streaming-packing-one-dataset": Example(
        run(STREAM_PACKING, data=DATASETS + "  - path: yahma/alpaca-cleaned\n    type: alpaca\n"),
        run(STREAM_PACKING),
        fmt="yaml",
    ),
    "falcon-no-fsdp": pair("fsdp:\n  - full_shard\n", "", model="base_model: tiiuae/falcon-7b\n"),
    "mpt-no-gradient-checkpointing": pair(
        CHECKPOINTING, "gradient_checkpointing: false\n", model="base_model: mosaicml/mpt-7b\n"
    ),
    "nemotron-h-checkpointing-needs-packing": pair(
        CHECKPOINTING + FLASH,
        CHECKPOINTING + FLASH + "sample_packing: true\n",
        model="base_model: nvidia/Nemotron-H-8B-Base-8K\n",
    ),
    "gradient-checkpointing-offload-deprecated": pair(
        "gradient_checkpointing: offload\n", CHECKPOINTING + "activation_offloading: true\n"
    ),
    "activation-offloading-needs-gradient-checkpointing": pair(
        "activation_offloading: true\n", CHECKPOINTING + "activation_offloading: true\n"
    ),
    "selective-checkpointing-needs-gradient-checkpointing": pair(
        "selective_checkpointing: true\n", CHECKPOINTING + "selective_checkpointing: true\n"
    ),
    "selective-checkpointing-non-reentrant": pair(
        CHECKPOINTING + "gradient_checkpointing_kwargs:\n  use_reentrant: true\nselective_checkpointing: true\n",
        CHECKPOINTING + "gradient_checkpointing_kwargs:\n  use_reentrant: false\nselective_checkpointing: true\n",
    ),
    "selective-checkpointing-offloading": pair(
        CHECKPOINTING + "activation_offloading: true\nselective_checkpointing: true\n",
        CHECKPOINTING + "activation_offloading: hidden_states\nselective_checkpointing: true\n",
    ),
    "selective-checkpointing-adapter-matmul": pair(
        LORA + CHECKPOINTING + "selective_checkpointing:\n  save:\n    - attention\n    - aten::mm\n",
        LORA + CHECKPOINTING + "selective_checkpointing:\n  save:\n    - attention\n",
    ),
    "selective-checkpointing-torch-compile": pair(
        CHECKPOINTING + "selective_checkpointing: true\ntorch_compile: true\n",
        CHECKPOINTING + "selective_checkpointing: true\n",
    ),
    "hidden-states-offloading-reentrant-unfrozen": pair(
        CHECKPOINTING + "activation_offloading: hidden_states\ngradient_checkpointing_kwargs:\n  use_reentrant: true\n"
        "unfrozen_parameters:\n  - ^lm_head.weight$\n",
        CHECKPOINTING + "activation_offloading: hidden_states\ngradient_checkpointing_kwargs:\n  use_reentrant: false\n"
        "unfrozen_parameters:\n  - ^lm_head.weight$\n",
    ),
    "hidden-states-offloading-with-adapter": pair(
        LORA + CHECKPOINTING + "activation_offloading: hidden_states\n",
        LORA + CHECKPOINTING + "activation_offloading: true\n",
    ),
    "better-transformer-no-amp": pair(
        "flash_optimum: true\nbfloat16: true\n", "flash_optimum: true\nbf16: false\nbfloat16: true\n"
    ),
    "better-transformer-with-adapter": pair(LORA + "flash_optimum: true\nbf16: false\nbfloat16: true\n", LORA),
    "better-transformer-half-precision": pair(
        "flash_optimum: true\nbf16: false\n", "flash_optimum: true\nbf16: false\nbfloat16: true\n"
    ),
    "gptq-no-revision-of-model": pair(
        "gptq: true\nrevision_of_model: gptq-4bit-32g-actorder_True\n",
        "gptq: true\n",
        model="base_model: TheBloke/Llama-2-7B-GPTQ\n",
    ),
    "mxfp4-no-cpu-ram-efficient-loading": pair(
        "model_quantization_config: Mxfp4Config\nfsdp_version: 2\nfsdp_config:\n  cpu_ram_efficient_loading: true\n",
        "model_quantization_config: Mxfp4Config\nfsdp_version: 2\nfsdp_config:\n  cpu_ram_efficient_loading: false\n",
        model="base_model: openai/gpt-oss-20b\n",
    ),
    "neftune-noise-alpha-positive": pair("neftune_noise_alpha: 0\n", "neftune_noise_alpha: 5\n"),
    "simpo-no-warmup-ratio": pair(
        "rl: simpo\nwarmup_ratio: 0.1\n",
        "rl: simpo\nwarmup_steps: 10\n",
        data="datasets:\n  - path: Intel/orca_dpo_pairs\n    type: chatml.intel\n",
    ),
    "relora-needs-jagged-restart-steps": pair(LORA + "relora: true\n", RELORA),
    "relora-needs-lora-adapter": pair("relora: true\njagged_restart_steps: 100\n", RELORA),
    "relora-incompatible": pair(RELORA + "lr_scheduler: one_cycle\n", RELORA + "lr_scheduler: cosine\n"),
    "early-stopping-needs-steps": pair(
        "early_stopping_patience: 3\nval_set_size: 0.05\n", "early_stopping_patience: 3\n" + EVALS + "eval_steps: 50\n"
    ),
    "early-stopping-eval-divides-save": pair(
        "early_stopping_patience: 3\n" + EVALS + "eval_steps: 30\n",
        "early_stopping_patience: 3\n" + EVALS + "eval_steps: 50\n",
    ),
    "context-parallel-needs-flash-attention": pair(
        "context_parallel_size: 2\nattn_implementation: sdpa\n", "context_parallel_size: 2\n" + FLASH
    ),
    "context-parallel-packing-micro-batch-1": pair(
        "micro_batch_size: 2\ngradient_accumulation_steps: 2\n",
        "micro_batch_size: 1\ngradient_accumulation_steps: 4\n",
        batch="learning_rate: 0.0002\ncontext_parallel_size: 2\nsample_packing: true\n" + FLASH,
    ),
}
