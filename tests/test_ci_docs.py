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
    from trainspec.paths import format_path
    from trainspec.rules.catalogue import family_rules

    family = get_family("kempnerforge")
    page = tool.family_page(family)
    assert "| `model.dim` | integer | `4096` | >= 1 | Hidden (model) width." in page
    assert '| `vlm.cross_attention_every_n_layers` (when arch = "cross_attention") |' in page
    for path in map(format_path, family.schema.paths):
        if "[0]" not in path:
            assert f"`{path}`" in page, path
    for info in family_rules(family):
        assert f"### `{info.id}`" in page
    assert "$ trainspec check example.toml\nexample.toml:6:1: error[tp-divides-heads] distributed.tp = 3" in page


@pytest.mark.parametrize("name", ["kempnerforge", "specforge"])
def test_every_field_of_every_family_is_documented(name):
    from trainspec.families import get_family
    from trainspec.paths import format_path

    family = get_family(name)
    page = load_tool().family_page(family)
    missing = [p for p in map(format_path, family.schema.paths) if "[0]" not in p and f"`{p}`" not in page]
    assert not missing, missing
