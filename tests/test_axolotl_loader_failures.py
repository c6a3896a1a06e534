"""Configs the schema accepts on which Axolotl 0.18.0's loader fails with an exception of its own, not a
validation message: each is an error rule that names the failing validator, the release and the exception,
and the released loader still fails on it (tests/axolotl_loader.py).

Found by reading each validator and by sweeps through the loader that set every top-level key to each value
of its type, and every nullable key to null beside settings that switch sections on.
"""

from __future__ import annotations

import json
import re

import pytest
import yaml

import trainspec
from trainspec.families import get_family
from trainspec.spec.diagnostics import Severity

from .axolotl_loader import GPU, RELEASE, WORLD_SIZE, load, require
from .conftest import ROOT

pytestmark = pytest.mark.external  # the loader imports torch and transformers

VERSION = f"axolotl@{RELEASE}"
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
DATASETS = "datasets:\n  - path: mhenrichsen/alpaca_2k_test\n    type: alpaca\n"


def config(extra: str) -> str:
    """The base run with `extra`, which replaces the base's datasets when it writes its own."""
    return (BASE.replace(DATASETS, "") if extra.startswith("datasets:") or "\ndatasets:" in extra else BASE) + extra


TYPE, ATTRIBUTE = "TypeError", "AttributeError"
LEGACY_FSDP = "fsdp: [full_shard]\nfsdp_config: null\n"
FAILURES = [
    # (rule id, what the base run gets, the exception the loader fails with)
    ("datasets-null", "pretraining_dataset:\n  - path: allenai/c4\nmax_steps: 10\ndatasets: null\n", "TypeError"),
    ("model-name-null", "base_model_config: null\n", "AttributeError"),
    ("model-name-null", "tokenizer_config: null\n", "AttributeError"),
    ("beta-matches-trl-beta", "beta: 0.1\ntrl: null\n", "AttributeError"),
    ("grpo-liger-context-parallel", "rl: grpo\ntrl:\n  use_liger_loss: true\ncontext_parallel_size: null\n", TYPE),
    ("gdpo-aggregation", "rl: gdpo\ntrl: null\n", "AttributeError"),
    ("ebft-null", "rl: ebft\nebft: null\n", "AttributeError"),
    ("ebft-unloadable", "rl: ebft\nebft:\n  mode: structured\n", "AttributeError"),
    ("ebft-unloadable", "rl: ebft\nebft:\n  mode: strided\n  stride: 16\n", "AttributeError"),
    ("deepspeed-inline-with-tensor-parallel", "tensor_parallel_size: 2\ndeepspeed:\n  train_batch_size: 8\n", TYPE),
    ("deepspeed-inline-with-deepcompile", "deepcompile: true\ndeepspeed:\n  train_batch_size: 8\n", "TypeError"),
    ("muon-fsdp-config-null", "optimizer: muon\nfsdp: [full_shard]\nfsdp_config: null\n", "AttributeError"),
    ("flash-optimizer-fsdp-config-null", "optimizer: flash_sgd\n" + LEGACY_FSDP, ATTRIBUTE),
    ("q-galore-fsdp-config-null", "optimizer: q_galore_adamw8bit\n" + LEGACY_FSDP, ATTRIBUTE),
    ("plugin-name-unloadable", "plugins:\n  - liger\n", "ValueError"),
    ("plugin-name-unloadable", "plugins:\n  - .LigerPlugin\n", "ValueError"),
    ("plugin-name-unloadable", "plugins:\n  - ..liger.LigerPlugin\n", TYPE),
]


@pytest.mark.parametrize(("rule_id", "extra", "exception"), FAILURES, ids=[f"{r}:{e}" for r, _, e in FAILURES])
def test_the_loader_fails_and_the_rule_says_where(tmp_path, rule_id, extra, exception):
    require()
    path = tmp_path / "config.yaml"
    path.write_text(config(extra), encoding="utf-8")
    verdict = load(path)
    assert verdict.refused.startswith(f"{exception}: "), f"Axolotl {RELEASE}: {verdict.refused or 'loads it'}"
    rule = get_family(VERSION).rule(rule_id)
    assert rule is not None and rule.severity is Severity.ERROR
    found = [d for d in trainspec.check(path, family=VERSION, world_size=WORLD_SIZE, gpu=GPU) if d.rule == rule_id]
    assert found and all(d.severity is Severity.ERROR for d in found), found
    message = found[0].message
    assert exception in message and f"Axolotl {RELEASE}" in message
    assert rule.mirrors is not None and rule.mirrors in message, f"the message names {rule.mirrors}: {message}"


def test_the_same_keys_written_otherwise_load(tmp_path):
    """The failures come from the null (or inline) value, not from the keys: written otherwise, each loads."""
    require()
    written = [
        "base_model_config: HuggingFaceTB/SmolLM2-135M\n",
        "beta: 0.1\ntrl:\n  beta: 0.1\n",
        "tensor_parallel_size: 2\ndeepspeed: deepspeed_configs/zero3.json\n",
        "optimizer: muon\nfsdp_version: 2\nfsdp_config:\n  offload_params: false\n",
    ]
    for extra in written:
        path = tmp_path / "config.yaml"
        path.write_text(BASE + extra, encoding="utf-8")
        assert load(path).accepted, extra
        assert not [
            d
            for d in trainspec.check(path, family=VERSION, world_size=WORLD_SIZE, gpu=GPU)
            if d.severity is Severity.ERROR
        ], extra


SWEEP_SETTINGS = {
    "a plain run": {},
    "GRPO with Liger's loss": {"rl": "grpo", "trl": {"use_liger_loss": True}},
    "Muon with the legacy fsdp list": {"optimizer": "muon", "fsdp": ["full_shard"]},
}
"""Runs the sweep writes each null into: the plain one, and two that switch on sections whose checks read
nullable keys."""
OWN_EXCEPTION = re.compile(r"^(\w+Error): ")


def nullable_keys() -> list[str]:
    schema = json.loads((ROOT / "schema" / "axolotl" / "config.schema.json").read_text(encoding="utf-8"))
    kinds = {key: spec.get("type") for key, spec in schema["properties"].items()}
    return sorted(key for key, kind in kinds.items() if kind == "null" or (isinstance(kind, list) and "null" in kind))


@pytest.mark.parametrize("settings", sorted(SWEEP_SETTINGS))
def test_every_null_the_loader_fails_on_is_an_error_naming_the_failure(tmp_path, settings):
    """Each nullable top-level key written as null: where the loader refuses, trainspec has an error; where
    the loader fails with an exception of its own, an error names that exception."""
    require()
    path = tmp_path / "config.yaml"
    wrong, failures = [], 0
    for key in nullable_keys():
        config = {**yaml.safe_load(BASE), **SWEEP_SETTINGS[settings], key: None}
        path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
        refused = load(path).refused
        found = trainspec.check(path, family=VERSION, world_size=WORLD_SIZE, gpu=GPU)
        errors = [d.message for d in found if d.severity is Severity.ERROR]
        own = OWN_EXCEPTION.match(refused)
        failures += bool(own)
        if (refused and not errors) or (own and not any(own[1] in m for m in errors)):
            wrong.append(f"{key}: null: the loader: {refused}; trainspec: {errors or 'no error'}")
    assert not wrong, "\n".join(wrong)
    assert failures, "the sweep reaches no failure of the loader's own any more"
