"""The whole text output of `trainspec check` on broken configs, compared with reviewed snapshots.

Each case in tests/data/diagnostics/ is a config and its expected output (`<config>.out`, whose first
line is the command). Regenerate with `python tools/update_snapshots.py` (or run these tests with
TRAINSPEC_UPDATE_SNAPSHOTS=1), then read every changed file: each message should be fixable in one read.
"""

from __future__ import annotations

import importlib.util
import os
import sys

import pytest

from .conftest import ROOT

TOOL = ROOT / "tools" / "update_snapshots.py"


def _load_tool():
    spec = importlib.util.spec_from_file_location("update_snapshots", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


tool = _load_tool()
CASES = tool.cases()


def test_the_suite_covers_both_families_broadly():
    assert len(CASES) >= 40
    suffixes = {c.suffix for c in CASES}
    assert {".toml", ".yaml", ".json"} <= suffixes
    missing = [c.name for c in CASES if not tool.expected_path(c).exists()]
    assert not missing, f"cases without expected output (run tools/update_snapshots.py): {missing}"


@pytest.mark.parametrize("config", CASES, ids=[c.name for c in CASES])
def test_check_output_matches_the_snapshot(config):
    actual = tool.render(config)
    expected_file = tool.expected_path(config)
    if os.environ.get("TRAINSPEC_UPDATE_SNAPSHOTS"):
        expected_file.write_text(actual, encoding="utf-8")
    assert actual == expected_file.read_text(encoding="utf-8")


def test_no_message_names_an_internal_rule_number():
    for config in CASES:
        text = tool.expected_path(config).read_text(encoding="utf-8")
        assert "(rule " not in text and "§" not in text, config.name
