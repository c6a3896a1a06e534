"""What the README and docs state as fact is what the program does: version tables, family lists,
the Python example, the benchmarks' world sizes, the CI install."""

from __future__ import annotations

import itertools
import json
import os
import re
import shlex
import subprocess
import sys
import venv

import pytest

from trainspec.cli import main
from trainspec.families import every_version, get_family
from trainspec.rules.schema_diff import as_dict, diff

from .conftest import ROOT

README = (ROOT / "README.md").read_text()
WORDS = {"no": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8}


def family_rows() -> list[tuple[str, str]]:
    """(family id, what the row says it adds) for each row of the README's family table, in order."""
    return re.findall(r"^\| `([\w-]+@[\w.]+)`[^|]*\|[^|]*\| ([^|]*) \|", README, re.M)


def test_the_version_table_counts_the_fields_schema_diff_reports():
    rows = family_rows()
    checked = 0
    for (before, _), (after, said) in itertools.pairwise(rows):
        if get_family(before).name != get_family(after).name:
            continue
        added = [
            c
            for c in as_dict(get_family(before), get_family(after), diff(get_family(before), get_family(after)))[
                "changes"
            ]
            if c["subject"] == "field" and c["kind"] == "added"
        ]
        found = re.search(r"(\w+) more fields", said)
        if found:
            assert len(added) == WORDS[found.group(1)], (after, said, [c["what"] for c in added])
        elif "the same fields" in said:
            assert added == [], (after, said)
        checked += 1
    assert checked >= 3


def test_the_editor_docs_name_every_built_in_family():
    names = {get_family(f.id).name for f in every_version().values()}
    lsp = (ROOT / "docs" / "lsp.md").read_text().split("\n\n")[1]
    extension = json.loads((ROOT / "editors" / "vscode" / "package.json").read_text())["description"]
    for name in names:
        assert name.lower() in lsp.lower(), name
        assert name.lower() in extension.lower(), name


def test_the_readme_python_example_runs_as_written(monkeypatch, capsys):
    section = README.split("## Python API", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    monkeypatch.chdir(ROOT)
    scope: dict[str, object] = {}
    exec(compile(code.group(1), "README.md", "exec"), scope)
    assert scope["config"].model.n_kv_heads == 8  # type: ignore[attr-defined]
    printed = capsys.readouterr().out.splitlines()
    assert printed and all(line.startswith("examples/broken_kempnerforge.toml ") for line in printed)
    assert not [d for d in scope["diagnostics"] if d.is_error and d.world_size == 12]  # type: ignore[attr-defined]


def test_the_sweep_benchmark_checks_the_world_sizes_it_names(capsys, monkeypatch):
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import sweep as bench
    finally:
        sys.path.remove(str(ROOT / "bench"))
    monkeypatch.chdir(ROOT)  # where the project configuration would give the example its own size
    main([*bench.TRAINSPEC[3:], *bench.FIXED, "--sweep", "optimizer.lr=1e-4,3e-4"])
    summary = capsys.readouterr().out.strip().splitlines()[-1]
    assert summary.endswith("world sizes 12, 16, 64)")
    run = (ROOT / "bench" / "run.py").read_text()
    assert '"check", "--isolated", str(example), "--world-size", sizes_arg' in run


@pytest.mark.external
def test_the_ci_install_works_in_a_new_virtualenv(tmp_path):
    """docs/ci.md's install, run as written in a virtualenv as Python creates it (pip from the repository)."""
    block = re.search(
        r"```bash\n(python -m pip install --upgrade pip.*?)```", (ROOT / "docs" / "ci.md").read_text(), re.S
    )
    assert block is not None
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    script = f"export PATH={shlex.quote(str(env_dir / 'bin'))}:$PATH\n" + block.group(1)
    environ = {
        "TRAINSPEC_REPO": f"file://{ROOT}",
        "TRAINSPEC_REF": head.stdout.strip(),
        "PATH": "/usr/bin:/bin",
        "TRAINSPEC_CACHE_DIR": os.environ["TRAINSPEC_CACHE_DIR"],
    }
    done = subprocess.run(["bash", "-euc", script], env=environ, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    version = subprocess.run([str(env_dir / "bin" / "trainspec"), "--version"], capture_output=True, text=True)
    assert version.stdout.startswith("trainspec ")
