"""The Emacs (eglot) recipe of docs/lsp.md, run in a real `emacs --batch`.

The doc's elisp block becomes the `init.el` of a batch Emacs, changed only to start this
environment's `trainspec` by its absolute path. Batch Emacs activates no packages at startup, so
the init first calls `(package-initialize)`, which makes a packaged eglot (Debian's `elpa-eglot` on
Emacs 28) loadable as an interactive Emacs does by itself; from Emacs 29 eglot is built in and the
call changes nothing. tests/data/emacs/drive.el then visits a KempnerForge config (the corpus 7b
job with `tp` not dividing `n_heads` and a typo'd key), runs `M-x eglot`, waits for the diagnostics
in Flymake, picks the rename fix through `M-x eglot-code-actions` and waits for the edited
buffer's diagnostics, then writes what it saw as JSON. Last it visits a GitHub workflow, which must
keep its YAML mode and get yaml-language-server (this checkout's, from node_modules), not trainspec.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.external  # drives a real Emacs, which launches the server

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "lsp.md"
DRIVER = Path(__file__).resolve().parent / "data" / "emacs" / "drive.el"
JOB = ROOT / "tests" / "corpus" / "kempnerforge" / "train" / "7b.toml"
TRAINSPEC = Path(sys.executable).parent / "trainspec"
DOC_COMMAND = '("trainspec" "lsp")'
RENAME = "Rename `seq_lenn` to `seq_len`"
SHARDS = "world-size-auto-shard-divisible"
NODE_BIN = ROOT / "node_modules" / ".bin"
WORKFLOW = "name: ci\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: make\n"
PREAMBLE = ";; batch Emacs activates no packages at startup: make a packaged eglot loadable\n(package-initialize)\n\n"


def emacs_recipe() -> str:
    """The elisp block of the doc's Emacs section."""
    section = DOC.read_text().split("\n### Emacs (eglot)\n", 1)[1]
    section = re.split(r"\n##+ ", section, maxsplit=1)[0]
    blocks = re.findall(r"```elisp\n(.*?)```", section, re.S)
    assert len(blocks) == 1, blocks
    return blocks[0]


def emacs() -> str:
    found = shutil.which("emacs")
    if found is None:
        pytest.fail(
            "the Emacs test needs `emacs` on PATH (`apt-get install emacs-nox elpa-eglot elpa-yaml-mode`)",
            pytrace=False,
        )
    return found


def broken_job() -> str:
    """The corpus 7b job with tp = 3 (32 heads, 8 KV heads) and `seq_len` misspelled."""
    text = JOB.read_text()
    for old, new in (("\ntp = 1\n", "\ntp = 3\n"), ("\nseq_len = 4096\n", "\nseq_lenn = 4096\n")):
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


def line_of(text: str, start: str) -> int:
    (n,) = [i for i, line in enumerate(text.splitlines()) if line.startswith(start)]
    return n


def run_emacs(binary: str, recipe: str, tmp_path: Path) -> dict[str, Any]:
    assert recipe.count(DOC_COMMAND) == 1, recipe
    init = tmp_path / "init.el"
    init.write_text(PREAMBLE + recipe.replace(DOC_COMMAND, f'({json.dumps(str(TRAINSPEC))} "lsp")'))
    work = tmp_path / "work"
    (work / "configs").mkdir(parents=True)
    (work / "configs" / "job.toml").write_text(broken_job())
    (work / ".github" / "workflows").mkdir(parents=True)
    (work / ".github" / "workflows" / "ci.yml").write_text(WORKFLOW)
    out = tmp_path / "out.json"
    home = tmp_path / "home"
    env = {
        **os.environ,
        "HOME": str(home),  # no user init, packages or state of the machine's Emacs
        "XDG_CONFIG_HOME": str(home / "config"),
        "TRAINSPEC_EMACS_FILE": "configs/job.toml",
        "TRAINSPEC_EMACS_OUT": str(out),
        "TRAINSPEC_EMACS_ACTION": RENAME,
        "TRAINSPEC_EMACS_TIMEOUT": "30",
        "TRAINSPEC_EMACS_OTHER": str(work / ".github" / "workflows" / "ci.yml"),
        "PATH": f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    proc = subprocess.run(
        [binary, "--batch", "-l", str(init), "-l", str(DRIVER)],
        cwd=work,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.exists(), f"Emacs wrote nothing (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    seen = json.loads(out.read_text())
    assert "error" not in seen, (seen["error"], proc.stderr)
    return seen


def test_the_emacs_recipe_publishes_both_problems_applies_the_rename_fix_and_leaves_workflows_alone(
    tmp_path: Path,
) -> None:
    text = broken_job()

    seen = run_emacs(emacs(), emacs_recipe(), tmp_path)

    # Emacs opened the TOML in a mode the recipe maps, and eglot started this trainspec for it
    assert seen["mode"] == "trainspec-toml-mode" and seen["managed"] is True, seen
    assert seen["command"] == [str(TRAINSPEC), "lsp"] and seen["flymake"] is True
    published = seen["published"]
    # worldSize = 8 reached the server: the world-size rules ran, and no hint says they were skipped
    assert sorted(d["code"] for d in published) == sorted([SHARDS, "tp-divides-heads", "unknown-key"])
    (tp,) = [d for d in published if d["code"] == "tp-divides-heads"]
    assert (tp["line"], tp["col"], tp["type"], tp["source"]) == (line_of(text, "tp = 3"), 0, "eglot-error", "trainspec")
    assert tp["message"].startswith("distributed.tp = 3 must divide model.n_heads = 32")
    assert tp["text"] == f"trainspec [tp-divides-heads]: {tp['message']}"  # as Flymake shows it
    (typo,) = [d for d in published if d["code"] == "unknown-key"]
    assert (typo["line"], typo["col"], typo["type"]) == (line_of(text, "seq_lenn"), 0, "eglot-error")
    assert typo["message"].startswith("unknown key `seq_lenn` in train; did you mean `seq_len`?")
    (shards,) = [d for d in published if d["code"] == SHARDS]
    assert shards["line"] == line_of(text, "dp_shard = -1") and shards["message"].startswith("world size 8 ")

    # the rename fix, picked from M-x eglot-code-actions' prompt and applied by eglot
    assert RENAME in seen["offered"]
    assert seen["fixed"] is True
    assert seen["lines"] == text.replace("seq_lenn = 4096", "seq_len = 4096").split("\n")
    assert sorted((d["code"], d["line"]) for d in seen["after"]) == [
        ("tp-divides-heads", tp["line"]),
        (SHARDS, shards["line"]),
    ]

    # a workflow is no training config: it keeps yaml-mode, and eglot gives it yaml-language-server
    assert seen["other-mode"] == "yaml-mode" and seen["other-managed"] is True, seen
    assert Path(seen["other-command"][0]).name == "yaml-language-server", seen["other-command"]
