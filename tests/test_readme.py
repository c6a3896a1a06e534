"""The README's example output is what `trainspec check` really prints."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys

import pytest

from .conftest import ROOT


@pytest.mark.external
def test_readme_console_example_is_current():
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"```console\n\$ cd examples && (trainspec check [^\n]+)\n(.*?)```", readme, re.S)
    assert block is not None
    argv = shlex.split(block.group(1))[1:]
    proc = subprocess.run(
        [sys.executable, "-m", "trainspec", *argv], cwd=ROOT / "examples", capture_output=True, text=True
    )
    assert proc.returncode == 1
    assert proc.stdout == block.group(2)
