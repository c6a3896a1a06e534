"""The curated Axolotl schema against the release's own config classes, read by tools/family_drift.py.

Axolotl 0.18.0 is a test dependency (installed without its training stack); these tests fail, never
skip, where it is missing.
"""

from __future__ import annotations

import importlib.util
import os

import pytest

from .conftest import ROOT
from .test_family_drift import drift

pytestmark = pytest.mark.external  # imports the installed Axolotl release

DRIFT_FILE = ROOT / "tests" / "data" / "drift" / "axolotl@0.18.0.json"


@pytest.fixture
def report(monkeypatch):
    if importlib.util.find_spec("axolotl") is None:
        pytest.fail("axolotl==0.18.0 is not installed (the test environment installs it with --no-deps)")
    monkeypatch.setitem(os.environ, "HF_HUB_OFFLINE", "1")  # importing it must not reach the network
    return drift.run(DRIFT_FILE)


def test_the_schema_and_the_classes_differ_only_as_reviewed(report):
    assert report.clean, drift.render_text(report)


def test_the_reference_page_shows_what_the_tool_finds_now(report):
    table = DRIFT_FILE.with_suffix(".md")
    assert table.read_text() == drift.render_markdown(report), (
        f"rerun: python tools/family_drift.py {DRIFT_FILE.relative_to(ROOT)} --markdown > {table.relative_to(ROOT)}"
    )
    page = (ROOT / "docs" / "reference" / "axolotl@0.18.0.md").read_text()  # the drift file's version
    assert "## Compared with the released trainer" in page and table.read_text().strip() in page
