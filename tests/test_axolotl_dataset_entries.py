"""Axolotl dataset entries, judged against Axolotl 0.18.0's own validation (tests/axolotl_loader.py).

The loader reads each entry of `datasets` as one model, which `rl` selects (`validate_config`): a
preference dataset (`DPODataset`) for dpo, ipo and simpo, `KTODataset` for kto, `SyntheticDataset` for
`type: _synthetic`, else a supervised one (`SFTDataset`); each model ignores the keys it does not
declare, so a supervised dataset's keys mean nothing under `rl: dpo`. An entry of `test_datasets` (and of
`pretraining_dataset`) is read as the first model of its union that accepts it. Mutations of the entries'
list- and map-typed fields (`roles`, `message_property_mappings`, `roles_to_train`, `data_files`) in each
context must find trainspec never more lenient than the loader, and stricter only as documented.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from .axolotl_loader import require
from .differential import Judge
from .test_axolotl_differential import CLASSES, KNOWN_LENIENT, RELEASE, Case, run

pytestmark = pytest.mark.external  # the loader imports torch and transformers

BASE: dict[str, Any] = {
    "base_model": "HuggingFaceTB/SmolLM2-135M",
    "micro_batch_size": 1,
    "gradient_accumulation_steps": 1,
    "num_epochs": 1,
    "learning_rate": 0.0002,
    "output_dir": "./out",
    "sequence_len": 512,
}

CONTEXTS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    # name -> (top-level settings, an entry of `datasets` the loader accepts there)
    "supervised": ({}, {"path": "x", "type": "chat_template"}),
    "grpo": ({"rl": "grpo", "trl": {"beta": 0.001}}, {"path": "x", "type": "r1.gsm8k"}),
    "dpo": ({"rl": "dpo"}, {"path": "x", "type": "chatml.intel"}),
    "simpo": ({"rl": "simpo"}, {"path": "x", "type": "chatml.intel"}),
    "kto": ({"rl": "kto", "remove_unused_columns": False}, {"path": "x", "type": "llama3.ultra"}),
    "synthetic": ({}, {"type": "_synthetic", "length": 100}),
}

SUPERVISED_ONLY = {  # keys only a supervised dataset declares, each with a value of the wrong type
    "roles": 5,
    "message_property_mappings": ["role"],
    "roles_to_train": "assistant",
    "shards": "x",
    "field_human": 3,
    "chat_template": 7,
    "drop_system_message": "maybe",
}

SHAPES: list[tuple[str, Any]] = [
    # (field, value): the list- and map-typed fields of the release's dataset models, right and wrong
    ("roles", {"user": ["human", "user"], "assistant": ["gpt"]}),
    ("roles", {"user": "human"}),
    ("roles", {"user": [1]}),
    ("roles", {"user": None}),
    ("roles", {"user": [["human"]]}),
    ("roles", ["user"]),
    ("roles", "user"),
    ("message_property_mappings", {"role": "from", "content": "value"}),
    ("message_property_mappings", {"role": ["from"]}),
    ("message_property_mappings", {"role": 1}),
    ("message_property_mappings", {"role": None}),
    ("message_property_mappings", ["role"]),
    ("message_property_mappings", ["role", "content"]),
    ("message_property_mappings", "role and content"),
    ("message_property_mappings", "role"),
    ("roles_to_train", ["assistant"]),
    ("roles_to_train", "assistant"),
    ("roles_to_train", [1]),
    ("roles_to_train", {"assistant": True}),
    ("data_files", ["a.json"]),
    ("data_files", "a.json"),
    ("data_files", [1]),
    ("data_files", {"train": "a.json"}),
    ("data_files", 5),
    ("type", {"field_instruction": "q", "field_output": "a"}),
    ("type", {"field_prompt": 5}),
    ("type", ["alpaca"]),
]
TOGETHER: list[dict[str, Any]] = [
    # the legacy message fields beside a mapping of another shape (the supervised model indexes it)
    {"message_field_role": "from", "message_property_mappings": ["role", "content"]},
    {"message_field_content": "value", "message_property_mappings": "role content"},
    {"message_field_role": "from", "message_property_mappings": {"role": "speaker"}},
    {"message_field_role": "from", "message_property_mappings": {"role": "from"}},
]


def config(context: str, key: str = "datasets", **entry: Any) -> dict[str, Any]:
    settings, base_entry = CONTEXTS[context]
    out = {**copy.deepcopy(BASE), **copy.deepcopy(settings), "datasets": [copy.deepcopy(base_entry)]}
    if key == "datasets":
        out["datasets"][0].update(entry)
    elif key == "test_datasets":
        out["test_datasets"] = [{**copy.deepcopy(base_entry), "split": "test", **entry}]
    else:
        out.pop("datasets")
        out.update(streaming=True, max_steps=10, pretraining_dataset=[{"path": "x", "type": "pretrain", **entry}])
        out.pop("num_epochs")
    return out


def judged(cases: list[tuple[str, dict[str, Any]]], tmp_path) -> Judge:
    require()
    judge = Judge(f"Axolotl {RELEASE}", CLASSES, KNOWN_LENIENT[RELEASE])
    for described, data in cases:
        outcome = run(Case(data, {}, [described]), tmp_path)
        assert outcome.errors is not None
        judge(outcome.errors, bool(outcome.loader.refused), outcome.shown)
    return judge


def test_each_context_loads_as_it_is(tmp_path):
    for context in CONTEXTS:
        outcome = run(Case(config(context), {}, [context]), tmp_path)
        assert outcome.loader.accepted and outcome.errors == [], outcome.shown()


@pytest.mark.parametrize("context", ["dpo", "simpo", "kto"])
def test_a_supervised_datasets_keys_mean_nothing_under_rl(tmp_path, context):
    """Under `rl: dpo` the loader reads the entry as a preference dataset and ignores these keys."""
    for key, value in SUPERVISED_ONLY.items():
        outcome = run(Case(config(context, **{key: value}), {}, [f"{context}: {key} = {value!r}"]), tmp_path)
        assert outcome.loader.accepted and outcome.errors == [], outcome.shown()


@pytest.mark.parametrize("context", ["supervised", "grpo"])
def test_a_supervised_datasets_keys_are_typed_without_a_preference_rl(tmp_path, context):
    for key, value in SUPERVISED_ONLY.items():
        outcome = run(Case(config(context, **{key: value}), {}, [f"{context}: {key} = {value!r}"]), tmp_path)
        assert outcome.loader.refused and outcome.errors, outcome.shown()
        assert any(d.config_path == f"datasets[0].{key}" for d in outcome.errors), outcome.shown()


def test_the_preference_models_own_fields_are_typed(tmp_path):
    for context in ("dpo", "kto"):
        for key, value in (("data_files", "a.json"), ("split", 5), ("type", {"field_prompt": 5})):
            outcome = run(Case(config(context, **{key: value}), {}, [f"{context}: {key} = {value!r}"]), tmp_path)
            assert outcome.loader.refused and outcome.errors, outcome.shown()


@pytest.mark.parametrize("key", ["datasets", "test_datasets", "pretraining_dataset"])
def test_list_and_map_shapes_agree_with_the_loader(tmp_path, key):
    contexts = ["supervised"] if key == "pretraining_dataset" else list(CONTEXTS)
    cases = [
        (f"{context}: {key}[0].{field} = {value!r}", config(context, key, **{field: value}))
        for context in contexts
        for field, value in SHAPES
    ]
    cases += [
        (f"{context}: {key}[0] with {entry!r}", config(context, key, **entry))
        for context in contexts
        for entry in TOGETHER
    ]
    judge = judged(cases, tmp_path)
    print(f"{key}: {judge.summary()}")
    judge.finish(shown=10)
    assert judge.counts["agree: both refuse"] and judge.counts["agree: both accept"]
