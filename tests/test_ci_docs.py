"""The reference docs: generated from the schemas and rules, and a drift check that fails when stale."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys

import pytest

from .conftest import ROOT

TOOL = ROOT / "tools" / "generate_docs.py"


def load_tool():
    spec = importlib.util.spec_from_file_location("generate_docs", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.mark.external
def test_committed_docs_are_current():
    done = subprocess.run([sys.executable, str(TOOL), "--check"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr


@pytest.mark.external
def test_drift_check_fails_on_stale_missing_and_extra_pages(tmp_path, capsys):
    tool = load_tool()
    out = tmp_path / "reference"
    shutil.copytree(ROOT / "docs" / "reference", out)
    assert tool.main(["--check", "--out", str(out)]) == 0
    page = out / "kempnerforge.md"
    page.write_text(page.read_text().replace("Hidden (model) width.", "Hidden width."))
    assert tool.main(["--check", "--out", str(out)]) == 1
    assert "kempnerforge.md is stale" in capsys.readouterr().err
    assert tool.main(["--out", str(out)]) == 0
    assert tool.main(["--check", "--out", str(out)]) == 0
    (out / "engine.md").unlink()
    (out / "old-family.md").write_text("# gone\n")
    assert tool.main(["--check", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "engine.md is stale" in err and "old-family.md belongs to no built-in family" in err
    assert tool.main(["--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "axolotl.md",
        "axolotl@0.18.0.md",
        "engine.md",
        "kempnerforge.md",
        "kempnerforge@089fbbd.md",
        "specforge.md",
        "specforge@0.2.0.md",
        "specforge@08eaeac.md",
    ]


def test_family_page_documents_every_field_and_rule():
    tool = load_tool()
    from trainspec.families import get_family
    from trainspec.rules.catalogue import family_rules
    from trainspec.spec.paths import format_path

    family = get_family("kempnerforge")
    page = tool.family_page(family)
    assert "| `model.dim` | integer | `4096` | >= 1 | Hidden (model) width." in page
    assert '| `vlm.cross_attention_every_n_layers` (when arch = "cross_attention") |' in page
    for path in map(format_path, family.schema.paths):
        if "[0]" not in path:
            assert f"`{path}`" in page, path
    for info in family_rules(family):
        assert f"### `{info.id}`" in page
    assert (
        "$ trainspec check example.toml --family kempnerforge@5666d0d\n"
        "example.toml:6:1: error[tp-divides-heads] distributed.tp = 3"
    ) in page


def test_a_page_shows_all_a_command_prints_and_names_its_version():
    """The summary line and the notes are on the page, and a page of an older version runs that version."""
    from trainspec.families import get_family

    tool = load_tool()
    old = tool.family_page(get_family("kempnerforge@089fbbd"))
    commands = [line for line in old.splitlines() if line.startswith("$ trainspec check")]
    assert commands and all("--family kempnerforge@089fbbd" in line for line in commands)
    block = old.split("### `tp-divides-heads`", 1)[1].split("```console\n", 1)[1].split("```", 1)[0]
    assert block.splitlines()[1:] == [
        "example.toml:6:1: error[tp-divides-heads] distributed.tp = 3 must divide model.n_heads = 32 and "
        "model.n_kv_heads = 8 (tensor parallelism splits the heads across ranks); distributed.tp values that "
        "pass: 1, 2, 4 or 8",
        "example.toml: note[world-size-unknown] world-size rules not checked (world-size-auto-shard-divisible, "
        "world-size-product, cp-mesh-smaller-than-world, pp-stage-fsdp-auto-shard): no world size known; "
        "pass --world-size N",
        "1 error(s), 0 warning(s) in 1 file; no world size, world-size rules not checked",
    ]
    older = tool.family_page(get_family("axolotl@0.18.0"))
    runs = [line for line in older.splitlines() if line.startswith("$ trainspec check")]
    assert runs and all("--family axolotl@0.18.0" in line for line in runs)


@pytest.mark.parametrize("name", ["kempnerforge", "specforge"])
def test_every_field_of_every_family_is_documented(name):
    from trainspec.families import get_family
    from trainspec.spec.paths import format_path

    family = get_family(name)
    page = load_tool().family_page(family)
    missing = [p for p in map(format_path, family.schema.paths) if "[0]" not in p and f"`{p}`" not in page]
    assert not missing, missing
