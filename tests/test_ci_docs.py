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


# -- each example shows its own rule first --------------------------------------------------------


def test_every_example_shows_its_own_rule_first():
    """On every page (each version of each built-in family, and the engine's), the first thing `trainspec check`
    prints for a rule's broken example is that rule's finding."""
    assert load_tool().misshown() == []


def _hidden_behind_another_rule():
    """kempnerforge's `pp-exceeds-layers`, with an example that trips `pp-1f1b-microbatches` on an earlier line
    (4 micro-batches for 8 stages) before its own rule (8 stages for 4 layers)."""
    from dataclasses import replace

    from trainspec.families import get_family
    from trainspec.rules.catalogue import family_rules
    from trainspec.spec.examples import Example

    family = get_family("kempnerforge")
    info = next(i for i in family_rules(family) if i.id == "pp-exceeds-layers")
    head = "[model]\nn_layers = 4\n\n[train]\ngrad_accum_steps = 4\n\n[distributed]\n"
    return family, info, replace(info, example=Example(head + "pp = 8\n", head + "pp = 4\n"))


def test_an_example_that_shows_another_rule_first_is_named_with_what_it_showed():
    from dataclasses import replace

    from trainspec.spec.examples import Example, Run

    tool = load_tool()
    family, own, hidden = _hidden_behind_another_rule()
    assert tool.shows_another_rule(own, family) is None
    why = tool.shows_another_rule(hidden, family)
    assert why is not None
    assert why.startswith(
        "kempnerforge.md: the example of `pp-exceeds-layers` (`trainspec check example.toml --family "
        "kempnerforge@5666d0d`) shows `pp-1f1b-microbatches` first: example.toml:5:1: error[pp-1f1b-microbatches] "
        "train.grad_accum_steps = 4 gives 4 micro-batch(es) for distributed.pp = 8 stages"
    )
    assert tool.misshown([family]) == []
    # a note printed first hides the rule as much; a file with no finding at all shows nothing of it
    clean = replace(hidden, example=Example("[model]\nn_layers = 4\n", ""))
    assert "shows `world-size-unknown` first: example.toml: note[world-size-unknown]" in tool.shows_another_rule(
        clean, family
    )
    sized = replace(hidden, example=Example("[model]\nn_layers = 4\n", "", run=Run(world_sizes=(1,))))
    assert tool.shows_another_rule(sized, family).endswith("--world-size 1`) shows no finding at all")


def test_the_tool_refuses_to_write_or_pass_a_page_whose_example_shows_another_rule(tmp_path, monkeypatch, capsys):
    tool = load_tool()
    family, own, hidden = _hidden_behind_another_rule()
    real = tool.family_rules
    monkeypatch.setattr(
        tool, "family_rules", lambda f: tuple(hidden if i == own else i for i in real(f)) if f == family else real(f)
    )
    out = tmp_path / "reference"
    assert tool.main(["--out", str(out)]) == 1
    assert not out.exists()  # nothing written
    assert tool.main(["--check", "--out", str(ROOT / "docs" / "reference")]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("kempnerforge.md: the example of `pp-exceeds-layers` (")
    assert "shows `pp-1f1b-microbatches` first" in err[0]
    assert err[-1].startswith("1 example(s) show another rule before their own")
