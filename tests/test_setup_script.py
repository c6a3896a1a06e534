"""tools/setup-dev.sh, read as a newcomer runs it: every step says what it installs, long ones show progress,
the CPU build of torch is the default, and pip has no dependency conflict to print."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from .conftest import ROOT

SCRIPT = ROOT / "tools" / "setup-dev.sh"


def steps() -> list[tuple[int, str]]:
    """The lines that install something (pip, apt-get install, npm), with their line numbers."""
    lines = SCRIPT.read_text().splitlines()
    return [(n, line) for n, line in enumerate(lines) if re.search(r"pip install|apt-get install|npm ci", line)]


def test_the_script_is_valid_bash():
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash here")
    assert subprocess.run([bash, "-n", str(SCRIPT)], capture_output=True).returncode == 0


def test_every_step_says_what_it_installs():
    lines = SCRIPT.read_text().splitlines()
    for n, line in steps():
        said = [x for x in lines[max(0, n - 6) : n] if x.lstrip().startswith('echo "==>')]
        assert said, f"line {n + 1} installs without saying what: {line.strip()}"


def test_long_steps_show_progress():
    for _, line in steps():
        if "pip install" in line and "--no-deps" not in line and "--upgrade pip" not in line:
            assert " -q" not in line and "--progress-bar on" in line, line


def test_packages_without_their_dependencies_come_last():
    """pip lists a package installed with --no-deps as a conflict when a later install checks the
    environment (the `ERROR: pip's dependency resolver ...` block); with them last, no later check runs."""
    pip = [line for _, line in steps() if "pip install" in line]
    first = next(n for n, line in enumerate(pip) if "--no-deps" in line)
    assert all("--no-deps" in line for line in pip[first:]), pip[first:]


def test_torch_defaults_to_the_cpu_build_where_there_is_one():
    text = SCRIPT.read_text()
    assert 'TORCH_INDEX_URL="https://download.pytorch.org/whl/cpu"' in text
    assert '"$(uname -s)-$(uname -m)" = "Linux-x86_64"' in text
    assert "cannot be reached" in text  # an index out of reach falls back to pip's own, saying so


def test_apt_installs_no_recommended_extras():
    (apt,) = [line for _, line in steps() if "apt-get install" in line]
    assert "--no-install-recommends" in apt and "--no-upgrade" in apt
