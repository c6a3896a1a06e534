"""Shared test helpers: the bundled corpus, and writing throwaway configs."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import textwrap
from pathlib import Path

import pytest

# The tests' verdicts must not depend on which trainer packages the test environment happens to hold
# (SpecForge 0.2.0 is installed as a test oracle): the installed release picks no version, except in
# tests/test_installed.py, which unsets this.
os.environ["TRAINSPEC_IGNORE_INSTALLED"] = "1"
# `trainspec check` keeps a result cache in the user's cache folder: never the real one here. A folder for
# the session (for the commands a module prepares its environment for at import), and one of its own for
# each test (`_result_cache`), outside the test's tmp_path, which a test may walk for configs.
SESSION_CACHE = tempfile.mkdtemp(prefix="trainspec-test-cache-")
os.environ["TRAINSPEC_CACHE_DIR"] = SESSION_CACHE
os.environ.pop("TRAINSPEC_NO_CACHE", None)

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(__file__).resolve().parent / "corpus"
AXOLOTL_EXAMPLES = Path(__file__).resolve().parent / "data" / "axolotl" / "examples-0.18.0"
"""Axolotl's example configs: real, but not all of them pass its loader (tests/data/README.md)."""


FAILS_WHEN_BUILT = {"29b_32gpu_tp4_pp2.toml": "pp-stage-fsdp"}
"""KempnerForge corpus files its own trainer cannot build at their world size (tests/corpus/README.md)."""


def corpus_world_size(path: Path) -> int:
    """KempnerForge corpus files name their GPU count (`7b_12gpu_tp4.toml` -> 12); default 4."""
    m = re.search(r"(\d+)gpu", path.name)
    return int(m.group(1)) if m else 4


@pytest.fixture
def write(tmp_path: Path):
    """write("name.toml", text) -> path of a file holding the dedented text."""

    def _write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text).lstrip("\n"))
        return path

    return _write


@pytest.fixture(autouse=True)
def _result_cache(monkeypatch, tmp_path_factory):
    """Each test starts with an empty result cache of its own (`trainspec check` reads and writes it)."""
    monkeypatch.setenv("TRAINSPEC_CACHE_DIR", str(tmp_path_factory.mktemp("result-cache")))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    shutil.rmtree(SESSION_CACHE, ignore_errors=True)


@pytest.fixture(autouse=True)
def _family_registry_restored():
    """Families and overlays a test registers are gone after it, so no test sees another's (the
    registry is global to the process)."""
    from trainspec import families

    before = dict(families._loaded) if families._loaded is not None else None
    yield
    if before is None:
        families._loaded = None  # the test loaded the registry (and maybe registered into it): read it again
    elif families._loaded is not None and families._loaded != before:
        families._loaded.clear()
        families._loaded.update(before)


REPORTS: list[str] = []
"""Lines a test wants shown at the end of the run, whatever pytest's verbosity (counts, measurements)."""


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for line in REPORTS:
        terminalreporter.write_line(line)


@pytest.fixture
def checked(monkeypatch) -> list[str]:
    """The files `check_file` is called on: those the result cache did not answer for."""
    from trainspec.engine import runner

    called: list[str] = []
    original = runner.check_file

    def spy(file: str, options: runner.Options) -> object:
        called.append(file)
        return original(file, options)

    monkeypatch.setattr(runner, "check_file", spy)
    return called
