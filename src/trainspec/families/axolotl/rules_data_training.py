"""Axolotl rules for datasets, evaluation, saving, batch sizes and attention: the validators of
`DatasetValidationMixin`, `AttentionValidationMixin` and `TrainingValidationMixin`
(axolotl/utils/schemas/validation.py).

Most of these validators run `mode="before"`, on the config as written: a key not written reads as
None there, and the schema's defaults are not filled yet (`micro_batch_size` and
`gradient_accumulation_steps` default to 1, yet count as unset to them). Their rules are declared
with `before_rule`, which passes the values as written. The validators that run `mode="after"` see
the model, defaults filled: their rules are plain `rule`s.

Upstream fills some values before a later validator reads them; where a fill changes a verdict, the
rule reproduces it: the empty test set `do_bench_eval` adds, `eval_sample_packing` following
`sample_packing`, the attention backend a legacy flag (`flash_attention: true`) selects, and
`eval_strategy` taken from `evaluation_strategy` (the family's migrations copy it in the file; the
rules also see one an override sets). Fills that change no verdict here (`seed`,
`remove_unused_columns`, `pad_to_sequence_len`, `num_labels`) are not repeated. The removed
`unsloth_*` keys and the renamed `noisy_embedding_alpha` and `pretrain_multipack_buffer_size`
(`check_deprecated_unsloth_fields`, `check_neftune`, `check_multipack_buffer_size`) are the
family's migrations (`migrations.py`). The check that mistral-common is installed is not mirrored:
it probes the environment the job runs in.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from trainspec.spec.paths import format_path
from trainspec.spec.rules import ABSENT, Rule, Violation, rule
from trainspec.spec.wording import show

from .attention import ATTENTION_PATHS, FLASH_LIBRARY, LEGACY_ATTENTION_FLAGS, VARLEN, attention
from .phrases import FIXED_IN, RELEASE, named


def before_rule(rule_id: str, severity: str, *paths: str) -> Callable[[Callable[..., Iterable[Any]]], Rule]:
    """A rule mirroring a `mode="before"` validator: it gets the values as written, None for a key
    not written (as the validator's `data.get(key)` does)."""

    def wrap(fn: Callable[..., Iterable[Any]]) -> Rule:
        @functools.wraps(fn)
        def check(*values: Any) -> Iterable[Any]:
            return fn(*(None if v is ABSENT else v for v in values))

        return rule(rule_id, severity, *paths, raw=True)(check)

    return wrap


def both_set(rule_id: str, first: str, second: str, doc: str, advice: str) -> Rule:
    """An error rule for two keys a `mode="before"` validator refuses together (both true values);
    `doc` is its documentation, `advice` what the message tells the user to do."""

    def check(first_value: Any, second_value: Any) -> Iterator[str]:
        if first_value and second_value:
            yield f"{first} = {show(first_value)} and {second} = {show(second_value)} are both set; {advice}"

    check.__doc__ = doc
    return before_rule(rule_id, "error", first, second)(check)


# -- the attention backend, as `AxolotlInputConfig.normalize_attn_implementation` settles it ----------

ISOLATING = VARLEN | {"sdpa", "eager"}
"""Backends that keep packed samples from attending to each other (sdpa and eager by their mask)."""


def _backend(implementation: Any, gemma4_hybrid: Any, flags: tuple[Any, ...]) -> str:
    """The backend in words, naming the legacy flag that chose it."""
    chosen = attention(implementation, gemma4_hybrid, *flags)
    if implementation or not chosen:
        return f"attn_implementation = {show(implementation)}"
    flag = next((f for f, v in zip(LEGACY_ATTENTION_FLAGS, flags, strict=True) if v), "gemma4_hybrid_attn_impl")
    return f"{flag}: true selects attn_implementation = {show(chosen)}"


# -- DatasetValidationMixin -----------------------------------------------------------------------------


@rule("datasets-null", "error", "datasets", raw=True)
def datasets_null(datasets: Any) -> Iterator[str]:
    """`datasets: null` written out fails the loader: its dataset-type check iterates the value.

    Mirrors `DatasetValidationMixin.deprecate_sharegpt_datasets`.
    """
    if datasets is None:
        yield (
            f"datasets = null: Axolotl {RELEASE} (and {FIXED_IN}) fails on it with TypeError "
            "(DatasetValidationMixin.deprecate_sharegpt_datasets iterates the list); list the datasets, "
            "or remove the key"
        )


@before_rule("datasets-sharegpt-type-removed", "error", "datasets")
def sharegpt_type_removed(datasets: Any) -> Iterator[Violation]:
    """The `sharegpt` dataset types were removed; conversations load with `type: chat_template`.

    Mirrors `DatasetValidationMixin.deprecate_sharegpt_datasets`.
    """
    for i, entry in enumerate(datasets if isinstance(datasets, list) else []):
        kind = entry.get("type") if isinstance(entry, dict) else None
        if isinstance(kind, str) and kind.startswith("sharegpt"):
            at = ("datasets", i, "type")
            yield Violation(
                f"{format_path(at)} = {show(kind)}: the sharegpt dataset types were removed; use "
                "type: chat_template (with field_messages and message_property_mappings for other field names)",
                at=at,
            )


@before_rule("datasets-or-pretraining-dataset-required", "error", "datasets", "pretraining_dataset")
def datasets_or_pretraining_dataset(datasets: Any, pretraining_dataset: Any) -> Iterator[str]:
    """A run trains on `datasets` (fine-tuning data) or `pretraining_dataset` (streamed text); one
    of them must be given.

    Mirrors `DatasetValidationMixin.check_dataset_or_pretraining_dataset`.
    """
    if datasets is None and pretraining_dataset is None:
        yield "neither datasets nor pretraining_dataset is set; add datasets (or pretraining_dataset to pretrain)"


@before_rule("pretraining-dataset-without-streaming", "warning", "pretraining_dataset", "streaming")
def pretraining_without_streaming(pretraining_dataset: Any, streaming: Any) -> Iterator[str]:
    """`pretraining_dataset` streams today even without `streaming: true`; a later Axolotl release
    will not turn streaming on by itself.

    Mirrors `DatasetValidationMixin.check_pretraining_streaming_deprecation`.
    """
    if pretraining_dataset and not streaming:
        yield (
            f"pretraining_dataset is set and {named('streaming', streaming)}; Axolotl streams it anyway for now, "
            "but later releases will not: set streaming: true"
        )


@before_rule("push-dataset-needs-auth-token", "error", "push_dataset_to_hub", "hf_use_auth_token")
def push_dataset_needs_auth(push_dataset_to_hub: Any, hf_use_auth_token: Any) -> Iterator[str]:
    """Pushing the prepared dataset to the Hub needs `hf_use_auth_token: true` (exactly true).

    Mirrors `DatasetValidationMixin.check_push_ds_auth`.
    """
    if push_dataset_to_hub and hf_use_auth_token is not True:
        yield (
            f"push_dataset_to_hub = {show(push_dataset_to_hub)} needs hf_use_auth_token: true "
            f"({named('hf_use_auth_token', hf_use_auth_token)})"
        )


@before_rule("val-set-size-with-test-datasets", "error", "val_set_size", "test_datasets")
def val_set_size_with_test_datasets(val_set_size: Any, test_datasets: Any) -> Iterator[str]:
    """Evaluation data comes from `test_datasets` or from a split of the training data
    (`val_set_size`), not both.

    Mirrors `DatasetValidationMixin.check_val_w_test_datasets`.
    """
    if test_datasets and val_set_size:
        yield f"val_set_size = {show(val_set_size)} splits off evaluation data while test_datasets is set; remove one"


def bench_adds_test_set(do_bench_eval: Any, test_datasets: Any, val_set_size: Any) -> bool:
    """Whether Axolotl adds an empty test dataset for `do_bench_eval` (no other evaluation data)."""
    return bool(do_bench_eval and not test_datasets and not val_set_size)


@before_rule("bench-eval-adds-empty-test-set", "warning", "do_bench_eval", "test_datasets", "val_set_size")
def bench_eval_adds_test_set(do_bench_eval: Any, test_datasets: Any, val_set_size: Any) -> Iterator[str]:
    """Benchmark evaluation runs with the evaluation loop; without evaluation data Axolotl adds an
    empty test dataset (axolotl-ai-co/empty-test-ds).

    Mirrors `DatasetValidationMixin.check_test_datasets_bench`.
    """
    if bench_adds_test_set(do_bench_eval, test_datasets, val_set_size):
        yield (
            f"do_bench_eval = {show(do_bench_eval)} without test_datasets, and {named('val_set_size', val_set_size)}: "
            "Axolotl adds an empty test dataset; set val_set_size or test_datasets"
        )


@before_rule("eval-table-size-with-sample-packing", "error", "eval_table_size", "sample_packing", "eval_sample_packing")
def eval_table_with_packing(eval_table_size: Any, sample_packing: Any, eval_sample_packing: Any) -> Iterator[str]:
    """The evaluation prediction table cannot read packed evaluation batches: with `sample_packing`,
    `eval_table_size` needs `eval_sample_packing: false` (unset means packed).

    Mirrors `DatasetValidationMixin.check_eval_packing`.
    """
    if sample_packing and eval_table_size and eval_sample_packing is not False:
        yield (
            f"eval_table_size = {show(eval_table_size)} with sample_packing = {show(sample_packing)} needs "
            f"eval_sample_packing: false ({named('eval_sample_packing', eval_sample_packing)}, which packs)"
        )


# -- AttentionValidationMixin ---------------------------------------------------------------------------


@rule("sample-packing-attention-not-isolating", "warning", "sample_packing", *ATTENTION_PATHS)
def packing_attention(sample_packing: Any, implementation: Any, gemma4_hybrid: Any, *flags: Any) -> Iterator[str]:
    """Packed samples share a row; only some attention backends keep them from attending to each
    other (flash_attention_2/3, flex_attention, xformers, sage, sdpa, eager).

    Mirrors `AttentionValidationMixin.check_sample_packing_without_attention`.
    """
    backend = attention(implementation, gemma4_hybrid, *flags)
    if sample_packing and backend not in ISOLATING:
        chosen = _backend(implementation, gemma4_hybrid, flags) if backend else "no attention backend is set"
        yield (
            f"sample_packing = {show(sample_packing)} but {chosen}, which lets packed samples attend to each "
            "other; set attn_implementation to flash_attention_2, flex_attention, sdpa or eager"
        )


@rule("scaling-softmax-needs-flex-attention", "error", "scaling_softmax", *ATTENTION_PATHS)
def scaling_softmax_needs_flex(
    scaling_softmax: Any, implementation: Any, gemma4_hybrid: Any, *flags: Any
) -> Iterator[str]:
    """Scaled softmax is implemented as a flex attention score modification.

    Mirrors `AttentionValidationMixin.check_scaling_softmax_requires_flex`.
    """
    if scaling_softmax and attention(implementation, gemma4_hybrid, *flags) != "flex_attention":
        yield (
            f"scaling_softmax = {show(scaling_softmax)} needs attn_implementation: flex_attention "
            f"({_backend(implementation, gemma4_hybrid, flags)})"
        )


# -- TrainingValidationMixin: batch sizes and warmup -------------------------------------------------------


@before_rule("batch-size-two-of-three", "error", "micro_batch_size", "gradient_accumulation_steps", "batch_size")
def two_of_three(micro_batch_size: Any, gradient_accumulation_steps: Any, batch_size: Any) -> Iterator[str]:
    """Axolotl derives the third of micro_batch_size, gradient_accumulation_steps and batch_size
    from the other two, so at least two must be written (a 0 counts as unset). Their schema
    defaults do not count: the loader checks the file as written.

    Mirrors `TrainingValidationMixin.check_batch_size_fields`.
    """
    given = {
        "micro_batch_size": micro_batch_size,
        "gradient_accumulation_steps": gradient_accumulation_steps,
        "batch_size": batch_size,
    }
    if sum(1 for v in given.values() if v) < 2:
        values = ", ".join(named(k, v) for k, v in given.items())
        yield (
            f"at least two of micro_batch_size, gradient_accumulation_steps and batch_size must be set ({values}); "
            "set micro_batch_size and gradient_accumulation_steps"
        )


gas_or_batch_size = both_set(
    "gradient-accumulation-or-batch-size",
    "gradient_accumulation_steps",
    "batch_size",
    """batch_size determines gradient_accumulation_steps (batch_size / micro_batch_size / world
    size), so the two cannot both be given.

    Mirrors `TrainingValidationMixin.check_gas_bsz`.
    """,
    "keep one (Axolotl recommends gradient_accumulation_steps)",
)


@before_rule("eval-batch-size-differs", "warning", "eval_batch_size", "micro_batch_size")
def eval_batch_size_differs(eval_batch_size: Any, micro_batch_size: Any) -> Iterator[str]:
    """An evaluation batch of another size than the training batch changes the memory the run
    needs between training and evaluation.

    Mirrors `TrainingValidationMixin.hint_eval_train_mbsz`.
    """
    if eval_batch_size and micro_batch_size and eval_batch_size != micro_batch_size:
        yield (
            f"eval_batch_size = {show(eval_batch_size)} differs from micro_batch_size = {show(micro_batch_size)}, "
            "which can make memory use unstable; use the same value"
        )


warmup_steps_or_ratio = both_set(
    "warmup-steps-or-ratio",
    "warmup_steps",
    "warmup_ratio",
    """Warmup is given as a number of steps or as a share of the run, not both.

    Mirrors `TrainingValidationMixin.check_warmup`.
    """,
    "keep one",
)


@before_rule("sample-packing-without-padding", "warning", "sample_packing", "pad_to_sequence_len")
def packing_without_padding(sample_packing: Any, pad_to_sequence_len: Any) -> Iterator[str]:
    """Packed batches of varying length make the allocator fragment memory; padding every batch
    to sequence_len avoids it (Axolotl turns it on when `pad_to_sequence_len` is not written).

    Mirrors `TrainingValidationMixin.hint_sample_packing_padding`.
    """
    if sample_packing and pad_to_sequence_len is False:
        yield (
            f"sample_packing = {show(sample_packing)} with pad_to_sequence_len = false; "
            "pad_to_sequence_len: true is recommended"
        )


@before_rule("reward-model-without-padding", "warning", "reward_model", "pad_to_sequence_len")
def reward_model_without_padding(reward_model: Any, pad_to_sequence_len: Any) -> Iterator[str]:
    """Reward models are trained on padded sequences; Axolotl turns `pad_to_sequence_len` on when
    it is not written, and warns either way.

    Mirrors `TrainingValidationMixin.hint_reward_model_pad`.
    """
    if reward_model and not pad_to_sequence_len:
        done = " (Axolotl sets it)" if pad_to_sequence_len is None else ""
        yield (
            f"reward_model = {show(reward_model)} and {named('pad_to_sequence_len', pad_to_sequence_len)}; "
            f"pad_to_sequence_len: true is recommended{done}"
        )


# -- saving and evaluation -----------------------------------------------------------------------------------


@before_rule("save-steps-needs-steps-strategy", "error", "save_steps", "save_strategy")
def save_steps_strategy(save_steps: Any, save_strategy: Any) -> Iterator[str]:
    """`save_steps` is an interval in steps, which only the "steps" save strategy uses.

    Mirrors `TrainingValidationMixin.check_saves`.
    """
    if save_strategy and save_steps and save_strategy != "steps":
        yield (
            f"save_steps = {show(save_steps)} needs save_strategy: steps (it is {show(save_strategy)}); "
            "set it to steps or remove save_steps"
        )


save_steps_or_per_epoch = both_set(
    "save-steps-or-saves-per-epoch",
    "save_steps",
    "saves_per_epoch",
    """The save interval is given in steps or as saves per epoch, not both.

    Mirrors `TrainingValidationMixin.check_saves`.
    """,
    "keep one",
)


@before_rule("hub-model-id-without-saves", "warning", "hub_model_id", "save_strategy")
def hub_without_saves(hub_model_id: Any, save_strategy: Any) -> Iterator[str]:
    """Checkpoints reach the Hub when they are saved: a save strategy other than "steps" or "epoch"
    ("no", "best") pushes nothing along the way.

    Mirrors `TrainingValidationMixin.check_push_save`.
    """
    if hub_model_id and save_strategy not in ("steps", "epoch", None):
        yield (
            f"hub_model_id = {show(hub_model_id)} with save_strategy = {show(save_strategy)}: no checkpoint is "
            "saved to push; set save_strategy to steps or epoch"
        )


def eval_strategy_of(eval_strategy: Any, evaluation_strategy: Any) -> Any:
    """The evaluation strategy in effect: the deprecated `evaluation_strategy` fills an unset one."""
    return evaluation_strategy if eval_strategy is None and evaluation_strategy is not None else eval_strategy


def _strategy(eval_strategy: Any, evaluation_strategy: Any) -> str:
    """Where the evaluation strategy comes from, in words."""
    if eval_strategy is None and evaluation_strategy is not None:
        return f"evaluation_strategy = {show(evaluation_strategy)}"
    return f"eval_strategy = {show(eval_strategy)}"


@before_rule("eval-steps-needs-steps-strategy", "error", "eval_steps", "eval_strategy", "evaluation_strategy")
def eval_steps_strategy(eval_steps: Any, eval_strategy: Any, evaluation_strategy: Any) -> Iterator[str]:
    """`eval_steps` is an interval in steps, which only the "steps" evaluation strategy uses.

    Mirrors `TrainingValidationMixin.check_evals`.
    """
    strategy = eval_strategy_of(eval_strategy, evaluation_strategy)
    if strategy and eval_steps and strategy != "steps":
        yield (
            f"eval_steps = {show(eval_steps)} needs the steps strategy, but "
            f"{_strategy(eval_strategy, evaluation_strategy)}; set eval_strategy: steps or remove eval_steps"
        )


@before_rule(
    "eval-without-eval-data",
    "error",
    "val_set_size",
    "eval_steps",
    "eval_strategy",
    "evaluation_strategy",
    "test_datasets",
    "do_bench_eval",
)
def eval_without_data(
    val_set_size: Any,
    eval_steps: Any,
    eval_strategy: Any,
    evaluation_strategy: Any,
    test_datasets: Any,
    do_bench_eval: Any,
) -> Iterator[str]:
    """Evaluating needs evaluation data: with `val_set_size: 0` written and no `test_datasets`,
    `eval_steps` or an evaluation strategy other than "no" is refused. (A `val_set_size` not
    written is not checked; `do_bench_eval` counts as evaluation data, for the empty test set it adds.)

    Mirrors `TrainingValidationMixin.check_evals`.
    """
    strategy = eval_strategy_of(eval_strategy, evaluation_strategy)
    has_tests = test_datasets or bench_adds_test_set(do_bench_eval, test_datasets, val_set_size)
    if val_set_size == 0 and (eval_steps or strategy) and not has_tests and strategy != "no":
        asked = f"eval_steps = {show(eval_steps)}" if eval_steps else _strategy(eval_strategy, evaluation_strategy)
        yield (
            f"{asked} asks for evaluation, but val_set_size = {show(val_set_size)} and no test_datasets are set; "
            "set val_set_size above 0 (e.g. 0.05), add test_datasets, or remove the evaluation settings"
        )


eval_steps_or_per_epoch = both_set(
    "eval-steps-or-evals-per-epoch",
    "eval_steps",
    "evals_per_epoch",
    """The evaluation interval is given in steps or as evaluations per epoch, not both.

    Mirrors `TrainingValidationMixin.check_evals`.
    """,
    "keep one",
)


@before_rule("evals-per-epoch-needs-steps-strategy", "error", "evals_per_epoch", "eval_strategy", "evaluation_strategy")
def evals_per_epoch_strategy(evals_per_epoch: Any, eval_strategy: Any, evaluation_strategy: Any) -> Iterator[str]:
    """`evals_per_epoch` becomes an interval in steps, so the evaluation strategy must be "steps"
    or unset.

    Mirrors `TrainingValidationMixin.check_evals`.
    """
    strategy = eval_strategy_of(eval_strategy, evaluation_strategy)
    if evals_per_epoch and strategy and strategy != "steps":
        yield (
            f"evals_per_epoch = {show(evals_per_epoch)} needs the steps strategy, but "
            f"{_strategy(eval_strategy, evaluation_strategy)}; set eval_strategy: steps or remove it"
        )


@before_rule("bench-eval-needs-interval", "error", "do_bench_eval", "evals_per_epoch", "eval_steps")
def bench_eval_interval(do_bench_eval: Any, evals_per_epoch: Any, eval_steps: Any) -> Iterator[str]:
    """Benchmark evaluation runs at the evaluation interval, so one must be given.

    Mirrors `TrainingValidationMixin.check_evals`.
    """
    if do_bench_eval and not (evals_per_epoch or eval_steps):
        yield f"do_bench_eval = {show(do_bench_eval)} needs evals_per_epoch or eval_steps; set one"


@before_rule(
    "causal-lm-eval-with-eval-packing",
    "error",
    "do_causal_lm_eval",
    "eval_sample_packing",
    "sample_packing",
    "eval_table_size",
)
def causal_lm_eval_packing(
    do_causal_lm_eval: Any, eval_sample_packing: Any, sample_packing: Any, eval_table_size: Any
) -> Iterator[str]:
    """Generation-based evaluation reads unpacked evaluation batches. `eval_sample_packing`, when
    not written, follows `sample_packing` (unless `eval_table_size` is set).

    Mirrors `TrainingValidationMixin.check_causal_lm_evals`.
    """
    filled = sample_packing and eval_sample_packing is None and not eval_table_size
    if do_causal_lm_eval and (eval_sample_packing or filled):
        why = f"= {show(eval_sample_packing)}" if eval_sample_packing else "follows sample_packing = true"
        yield f"do_causal_lm_eval = {show(do_causal_lm_eval)} needs eval_sample_packing: false (it {why})"


SUPPORTED_METRICS = ("chrf", "comet", "perplexity", "sacrebleu", "ter")


@before_rule("causal-lm-eval-metrics-supported", "error", "eval_causal_lm_metrics")
def causal_lm_metrics(metrics: Any) -> Iterator[str]:
    """Generation-based evaluation computes a fixed set of metrics.

    Mirrors `TrainingValidationMixin.check_causal_lm_evals`.
    """
    if metrics and isinstance(metrics, list):
        unknown = [m for m in metrics if m not in SUPPORTED_METRICS]
        if unknown:
            yield (
                f"eval_causal_lm_metrics lists {', '.join(map(show, unknown))}; "
                f"the supported metrics are {', '.join(SUPPORTED_METRICS)}"
            )


# -- precision ---------------------------------------------------------------------------------------------


@rule(
    "full-finetune-fp16-packing",
    "warning",
    "bf16",
    "bfloat16",
    "fp16",
    "float16",
    "adapter",
    "sample_packing",
    *ATTENTION_PATHS,
)
def fp16_full_finetune(
    bf16: Any,
    bfloat16: Any,
    fp16: Any,
    float16: Any,
    adapter: Any,
    sample_packing: Any,
    implementation: Any,
    gemma4_hybrid: Any,
    *flags: Any,
) -> Iterator[str]:
    """A full fine-tune in fp16 with sample packing and without the flash-attention library tends
    to fail (fp16 gradients cannot be unscaled; mixed dtypes in matmuls).

    Mirrors `TrainingValidationMixin.check_fft_possible_bad_config`.
    """
    backend = attention(implementation, gemma4_hybrid, *flags)
    if not (bf16 or bfloat16) and (fp16 or float16) and not adapter and backend not in FLASH_LIBRARY and sample_packing:
        yield (
            f"fp16 = {show(fp16 or float16)} full fine-tune (no adapter) with sample_packing and "
            f"{_backend(implementation, gemma4_hybrid, flags)} is likely to fail; train a LoRA adapter, "
            "use bf16, or attn_implementation: flash_attention_2"
        )


@before_rule("fp8-without-torch-compile", "warning", "fp8", "torch_compile")
def fp8_without_compile(fp8: Any, torch_compile: Any) -> Iterator[str]:
    """FP8 training is faster than bf16 only once torch.compile fuses its casts.

    Mirrors `TrainingValidationMixin.check_fp8_config`.
    """
    if fp8 and not torch_compile:
        yield f"fp8 = {show(fp8)} and {named('torch_compile', torch_compile)}; set torch_compile: true to gain speed"


@before_rule(
    "fp8-fsdp-activation-checkpointing",
    "warning",
    "fp8",
    "fsdp_config.activation_checkpointing",
    "fsdp_config.fsdp_activation_checkpointing",
)
def fp8_fsdp_checkpointing(fp8: Any, checkpointing: Any, prefixed: Any) -> Iterator[str]:
    """FP8 with FSDP2 activation checkpointing recomputes the FP8 casts and may train slower than bf16.

    Mirrors `TrainingValidationMixin.check_fp8_config`.
    """
    if fp8 and (checkpointing is True or prefixed is True):
        name = "activation_checkpointing" if checkpointing is True else "fsdp_activation_checkpointing"
        yield (
            f"fp8 = {show(fp8)} with fsdp_config.{name} = true may train slower than bf16; "
            f"consider fsdp_config.{name}: false"
        )


@before_rule("fp8-all-gather-needs-fsdp2", "error", "fp8_enable_fsdp_float8_all_gather", "fsdp_version")
def fp8_all_gather_fsdp2(all_gather: Any, fsdp_version: Any) -> Iterator[str]:
    """FP8 all-gather of sharded weights exists in FSDP2 only. The loader reads the top-level
    `fsdp_version` here (one inside fsdp_config is moved up only afterwards).

    Mirrors `TrainingValidationMixin.check_fp8_config`.
    """
    if all_gather and fsdp_version != 2:
        yield (
            f"fp8_enable_fsdp_float8_all_gather = {show(all_gather)} needs fsdp_version: 2 at the top level "
            f"({named('fsdp_version', fsdp_version)})"
        )


@before_rule(
    "use-reentrant-with-unfrozen-parameters",
    "error",
    "unfrozen_parameters",
    "gradient_checkpointing_kwargs.use_reentrant",
)
def reentrant_with_frozen(unfrozen_parameters: Any, use_reentrant: Any) -> Iterator[str]:
    """Reentrant gradient checkpointing loses the gradients of a partly frozen model
    (huggingface/transformers#21381).

    Mirrors `TrainingValidationMixin.check_use_reentrant_mismatch`.
    """
    if unfrozen_parameters and use_reentrant is True:
        yield (
            "gradient_checkpointing_kwargs.use_reentrant = true with unfrozen_parameters (a partly frozen model); "
            "set use_reentrant: false"
        )


# -- tokenizer and pretraining ---------------------------------------------------------------------------------

MODEL_NAMES = ("base_model", "base_model_config", "tokenizer_config")


@before_rule("magistral-infers-mistral-common", "warning", "tokenizer_use_mistral_common", *MODEL_NAMES)
def magistral_mistral_common(use_mistral_common: Any, *names: Any) -> Iterator[str]:
    """For a Magistral model Axolotl turns on the mistral-common tokenizer when
    `tokenizer_use_mistral_common` is not set.

    Mirrors `TrainingValidationMixin.check_tokenizer_use_mistral_common`.
    """
    if use_mistral_common is None:
        named = [(k, v) for k, v in zip(MODEL_NAMES, names, strict=True) if isinstance(v, str)]
        found = next(((k, v) for k, v in named if "magistral" in v.lower()), None)
        if found:
            yield (
                f"{found[0]} = {show(found[1])} is a Magistral model: Axolotl turns on the mistral-common tokenizer; "
                "set tokenizer_use_mistral_common: true (or false) explicitly"
            )


@rule(
    "model-name-null",
    "error",
    "base_model_config",
    "tokenizer_config",
    "tokenizer_use_mistral_common",
    raw=True,
)
def model_name_null(base_model_config: Any, tokenizer_config: Any, use_mistral_common: Any) -> Iterator[Violation]:
    """The loader reads `base_model_config` and `tokenizer_config` as text when
    `tokenizer_use_mistral_common` is not set, and fails (AttributeError) on one written as null.

    Mirrors `TrainingValidationMixin.check_tokenizer_use_mistral_common`.
    """
    if use_mistral_common is ABSENT or use_mistral_common is None:
        for name, value in (("base_model_config", base_model_config), ("tokenizer_config", tokenizer_config)):
            if value is None:
                yield Violation(
                    f"{name} = null: Axolotl {RELEASE} (and {FIXED_IN}) fails on it with AttributeError "
                    "(TrainingValidationMixin.check_tokenizer_use_mistral_common lowercases it, looking for a "
                    "Magistral model); remove the key, give a model name or set tokenizer_use_mistral_common",
                    at=(name,),
                )


MISTRAL_COMMON_CONFLICTS = ("added_tokens_overrides", "special_tokens", "tokens", "chat_template", "processor_kwargs")


@before_rule("mistral-common-tokenizer-options", "error", "tokenizer_use_mistral_common", *MISTRAL_COMMON_CONFLICTS)
def mistral_common_options(use_mistral_common: Any, *values: Any) -> Iterator[Violation]:
    """The mistral-common tokenizer cannot be edited: no token overrides, special tokens, added
    tokens, chat template or processor arguments. (Only a written `tokenizer_use_mistral_common`
    counts: the one Axolotl infers for Magistral models is set after this check.)

    Mirrors `TrainingValidationMixin.check_mistral_common_incompatible_options`.
    """
    if use_mistral_common:
        for name, value in zip(MISTRAL_COMMON_CONFLICTS, values, strict=True):
            if value:
                yield Violation(
                    f"{name} is set, but tokenizer_use_mistral_common = {show(use_mistral_common)} uses the "
                    f"mistral-common tokenizer, which cannot be changed; remove {name}",
                    at=(name,),
                )


@before_rule(
    "pretraining-dataset-with-tokens-per-second",
    "error",
    "pretraining_dataset",
    "include_tokens_per_second",
)
def pretraining_with_tps(pretraining_dataset: Any, include_tokens_per_second: Any) -> Iterator[str]:
    """Counting tokens per second needs the dataset's total token count, which a streamed
    pretraining dataset cannot give.

    Mirrors `TrainingValidationMixin.pretrain_with_tps`.
    """
    if pretraining_dataset and include_tokens_per_second:
        yield (
            f"include_tokens_per_second = {show(include_tokens_per_second)} cannot be used with pretraining_dataset; "
            "remove include_tokens_per_second"
        )


RULES: list[Rule] = [
    datasets_null,
    sharegpt_type_removed,
    datasets_or_pretraining_dataset,
    pretraining_without_streaming,
    push_dataset_needs_auth,
    val_set_size_with_test_datasets,
    bench_eval_adds_test_set,
    eval_table_with_packing,
    packing_attention,
    scaling_softmax_needs_flex,
    two_of_three,
    gas_or_batch_size,
    eval_batch_size_differs,
    warmup_steps_or_ratio,
    packing_without_padding,
    reward_model_without_padding,
    save_steps_strategy,
    save_steps_or_per_epoch,
    hub_without_saves,
    eval_steps_strategy,
    eval_without_data,
    eval_steps_or_per_epoch,
    evals_per_epoch_strategy,
    bench_eval_interval,
    causal_lm_eval_packing,
    causal_lm_metrics,
    fp16_full_finetune,
    fp8_without_compile,
    fp8_fsdp_checkpointing,
    fp8_all_gather_fsdp2,
    reentrant_with_frozen,
    magistral_mistral_common,
    model_name_null,
    mistral_common_options,
    pretraining_with_tps,
]
