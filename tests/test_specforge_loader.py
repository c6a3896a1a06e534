"""SpecForge 0.2.0's own loading path, driven from the installed release (tests/specforge_loader.py)."""

from __future__ import annotations

import sys

import pytest

from .conftest import CORPUS
from .specforge_loader import load, require

BASE = "model:\n  target_model_path: m\ndata:\n  hidden_states_path: h\n"
CORPUS_FILES = sorted((CORPUS / "specforge").glob("*.yaml")) + sorted((CORPUS / "specforge-a6b6b02").glob("*.yaml"))


def test_the_loader_module_is_imported_from_its_file_without_the_package():
    module = require()
    assert module.__file__ is not None and module.__file__.endswith("specforge/config/schema.py")
    assert "specforge" not in sys.modules  # the package's __init__ (and sglang, torch) never ran


@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: p.name)
def test_the_loader_accepts_every_upstream_example(path):
    verdict = load(path)
    assert verdict.accepted, verdict.message


@pytest.mark.parametrize(
    ("text", "name", "overrides", "world_size", "stage", "phrase"),
    [
        (BASE, "run.yaml", (), None, "", ""),
        (BASE + "run_id: [\n", "run.yaml", (), None, "read", "ParserError"),
        ('{"model": {"target_model_path": "m"}, "data": {"hidden_states_path": "h"}}', "run.YAML", (), None, "", ""),
        (BASE, "run.YAML", (), None, "read", "JSONDecodeError"),
        (
            BASE + "training:\n  deployment_mode: disaggregated\ndeployment:\n  mode: local_colocated\n",
            "run.yaml",
            (),
            None,
            "migrate",
            "conflicts with legacy training.deployment_mode",
        ),
        (BASE + "training:\n  num_epochs: 0\n", "run.yaml", (), None, "validate", "num_epochs"),
        (BASE, "run.yaml", ("training.num_epochs=yes",), None, "overrides", "num_epochs"),
        (BASE, "run.yaml", ("training.nope=1",), None, "overrides", "does not exist"),
        (BASE, "run.yaml", ("run_id=a=b",), None, "", ""),
        (BASE, "run.yaml", (), 2, "world-size", "does not match"),
        (BASE + "deployment:\n  trainer:\n    nproc_per_node: 2\n", "run.yaml", (), 2, "", ""),
        (
            BASE + "training:\n  attention_backend: usp\n  sp_ulysses_size: 2\n",
            "run.yaml",
            (),
            None,
            "world-size",
            "divisible by draft sequence parallel size 2",
        ),
    ],
    ids=[
        *("valid", "yaml-syntax", "json-by-extension", "yaml-read-as-json", "legacy-conflict", "bound"),
        *("override-type", "override-unknown-path", "override-split-at-first-equals", "torchrun-topology"),
        *("torchrun-matching", "sequence-parallel"),
    ],
)
def test_each_stage_of_the_loading_path(tmp_path, text, name, overrides, world_size, stage, phrase):
    path = tmp_path / name
    path.write_text(text)
    verdict = load(path, overrides, world_size)
    assert verdict.stage == stage, verdict.message
    assert phrase in verdict.message


@pytest.mark.parametrize(
    ("overrides", "loader_accepts"),
    [
        (["model.sglang_enable_symm_mem=[a", "model.sglang_enable_symm_mem=false"], True),  # a scalar's text, replaced
        (["model.sglang_enable_symm_mem=[a"], False),  # ... or kept, and refused
        (["data.max_length=[a", "data.max_length=8192"], True),
    ],
)
def test_an_unreadable_value_a_later_override_replaces_is_judged_as_the_loader_does(overrides, loader_accepts):
    """SpecForge keeps a scalar override's text as written and validates the result, so the last write wins."""
    from trainspec.api import check

    path = CORPUS / "specforge" / "qwen3.5-35b-a3b-eagle3-online.yaml"
    assert load(path, overrides).accepted is loader_accepts
    errors = [d for d in check(path, family="specforge@0.2.0", overrides=overrides) if d.is_error]
    assert (not errors) is loader_accepts, errors
