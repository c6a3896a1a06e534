"""The pre-commit hooks, installed and run by pre-commit itself (`pre-commit try-repo`).

pre-commit installs the hook's repository into a fresh virtualenv. To keep
this offline and fast, that virtualenv sees the test environment's packages
(its site-packages on PYTHONPATH, since a virtualenv made from a venv would
only see the base interpreter's) and pip builds without isolation and
without an index; everything else is what a user's `pre-commit run` does.
"""

from __future__ import annotations

import os
import re
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import CORPUS, ROOT
from .test_project import build_repository

pytestmark = pytest.mark.external  # pre-commit builds a virtualenv


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A user's repository: configs of both families, a broken one of each, and unrelated files."""
    repo = tmp_path_factory.mktemp("project")
    (repo / "configs").mkdir()
    shutil.copy(CORPUS / "kempnerforge" / "train" / "debug.toml", repo / "configs" / "debug.toml")
    shutil.copy(CORPUS / "specforge" / "qwen3-8b-eagle3-offline.yaml", repo / "configs" / "qwen3.yaml")
    (repo / "configs" / "broken.toml").write_text("[model]\ndim = 4100\n")
    (repo / "configs" / "broken.yaml").write_text(
        (CORPUS / "specforge" / "qwen3-8b-eagle3-offline.yaml").read_text().replace("num_epochs: 10", "num_epochs: 0")
    )
    (repo / "pyproject.toml").write_text("[project]\nname = 'unrelated'\n")
    (repo / ".pre-commit-config.yaml").write_text("repos: []\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    return repo


def try_repo(project: Path, home: Path, *files: str, hook: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(home),
        "PYTHONPATH": os.pathsep.join(site.getsitepackages()),
        "PIP_NO_BUILD_ISOLATION": "0",  # pip reads "0" as: do not isolate the build
        "PIP_NO_INDEX": "1",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
    }
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pre_commit",
            "try-repo",
            str(ROOT),
            *([hook] if hook else []),
            "--verbose",
            "--files",
            *files,
        ],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_hooks_pass_on_valid_configs_and_fail_on_invalid_ones(project, tmp_path):
    home = tmp_path / "pre-commit-home"
    good = try_repo(
        project, home, "configs/debug.toml", "configs/qwen3.yaml", "pyproject.toml", ".pre-commit-config.yaml"
    )
    assert good.returncode == 0, good.stdout + good.stderr
    for hook in ("trainspec check", "trainspec check (KempnerForge)", "trainspec check (SpecForge)"):
        assert any(line.startswith(hook + ".") and line.endswith("Passed") for line in good.stdout.splitlines()), (
            good.stdout
        )

    bad = try_repo(project, home, "configs/debug.toml", "configs/broken.toml", "configs/broken.yaml")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "configs/broken.toml:2:1: error[model-heads-divide-dim]" in bad.stdout
    assert "configs/broken.yaml:" in bad.stdout and "training.num_epochs" in bad.stdout
    failed = [line for line in bad.stdout.splitlines() if line.endswith("Failed")]
    assert len(failed) == 3, bad.stdout


def test_the_hook_agrees_with_check_in_a_configured_repository(tmp_path):
    """Every file of a repository with `[tool.trainspec]`: the hook reports what `trainspec check` does."""
    repo = tmp_path / "repo"
    repo.mkdir()
    build_repository(repo)
    (repo / ".pre-commit-config.yaml").write_text("repos: []\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    files = subprocess.run(["git", "ls-files"], cwd=repo, capture_output=True, text=True, check=True).stdout.split()
    hooked = try_repo(repo, tmp_path / "home", *files, hook="trainspec-check")
    checked = subprocess.run([sys.executable, "-m", "trainspec", "check"], cwd=repo, capture_output=True, text=True)
    assert checked.returncode == 1 and hooked.returncode == 1
    problem = re.compile(r"^\S+?:(\d+:\d+:)? \w+\[")
    expected = [line for line in checked.stdout.splitlines() if problem.match(line)]
    got = [line for line in hooked.stdout.splitlines() if problem.match(line)]
    assert expected and sorted(got) == sorted(expected), hooked.stdout
    assert not [line for line in got if line.startswith(("legacy/", "configs/runs/lightning", "package.json"))]
    assert any(line.startswith("configs/kf/nested/bad.toml:") for line in got)


def _docs_block(language: str, first_line: str) -> str:
    """The fenced block of docs/ci.md in `language` whose first line is `first_line`."""
    text = (ROOT / "docs" / "ci.md").read_text()
    blocks = re.findall(rf"```{language}\n(.*?)```", text, re.S)
    return next(b for b in blocks if b.startswith(first_line))


def _head() -> str:
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()


def test_the_documented_install_line_installs_from_the_repository(tmp_path):
    line = _docs_block("bash", "python -m pip install").strip()
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = {
        **os.environ,
        "TRAINSPEC_REPO": ROOT.as_uri(),
        "TRAINSPEC_REF": _head(),
        "PYTHONPATH": os.pathsep.join(site.getsitepackages()),  # the dependencies, without an index
        "PIP_NO_INDEX": "1",
        "PIP_NO_BUILD_ISOLATION": "0",
        "PATH": str(venv / "bin") + os.pathsep + os.environ["PATH"],
        "VIRTUAL_ENV": str(venv),
    }
    installed = subprocess.run(["bash", "-c", line], env=env, capture_output=True, text=True, timeout=600)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    version = subprocess.run([str(venv / "bin" / "trainspec"), "--version"], env=env, capture_output=True, text=True)
    assert version.returncode == 0 and version.stdout.startswith("trainspec "), version.stderr


def test_the_documented_pre_commit_config_runs(tmp_path):
    config = _docs_block("yaml", "# .pre-commit-config.yaml")
    config = re.sub(r"repo: \S+", f"repo: {ROOT}", config)
    config = re.sub(r"rev: \S+", f"rev: {_head()}", config)
    repo = tmp_path / "repo"
    repo.mkdir()
    build_repository(repo)
    (repo / ".pre-commit-config.yaml").write_text(config)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(tmp_path / "home"),
        "PYTHONPATH": os.pathsep.join(site.getsitepackages()),
        "PIP_NO_BUILD_ISOLATION": "0",
        "PIP_NO_INDEX": "1",
    }
    done = subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files"], cwd=repo, env=env, capture_output=True, text=True
    )
    assert done.returncode == 1, done.stdout + done.stderr  # the repository holds one broken config
    assert "configs/kf/nested/bad.toml:55:1: error[tp-divides-heads]" in done.stdout
    assert "legacy/old.toml" not in done.stdout
