"""The Neovim recipes of docs/lsp.md, run in a real headless Neovim.

Each Lua block of the doc's Neovim section becomes the `init.lua` of a Neovim whose version the
text before the block names ("Neovim 0.7 to 0.10", "Neovim 0.11 and later"); only the command is
changed, to the absolute path of this environment's `trainspec`. Neovim opens a KempnerForge config
(the corpus 7b job with `tp` not dividing `n_heads` and a typo'd key), and
tests/data/neovim/drive.lua waits for the diagnostics, picks the rename fix through
`vim.lsp.buf.code_action()` and waits for the edited buffer's diagnostics, then opens a GitHub
workflow, which must get no diagnostic, and writes what it saw as JSON.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.external  # drives a real Neovim, which launches the server

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "lsp.md"
DRIVER = Path(__file__).resolve().parent / "data" / "neovim" / "drive.lua"
JOB = ROOT / "tests" / "corpus" / "kempnerforge" / "train" / "7b.toml"
TRAINSPEC = Path(sys.executable).parent / "trainspec"
DOC_COMMAND = '{ "trainspec", "lsp" }'
RENAME = "Rename `seq_lenn` to `seq_len`"
SHARDS = "world-size-auto-shard-divisible"
WORKFLOW = "name: ci\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: make\n"


def dotted(version: tuple[int, ...]) -> str:
    return ".".join(map(str, version))


@dataclass(frozen=True)
class Recipe:
    """A Lua block of the doc's Neovim section and the Neovim versions the doc says it is for."""

    lua: str
    oldest: tuple[int, int]
    newest: tuple[int, int] | None

    @property
    def id(self) -> str:
        low = dotted(self.oldest)
        return f"neovim-{low}+" if self.newest is None else f"neovim-{low}-{dotted(self.newest)}"


def neovim_recipes() -> list[Recipe]:
    section = DOC.read_text().split("\n### Neovim\n", 1)[1].split("\n### ", 1)[0]
    recipes = []
    for prose, lua in re.findall(r"(.*?)```lua\n(.*?)```", section, re.S):
        versions = re.findall(r"Neovim (\d+)\.(\d+)(?: to (\d+)\.(\d+)| and later)", prose)
        assert versions, f"no Neovim version named before the recipe:\n{lua}"
        a, b, c, d = versions[0]
        recipes.append(Recipe(lua, (int(a), int(b)), (int(c), int(d)) if c else None))
    return recipes


RECIPES = neovim_recipes()


def nvim() -> str:
    found = shutil.which("nvim")
    if found is None:
        pytest.fail("the Neovim tests need `nvim` on PATH (`apt-get install neovim`)", pytrace=False)
    return found


def nvim_version(binary: str) -> tuple[int, int]:
    first = subprocess.run([binary, "--version"], capture_output=True, text=True, check=True).stdout.splitlines()[0]
    match = re.match(r"NVIM v(\d+)\.(\d+)", first)
    assert match, first
    return int(match.group(1)), int(match.group(2))


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


def run_neovim(binary: str, recipe: Recipe, tmp_path: Path) -> dict[str, Any]:
    assert recipe.lua.count(DOC_COMMAND) == 1, recipe.lua
    init = tmp_path / "init.lua"
    init.write_text(recipe.lua.replace(DOC_COMMAND, f'{{ {json.dumps(str(TRAINSPEC))}, "lsp" }}'))
    work = tmp_path / "work"
    (work / "configs").mkdir(parents=True)
    (work / "pyproject.toml").write_text('[project]\nname = "job"\n')
    (work / "configs" / "job.toml").write_text(broken_job())
    (work / ".github" / "workflows").mkdir(parents=True)
    (work / ".github" / "workflows" / "ci.yml").write_text(WORKFLOW)
    out = tmp_path / "out.json"
    home = tmp_path / "home"
    env = {
        **os.environ,
        "HOME": str(home),  # no user config, plugins, shada or logs of the machine's Neovim
        **{f"XDG_{d}_HOME": str(home / d.lower()) for d in ("CONFIG", "DATA", "STATE", "CACHE")},
        "TRAINSPEC_NVIM_OUT": str(out),
        "TRAINSPEC_NVIM_ACTION": RENAME,
        "TRAINSPEC_NVIM_TIMEOUT_MS": "30000",
        "TRAINSPEC_NVIM_OTHER": ".github/workflows/ci.yml",
    }
    proc = subprocess.run(
        [binary, "--headless", "-i", "NONE", "-u", str(init), "configs/job.toml", "-S", str(DRIVER)],
        cwd=work,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.exists(), f"Neovim wrote nothing (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    seen = json.loads(out.read_text())
    assert "error" not in seen, seen["error"]
    return seen


def test_the_recipe_for_this_neovim_publishes_both_problems_and_applies_the_rename_fix(tmp_path: Path) -> None:
    """The recipe the docs give for the installed Neovim, run in it (every recipe compiles: below)."""
    binary = nvim()
    version = nvim_version(binary)
    matching = [r for r in RECIPES if r.oldest <= version and (r.newest is None or version <= r.newest)]
    assert matching, f"docs/lsp.md has no Neovim recipe for the installed {dotted(version)}"
    recipe = matching[0]
    text = broken_job()

    seen = run_neovim(binary, recipe, tmp_path)

    assert seen["filetype"] == "toml" and seen["clients"] == ["trainspec"]
    published = seen["published"]
    # worldSize = 8 reached the server: the world-size rules ran, and no hint says they were skipped
    assert sorted(d["code"] for d in published) == sorted([SHARDS, "tp-divides-heads", "unknown-key"])
    (tp,) = [d for d in published if d["code"] == "tp-divides-heads"]
    assert (tp["line"], tp["col"]) == (line_of(text, "tp = 3"), 0)
    assert tp["severity"] == 1 and tp["source"] == "trainspec"  # vim.diagnostic.severity.ERROR
    assert tp["message"].startswith("distributed.tp = 3 must divide model.n_heads = 32")
    (typo,) = [d for d in published if d["code"] == "unknown-key"]
    assert (typo["line"], typo["col"], typo["severity"]) == (line_of(text, "seq_lenn"), 0, 1)
    assert typo["message"].startswith("unknown key `seq_lenn` in train; did you mean `seq_len`?")
    (shards,) = [d for d in published if d["code"] == SHARDS]
    assert shards["line"] == line_of(text, "dp_shard = -1") and shards["message"].startswith("world size 8 ")

    # the rename fix, picked from vim.lsp.buf.code_action()'s menu and applied by Neovim
    assert RENAME in seen["offered"]
    assert seen["fixed"] is True
    assert seen["lines"] == text.replace("seq_lenn = 4096", "seq_len = 4096").splitlines()
    assert sorted((d["code"], d["line"]) for d in seen["after"]) == [
        ("tp-divides-heads", tp["line"]),
        (SHARDS, shards["line"]),
    ]

    # a GitHub workflow: the server is attached (the recipe gives it every YAML buffer) but silent
    other = seen["other"]
    assert other["filetype"] == "yaml" and other["clients"] == ["trainspec"] and other["answered"] is True
    assert other["published"] == []


def test_every_neovim_recipe_is_for_a_named_version_and_compiles(tmp_path: Path) -> None:
    """Recipes for a Neovim newer than the installed one are at least valid Lua."""
    assert [r.id for r in RECIPES] == ["neovim-0.11+", "neovim-0.7-0.10"]
    binary = nvim()
    for n, recipe in enumerate(RECIPES):
        path = tmp_path / f"recipe{n}.lua"
        path.write_text(recipe.lua)
        check = f"lua local f, err = loadfile({json.dumps(str(path))}); if not f then error(err) end"
        proc = subprocess.run(
            [binary, "--headless", "-u", "NONE", "-i", "NONE", "-c", check, "-c", "qa!"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0 and "Error" not in proc.stderr + proc.stdout, (recipe.id, proc.stderr)
