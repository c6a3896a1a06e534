"""Axolotl's dataset, evaluation, saving, batch-size and attention rules, against the conditions of the
validators they mirror (each case below was checked against axolotl 0.18.0's own loader)."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml

import trainspec
from trainspec.families.axolotl.examples_data_training import EXAMPLES, run
from trainspec.families.axolotl.rules_data_training import RULES
from trainspec.spec.diagnostics import Severity
from trainspec.spec.rules import ABSENT, Rule
from trainspec.spec.schema import get

BY_ID = {r.id: r for r in RULES}
MODEL_DEFAULTS = {"bf16": "auto"}
"""The schema defaults the `mode="after"` rules read that are not None (Axolotl's own)."""


def written(data: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        if not isinstance(data, dict) or part not in data:
            return ABSENT
        data = data[part]
    return data


def findings(rule_id: str, text: str) -> list[str]:
    """The rule's messages on a YAML config: values as written for raw rules, else defaults filled."""
    rule: Rule = BY_ID[rule_id]
    data = yaml.safe_load(text)
    if rule.raw:
        values = [written(data, p) for p in rule.parsed_paths]
    else:
        filled = {**MODEL_DEFAULTS, **data}
        values = [get(filled, p) for p in rule.parsed_paths]
    return [v.message for v in rule.run(values, None)]


def test_every_rule_has_an_example_and_a_unique_id():
    assert len(BY_ID) == len(RULES)
    assert set(EXAMPLES) == set(BY_ID)


UPSTREAM = {
    "DatasetValidationMixin": {
        "deprecate_sharegpt_datasets",
        "check_dataset_or_pretraining_dataset",
        "check_pretraining_streaming_deprecation",
        "check_push_ds_auth",
        "check_val_w_test_datasets",
        "check_test_datasets_bench",
        "check_eval_packing",
    },
    "AttentionValidationMixin": {"check_sample_packing_without_attention", "check_scaling_softmax_requires_flex"},
    "TrainingValidationMixin": {
        "check_batch_size_fields",
        "hint_sample_packing_padding",
        "hint_reward_model_pad",
        "check_gas_bsz",
        "hint_eval_train_mbsz",
        "check_warmup",
        "check_saves",
        "check_push_save",
        "check_evals",
        "check_fft_possible_bad_config",
        "check_fp8_config",
        "check_use_reentrant_mismatch",
        "check_causal_lm_evals",
        "check_tokenizer_use_mistral_common",
        "check_mistral_common_incompatible_options",
        "pretrain_with_tps",
    },
}
"""The validators of the three classes that raise or warn (axolotl 0.18.0, validation.py), but for
the removed and renamed keys the family's migrations report."""


@pytest.mark.parametrize("rule", RULES, ids=[r.id for r in RULES])
def test_docstring_names_the_validator_it_mirrors(rule):
    match = re.fullmatch(r"Mirrors `(\w+)\.(\w+)`\.", rule.doc.splitlines()[-1])
    assert match, rule.doc
    assert match[2] in UPSTREAM[match[1]]


def test_every_validator_that_raises_or_warns_has_a_rule():
    mirrored = {tuple(r.doc.splitlines()[-1][len("Mirrors `") : -2].split(".")) for r in RULES}
    assert mirrored == {(cls, m) for cls, methods in UPSTREAM.items() for m in methods}


@pytest.mark.parametrize("rule_id", sorted(EXAMPLES))
def test_the_example_breaks_the_rule_and_the_fix_clears_it(rule_id):
    example = EXAMPLES[rule_id]
    assert example.bad is not None
    assert findings(rule_id, example.bad)
    assert not findings(rule_id, example.good)


# The validators run on the file as written: the schema's defaults do not count.


def test_batch_sizes_count_only_what_is_written():
    assert findings("batch-size-two-of-three", run(batch="micro_batch_size: 2\n"))
    assert findings("batch-size-two-of-three", run(batch="micro_batch_size: 2\ngradient_accumulation_steps: 0\n"))
    assert not findings("batch-size-two-of-three", run(batch="micro_batch_size: 2\nbatch_size: 16\n"))


def test_val_set_size_zero_counts_only_when_written():
    assert not findings("eval-without-eval-data", run("eval_steps: 50\n"))
    assert findings("eval-without-eval-data", run("val_set_size: 0.0\neval_strategy: steps\n"))
    assert not findings("eval-without-eval-data", run("val_set_size: 0\neval_strategy: 'no'\n"))


def test_push_dataset_needs_auth_token_exactly_true():
    assert findings("push-dataset-needs-auth-token", run("push_dataset_to_hub: a/b\nhf_use_auth_token: 1\n"))


# Fills an earlier validator makes before a later one reads them.


def test_evaluation_strategy_fills_eval_strategy():
    text = run("val_set_size: 0.05\nevaluation_strategy: epoch\neval_steps: 50\n")
    assert findings("eval-steps-needs-steps-strategy", text) == [
        'eval_steps = 50 needs the steps strategy, but evaluation_strategy = "epoch"; '
        "set eval_strategy: steps or remove eval_steps"
    ]
    text = run("val_set_size: 0.05\neval_strategy: steps\nevaluation_strategy: epoch\neval_steps: 50\n")
    assert not findings("eval-steps-needs-steps-strategy", text)


def test_bench_eval_test_set_counts_as_evaluation_data():
    text = run("do_bench_eval: true\nval_set_size: 0\neval_strategy: steps\neval_steps: 10\n")
    assert not findings("eval-without-eval-data", text)
    assert findings("bench-eval-adds-empty-test-set", text)


def test_eval_sample_packing_follows_sample_packing():
    packed = "sample_packing: true\ndo_causal_lm_eval: true\n"
    assert findings("causal-lm-eval-with-eval-packing", run(packed))
    assert not findings("causal-lm-eval-with-eval-packing", run(packed + "eval_table_size: 2\n"))
    assert not findings("causal-lm-eval-with-eval-packing", run(packed + "eval_sample_packing: false\n"))


def test_a_legacy_attention_flag_chooses_the_backend():
    assert not findings("scaling-softmax-needs-flex-attention", run("scaling_softmax: true\nflex_attention: true\n"))
    assert findings("scaling-softmax-needs-flex-attention", run("scaling_softmax: true\nflash_attention: true\n"))
    assert not findings("sample-packing-attention-not-isolating", run("sample_packing: true\nsdp_attention: true\n"))
    assert not findings(
        "sample-packing-attention-not-isolating", run("sample_packing: true\ngemma4_hybrid_attn_impl: true\n")
    )


def test_a_hub_kernel_backend_does_not_isolate_packed_samples():
    text = run("sample_packing: true\nattn_implementation: kernels-community/vllm-flash-attn3\n")
    assert findings("sample-packing-attention-not-isolating", text) == [
        'sample_packing = true but attn_implementation = "kernels-community/vllm-flash-attn3", which lets packed '
        "samples attend to each other; set attn_implementation to flash_attention_2, flex_attention, sdpa or eager"
    ]


def test_bf16_auto_is_not_a_full_fp16_run():
    text = run("fp16: true\nsample_packing: true\nattn_implementation: sdpa\n")
    assert not findings("full-finetune-fp16-packing", text)


def test_an_inferred_mistral_common_tokenizer_is_not_checked_for_options():
    text = run("chat_template: chatml\n", model="base_model: mistralai/Magistral-Small-2506\n")
    assert findings("magistral-infers-mistral-common", text)
    assert not findings("mistral-common-tokenizer-options", text)


# The loader fails on null where it reads a value as text or a list.


def test_null_model_names_and_datasets_fail_the_loader():
    assert findings("model-name-null", run("base_model_config: null\n"))
    assert not findings("model-name-null", run("base_model_config: null\ntokenizer_use_mistral_common: false\n"))
    assert findings("datasets-null", run(data="datasets: null\n"))
    assert not findings("datasets-null", run(data=""))


def test_fsdp_version_inside_fsdp_config_does_not_count_for_fp8_all_gather():
    text = run("fp8_enable_fsdp_float8_all_gather: true\nfsdp_config:\n  fsdp_version: 2\n")
    assert findings("fp8-all-gather-needs-fsdp2", text)


# Through the engine: the family's migrations and overrides come first, as the loader's do.


def test_evaluation_strategy_counts_as_eval_strategy(write):
    path = write("run.yml", run("val_set_size: 0.05\nevaluation_strategy: epoch\neval_steps: 50\n"))
    found = {d.rule for d in trainspec.check(path, family="axolotl@0.18.0")}
    assert "eval-steps-needs-steps-strategy" in found
    path = write("ok.yml", run("val_set_size: 0.05\neval_steps: 50\n"))
    assert not [
        d
        for d in trainspec.check(path, family="axolotl@0.18.0", overrides=["evaluation_strategy=steps"])
        if d.severity != Severity.NOTE
    ]
    found = {d.rule for d in trainspec.check(path, family="axolotl@0.18.0", overrides=["evaluation_strategy=epoch"])}
    assert "eval-steps-needs-steps-strategy" in found


def test_rules_read_the_file_as_written_not_its_defaults(write):
    """micro_batch_size and gradient_accumulation_steps default to 1 in the schema, yet the loader
    refuses a file that writes neither."""
    path = write("run.yml", run(batch=""))
    assert [d.rule for d in trainspec.check(path, family="axolotl@0.18.0") if d.severity != Severity.NOTE] == [
        "batch-size-two-of-three"
    ]
    path = write("set.yml", run(batch="micro_batch_size: 2\n"))
    assert not [
        d
        for d in trainspec.check(path, family="axolotl@0.18.0", overrides=["gradient_accumulation_steps=4"])
        if d.severity != Severity.NOTE
    ]
