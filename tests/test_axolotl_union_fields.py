"""Axolotl fields typed as booleans or listed values (`bf16: true | false | "auto"`, `tf32`,
`gradient_checkpointing: true | false | "offload" | "offload_disk"`): a text pydantic's lax mode reads as a
boolean is refused by trainspec (strict types, row A2 of docs/loader-differences.md), and the message says
what the loader reads, judged against Axolotl 0.18.0's own validation (tests/axolotl_loader.py). So for the
steps typed `int | float` (`eval_steps`, `save_steps`): the loader reads "5" as the integer 5."""

from __future__ import annotations

import pytest

from trainspec.spec.diagnostics import Severity

from .axolotl_loader import require
from .differential import Judge, classify
from .test_axolotl_differential import CLASSES, KNOWN_LENIENT, RELEASE, Case, run

pytestmark = pytest.mark.external  # the loader imports torch and transformers

BASE = {
    "base_model": "HuggingFaceTB/SmolLM2-135M",
    "datasets": [{"path": "mhenrichsen/alpaca_2k_test", "type": "alpaca"}],
    "micro_batch_size": 1,
    "gradient_accumulation_steps": 1,
    "num_epochs": 1,
    "learning_rate": 0.0002,
    "output_dir": "./out",
    "sequence_len": 512,
}

MARK = "__RAW__"


def case(key: str, scalar: str) -> Case:
    """BASE with `key: scalar`, the scalar written raw (so `y` stays a plain scalar and `"true"` a quoted one)."""
    return Case({**BASE, key: MARK}, {MARK: scalar}, [f"{key}: {scalar}"])


READ_AS_TRUE = [
    ("bf16", '"true"'),
    ("bf16", '"True"'),
    ("tf32", "y"),
    ("tf32", '"on"'),
    ("gradient_checkpointing", "y"),
    ("gradient_checkpointing", '"true"'),
    ("gradient_checkpointing", '"1"'),
]
READ_AS_FALSE = [("bf16", '"false"'), ("tf32", "n"), ("gradient_checkpointing", '"off"')]


@pytest.mark.parametrize(
    ("key", "scalar", "reading"),
    [("eval_steps", '"5"', "5"), ("save_steps", '"5"', "5"), ("eval_steps", '"0.5"', "0.5")],
)
def test_a_text_the_loader_reads_as_a_step_says_which_number(tmp_path, key, scalar, reading):
    require()
    outcome = run(case(key, scalar), tmp_path)
    assert outcome.loader.accepted, outcome.shown()
    assert outcome.errors is not None
    [error] = [d for d in outcome.errors if d.config_path == key]
    assert (
        error.message
        == f"`{key}` must be null or a number, got string {scalar} (axolotl's loader itself reads it as {reading})"
    )
    assert classify(error, CLASSES) == "lax coercion"


@pytest.mark.parametrize(
    ("key", "scalar", "reading"), [*((*c, "true") for c in READ_AS_TRUE), *((*c, "false") for c in READ_AS_FALSE)]
)
def test_a_text_the_loader_reads_as_a_boolean_says_so(tmp_path, key, scalar, reading):
    require()
    outcome = run(case(key, scalar), tmp_path)
    assert outcome.loader.accepted, outcome.shown()
    assert outcome.errors is not None
    [error] = [d for d in outcome.errors if d.config_path == key]
    assert error.message.endswith(f"(axolotl's loader itself reads it as {reading})"), error.message
    assert "is not one of" in error.message and "true, false" in error.message  # the boolean branch is named too
    assert classify(error, CLASSES) == "lax coercion"
    judge = Judge(f"Axolotl {RELEASE}", CLASSES, KNOWN_LENIENT[RELEASE])
    judge(outcome.errors, False, outcome.shown)
    judge.finish()


@pytest.mark.parametrize(
    ("key", "scalar"),
    [("bf16", '"maybe"'), ("tf32", '"full"'), ("gradient_checkpointing", "offload_ram"), ("bf16", "2")],
)
def test_a_value_the_loader_refuses_has_no_reading(tmp_path, key, scalar):
    require()
    outcome = run(case(key, scalar), tmp_path)
    assert not outcome.loader.accepted, outcome.shown()
    assert outcome.errors is not None
    [error] = [d for d in outcome.errors if d.config_path == key]
    assert error.severity is Severity.ERROR and "loader" not in error.message


@pytest.mark.parametrize(("key", "scalar"), [("bf16", "auto"), ("bf16", "true"), ("gradient_checkpointing", "offload")])
def test_the_values_both_accept(tmp_path, key, scalar):
    require()
    outcome = run(case(key, scalar), tmp_path)
    assert outcome.loader.accepted and outcome.errors == [], outcome.shown()
