"""For each rule of `rules_data_training`: an Axolotl config that breaks it, and the fix.

Every example is a small fine-tuning run (or a streamed pretraining run) plus the lines the rule is
about; the fix changes those lines only. Each bad config is refused (or warned about) by Axolotl's
own loader for the rule's reason, and each fix is accepted.
"""

from __future__ import annotations

from trainspec.spec.examples import Example

MODEL = "base_model: HuggingFaceTB/SmolLM2-135M\n"
DATASETS = "datasets:\n  - path: mhenrichsen/alpaca_2k_test\n    type: alpaca\n"
BATCH = "micro_batch_size: 2\ngradient_accumulation_steps: 1\n"
TRAINING = "learning_rate: 0.0002\n"
PRETRAINING = "pretraining_dataset:\n  - path: allenai/c4\n    name: en\n    type: pretrain\nmax_steps: 1000\n"
PACKING = "sample_packing: true\nattn_implementation: flash_attention_2\n"
VALIDATION = "val_set_size: 0.05\n"
TEST_DATASETS = "test_datasets:\n  - path: mhenrichsen/alpaca_2k_test\n    type: alpaca\n    split: train\n"


def run(extra: str = "", *, model: str = MODEL, data: str = DATASETS, batch: str = BATCH) -> str:
    """A small fine-tuning run with `extra` lines at the end."""
    return model + data + batch + TRAINING + extra


def pair(bad: str, good: str, **parts: str) -> Example:
    """The run with `bad` lines, fixed by `good` lines in their place."""
    return Example(bad=run(bad, **parts), good=run(good, **parts), fmt="yaml")


def pretraining(bad: str, good: str) -> Example:
    """A streamed pretraining run with `bad` lines, fixed by `good`."""
    return pair(bad, good, data=PRETRAINING)


EXAMPLES: dict[str, Example] = {
    "datasets-sharegpt-type-removed": Example(
        bad=run(data=DATASETS.replace("alpaca\n", "sharegpt\n")),
        good=run(data=DATASETS.replace("alpaca\n", "chat_template\n")),
        fmt="yaml",
    ),
    "datasets-null": pretraining("streaming: true\ndatasets: null\n", "streaming: true\n"),
    "datasets-or-pretraining-dataset-required": Example(bad=run(data=""), good=run(), fmt="yaml"),
    "pretraining-dataset-without-streaming": pretraining("", "streaming: true\n"),
    "push-dataset-needs-auth-token": pair(
        "push_dataset_to_hub: me/alpaca-prepared\n",
        "push_dataset_to_hub: me/alpaca-prepared\nhf_use_auth_token: true\n",
    ),
    "val-set-size-with-test-datasets": pair(VALIDATION + TEST_DATASETS, TEST_DATASETS),
    "bench-eval-adds-empty-test-set": pair(
        "do_bench_eval: true\nevals_per_epoch: 1\n", "do_bench_eval: true\nevals_per_epoch: 1\n" + VALIDATION
    ),
    # eval_table_size is deprecated too (deprecated-key, reported at the same place)
    "eval-table-size-with-sample-packing": pair(
        PACKING + "eval_table_size: 4  # trainspec: ignore[deprecated-key]\n", PACKING
    ),
    "sample-packing-attention-not-isolating": pair("sample_packing: true\n", PACKING),
    "scaling-softmax-needs-flex-attention": pair(
        "scaling_softmax: true\nattn_implementation: sdpa\n",
        "scaling_softmax: true\nattn_implementation: flex_attention\n",
    ),
    "batch-size-two-of-three": Example(bad=run(batch="micro_batch_size: 2\n"), good=run(), fmt="yaml"),
    "gradient-accumulation-or-batch-size": pair("batch_size: 16\n", ""),
    "eval-batch-size-differs": pair("eval_batch_size: 8\n", "eval_batch_size: 2\n"),
    "warmup-steps-or-ratio": pair("warmup_steps: 10\nwarmup_ratio: 0.1\n", "warmup_ratio: 0.1\n"),
    "sample-packing-without-padding": pair(
        PACKING + "pad_to_sequence_len: false\n", PACKING + "pad_to_sequence_len: true\n"
    ),
    "reward-model-without-padding": pair("reward_model: true\n", "reward_model: true\npad_to_sequence_len: true\n"),
    "save-steps-needs-steps-strategy": pair(
        "save_strategy: epoch\nsave_steps: 100\n", "save_strategy: steps\nsave_steps: 100\n"
    ),
    "save-steps-or-saves-per-epoch": pair("saves_per_epoch: 1\nsave_steps: 100\n", "saves_per_epoch: 1\n"),
    "hub-model-id-without-saves": pair(
        "hub_model_id: me/smollm2-alpaca\nsave_strategy: 'no'\n",
        "hub_model_id: me/smollm2-alpaca\nsave_strategy: epoch\n",
    ),
    "eval-steps-needs-steps-strategy": pair(
        VALIDATION + "eval_strategy: epoch\neval_steps: 50\n", VALIDATION + "eval_strategy: steps\neval_steps: 50\n"
    ),
    "eval-without-eval-data": pair("val_set_size: 0\neval_steps: 50\n", VALIDATION + "eval_steps: 50\n"),
    "eval-steps-or-evals-per-epoch": pair(
        VALIDATION + "evals_per_epoch: 4\neval_steps: 50\n", VALIDATION + "evals_per_epoch: 4\n"
    ),
    "evals-per-epoch-needs-steps-strategy": pair(
        VALIDATION + "evals_per_epoch: 4\neval_strategy: epoch\n", VALIDATION + "evals_per_epoch: 4\n"
    ),
    "bench-eval-needs-interval": pair(
        VALIDATION + "do_bench_eval: true\n", VALIDATION + "do_bench_eval: true\nevals_per_epoch: 1\n"
    ),
    "causal-lm-eval-with-eval-packing": pair(
        PACKING + VALIDATION + "do_causal_lm_eval: true\n",
        PACKING + VALIDATION + "do_causal_lm_eval: true\neval_sample_packing: false\n",
    ),
    "causal-lm-eval-metrics-supported": pair(
        VALIDATION + "do_causal_lm_eval: true\neval_causal_lm_metrics: [sacrebleu, bleu]\n",
        VALIDATION + "do_causal_lm_eval: true\neval_causal_lm_metrics: [sacrebleu, chrf]\n",
    ),
    "full-finetune-fp16-packing": pair(
        "bf16: false\nfp16: true\nsample_packing: true\nattn_implementation: sdpa\n",
        "bf16: false\nfp16: true\n" + PACKING,
    ),
    "fp8-without-torch-compile": pair("fp8: true\n", "fp8: true\ntorch_compile: true\n"),
    "fp8-fsdp-activation-checkpointing": pair(
        "fp8: true\ntorch_compile: true\nfsdp_version: 2\nfsdp_config:\n  activation_checkpointing: true\n",
        "fp8: true\ntorch_compile: true\nfsdp_version: 2\nfsdp_config:\n  activation_checkpointing: false\n",
    ),
    "fp8-all-gather-needs-fsdp2": pair(
        "fp8: true\ntorch_compile: true\nfp8_enable_fsdp_float8_all_gather: true\nfsdp_config:\n"
        "  fsdp_version: 2\n  reshard_after_forward: true\n",
        "fp8: true\ntorch_compile: true\nfp8_enable_fsdp_float8_all_gather: true\nfsdp_version: 2\nfsdp_config:\n"
        "  reshard_after_forward: true\n",
    ),
    "use-reentrant-with-unfrozen-parameters": pair(
        "unfrozen_parameters:\n  - ^lm_head.weight$\ngradient_checkpointing: true\n"
        "gradient_checkpointing_kwargs:\n  use_reentrant: true\n",
        "unfrozen_parameters:\n  - ^lm_head.weight$\ngradient_checkpointing: true\n"
        "gradient_checkpointing_kwargs:\n  use_reentrant: false\n",
    ),
    "magistral-infers-mistral-common": pair(
        "", "tokenizer_use_mistral_common: true\n", model="base_model: mistralai/Magistral-Small-2506\n"
    ),
    "model-name-null": pair("tokenizer_config: null\n", "tokenizer_config: HuggingFaceTB/SmolLM2-135M\n"),
    "mistral-common-tokenizer-options": pair(
        "tokenizer_use_mistral_common: true\nchat_template: chatml\n",
        "tokenizer_use_mistral_common: true\n",
        model="base_model: mistralai/Mistral-Small-24B-Instruct-2501\n",
    ),
    "pretraining-dataset-with-tokens-per-second": pretraining(
        "streaming: true\ninclude_tokens_per_second: true\n", "streaming: true\ninclude_tokens_per_second: false\n"
    ),
}
