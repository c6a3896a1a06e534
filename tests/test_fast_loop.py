"""The fast loop (`pytest -m "not external"`) collects where torch and the trainers' loaders are absent.

`tools/pytest_without_trainers.py` runs pytest with those imports failing; it runs the whole fast loop
green too (a few minutes; run it by hand), which this test keeps to collection.
"""

from __future__ import annotations

import subprocess
import sys

from .conftest import ROOT

RUNNER = [sys.executable, str(ROOT / "tools" / "pytest_without_trainers.py"), "-q", "-p", "no:cacheprovider"]


def test_the_fast_loop_collects_without_torch_or_the_loaders():
    ran = subprocess.run([*RUNNER, "-m", "not external", "--collect-only"], cwd=ROOT, capture_output=True, text=True)
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-2000:]
    assert "collected" in ran.stdout.splitlines()[-1]


def test_the_runner_makes_torch_and_the_loaders_absent(tmp_path):
    probe = tmp_path / "test_probe.py"
    probe.write_text(
        "import pytest\n\n\n@pytest.mark.parametrize('name', ['torch', 'axolotl', 'specforge'])\n"
        "def test_absent(name):\n    with pytest.raises(ModuleNotFoundError):\n        __import__(name)\n"
    )
    ran = subprocess.run(
        [*RUNNER, str(probe), "--rootdir", str(tmp_path)], cwd=tmp_path, capture_output=True, text=True
    )
    assert ran.returncode == 0, ran.stdout[-3000:]
    assert "3 passed" in ran.stdout
