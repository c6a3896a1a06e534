"""tools/generate_models.py says what to install when the generator is missing, instead of a traceback."""

from __future__ import annotations

import importlib.util
import runpy
import sys
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parent.parent / "tools" / "generate_models.py"


def test_a_missing_generator_is_named_with_the_pinned_version(monkeypatch, capsys):
    real = importlib.util.find_spec
    hidden = "datamodel_code_generator"
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == hidden else real(name, *a))
    monkeypatch.setattr(sys, "argv", [str(TOOL), "--check"])
    with pytest.raises(SystemExit) as stop:
        runpy.run_path(str(TOOL), run_name="__main__")
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "pip install 'datamodel-code-generator==0.89.0'" in err
    assert "Traceback" not in err
