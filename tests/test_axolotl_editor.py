"""Axolotl configs in an editor: `trainspec lsp` and the editor schema under the real yaml-language-server.

Axolotl example files have free-form names (`lora-1b.yml`), so the server must recognise the family
from the keys, and yaml-language-server gets the schema from the modeline. The corpus is the
release's own examples, unmodified (tests/data/axolotl/examples-0.18.0).
"""

from __future__ import annotations

import json
import random
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from trainspec import api
from trainspec.families import get_family

from .conftest import AXOLOTL_EXAMPLES, ROOT
from .lsp_client import LspClient, apply_edits, markup_text
from .test_editor_lsp import YAML_SERVER, documents, editor_schema

pytestmark = pytest.mark.external  # launches `trainspec lsp` and yaml-language-server

CORPUS = AXOLOTL_EXAMPLES
LORA = CORPUS / "llama-3" / "lora-1b.yml"
GPU, WORLD_SIZE = "h100", 8


def lines_of(text: str, start: str) -> int:
    """The 0-based line of the first line starting with `start`."""
    return next(n for n, line in enumerate(text.splitlines()) if line.startswith(start))


def errors(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [d for d in found if d["severity"] == 1]


# -- `trainspec lsp` ---------------------------------------------------------------------------------


@pytest.fixture
def ts(tmp_path: Path) -> Iterator[LspClient]:
    client = LspClient(
        [sys.executable, "-m", "trainspec", "lsp", "--stdio"],
        tmp_path,
        {"trainspec": {}},
        initialization_options={"trainspec": {}},
        timeout=30,
    )
    yield client
    client.shutdown()


def test_schema_errors_and_rule_findings_are_published_at_their_lines(ts: LspClient, tmp_path: Path) -> None:
    text = LORA.read_text(encoding="utf-8").replace("micro_batch_size: 2\n", "micro_batch_size: two\n")
    text += "save_strategy: best\n"
    found = ts.check((tmp_path / "lora-1b.yml").as_uri(), "yaml", text)  # a free-form name, no directive
    by_code = {d["code"]: d for d in errors(found)}
    assert set(by_code) == {"wrong-type", "save-strategy-best-needs-metric"}, found
    wrong = by_code["wrong-type"]
    assert wrong["range"]["start"] == {"line": lines_of(text, "micro_batch_size:"), "character": 18}
    assert "micro_batch_size" in wrong["message"]
    assert by_code["save-strategy-best-needs-metric"]["range"]["start"]["line"] == lines_of(text, "save_strategy:")


def test_completion_offers_every_top_level_key_with_its_description(ts: LspClient, tmp_path: Path) -> None:
    uri = (tmp_path / "run.yml").as_uri()
    text = LORA.read_text(encoding="utf-8") + "\n"
    ts.check(uri, "yaml", text)
    items = ts.completion(uri, len(text.splitlines()), 0)
    offered = {i["label"]: i for i in items}
    family = get_family("axolotl")
    properties = family.schema.root["properties"]
    written = {line.split(":")[0] for line in text.splitlines() if line[:1].isalpha()}
    missing = sorted(set(properties) - set(offered) - written)
    assert not missing, missing
    undocumented = [
        k
        for k, spec in properties.items()
        if k in offered
        and spec.get("description")
        and not documents(spec["description"], markup_text(offered[k].get("documentation")))
    ]
    assert not undocumented, undocumented
    # the old names the loader still reads come last, marked deprecated
    legacy = [i for i in items if i["label"] in family.legacy_keys]
    assert legacy and all(i.get("tags") == [1] for i in legacy)
    current = [i["sortText"] for i in items if i["label"] not in family.legacy_keys and not i.get("tags")]
    assert max(current) < min(i["sortText"] for i in legacy)


def test_hover_shows_a_keys_description_type_and_default(ts: LspClient, tmp_path: Path) -> None:
    uri = (tmp_path / "run.yml").as_uri()
    text = LORA.read_text(encoding="utf-8")
    ts.check(uri, "yaml", text)
    hover = ts.hover(uri, lines_of(text, "sequence_len:"), 3)
    shown = markup_text(hover["contents"])
    spec = get_family("axolotl").schema.root["properties"]["sequence_len"]
    assert "`sequence_len`" in shown and "`integer`" in shown and f"default `{spec['default']}`" in shown
    assert documents(spec["description"], shown)


def test_a_warning_is_suppressed_by_its_quick_fix(ts: LspClient, tmp_path: Path) -> None:
    uri = (tmp_path / "run.yml").as_uri()
    text = LORA.read_text(encoding="utf-8") + "evaluation_strategy: steps\n"
    (old,) = [d for d in ts.check(uri, "yaml", text) if d["code"] == "renamed-key"]
    assert old["range"]["start"]["line"] == lines_of(text, "evaluation_strategy:")
    assert "eval_strategy" in old["message"]
    actions = ts.code_actions(uri, old["range"], [old])
    fix = next(a for a in actions if a["title"] == "Suppress `renamed-key` on this line")
    fixed = apply_edits(text, fix["edit"]["changes"][uri])
    assert fixed.endswith("evaluation_strategy: steps  # trainspec: ignore[renamed-key]\n")
    assert [d for d in ts.check(uri, "yaml", fixed) if d["code"] == "renamed-key"] == []


REFUSED = {
    # corpus file -> a word of the loader's own reason (axolotl.utils.config.validate_config at H100 x 8)
    "archived/pythia-12b/config.yml": "max_packed_sequence_len",
    "archived/stablelm-2/1.6b/lora.yml": "flash_attn_rms_norm",
    "archived/xgen-7b/xgen-7b-8k-qlora.yml": "early_stopping_patience",
    "archived/jeopardy-bot/config.yml": "tokens",
    "expert_parallel/qwen3_30ba3b_ep_fft_4gpu.yaml": "warmup_steps",
    "llama-3/diffusion/sft-1b.yaml": "metric_for_best_model",
    "mistral-medium-3_5/qlora-text.yml": "output_dir",
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_config_the_loader_refuses_shows_its_reason(name: str, ts: LspClient, tmp_path: Path) -> None:
    text = (CORPUS / name).read_text(encoding="utf-8")
    found = errors(ts.check((tmp_path / Path(name).name).as_uri(), "yaml", text))
    assert any(REFUSED[name] in d["message"] for d in found), found
    checked = [d for d in api.check(CORPUS / name) if d.severity == "error"]
    assert sorted((d["range"]["start"]["line"] + 1, d["code"]) for d in found) == sorted(
        (d.line, d.rule) for d in checked
    )


# -- the editor schema under yaml-language-server ----------------------------------------------------

SCHEMA = ROOT / "editors" / "schemas" / "axolotl.schema.json"
MODELINE = f"# yaml-language-server: $schema={SCHEMA.as_uri()}\n"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("yls")


@pytest.fixture(scope="module")
def yls(folder: Path) -> Iterator[LspClient]:
    node = shutil.which("node")
    if node is None or not YAML_SERVER.exists():
        pytest.fail(f"needs Node.js and yaml-language-server: run `npm ci` in {ROOT}", pytrace=False)
    client = LspClient([node, str(YAML_SERVER), "--stdio"], folder, {"yaml": {"schemaStore": {"enable": False}}})
    yield client
    client.shutdown()


def test_modeline_completion_offers_the_top_level_keys_with_descriptions(yls: LspClient, folder: Path) -> None:
    uri = (folder / "complete.yml").as_uri()
    text = MODELINE + "base_model: m\n\n"
    yls.check(uri, "yaml", text)
    offered = {i["label"]: markup_text(i.get("documentation")) for i in yls.completion(uri, 2, 0)}
    schema = editor_schema("axolotl")
    keys = {k: v for k, v in schema["properties"].items() if not v.get("deprecated") and k != "base_model"}
    assert set(keys) <= set(offered), sorted(set(keys) - set(offered))
    undocumented = [k for k, v in keys.items() if v.get("description") and not documents(v["description"], offered[k])]
    assert not undocumented, undocumented


def test_modeline_hover_shows_the_description(yls: LspClient, folder: Path) -> None:
    uri = (folder / "hover.yml").as_uri()
    text = MODELINE + LORA.read_text(encoding="utf-8")
    yls.check(uri, "yaml", text)
    schema = editor_schema("axolotl")
    for key in ("micro_batch_size", "gradient_accumulation_steps", "sequence_len", "adapter", "lr_scheduler"):
        hover = yls.hover(uri, lines_of(text, f"{key}:"), 2)
        assert hover is not None, key
        assert documents(schema["properties"][key]["description"], markup_text(hover["contents"])), key


def test_modeline_flags_a_wrong_type_at_its_line(yls: LspClient, folder: Path) -> None:
    uri = (folder / "wrong.yml").as_uri()
    text = MODELINE + LORA.read_text(encoding="utf-8").replace("micro_batch_size: 2\n", "micro_batch_size: two\n")
    found = yls.check(uri, "yaml", text)
    assert [(d["range"]["start"]["line"], "integer" in d["message"]) for d in found] == [
        (lines_of(text, "micro_batch_size:"), True)
    ]


def corpus_sample() -> list[Path]:
    """A seeded sample of the corpus, with the files whose YAML 1.1 readings or old key names show."""
    files = sorted(CORPUS.rglob("*.y*ml"))
    known = [CORPUS / "alst" / "llama3-8b-deepspeed-alst.yaml", CORPUS / "eaft" / "eaft-example.yml"]
    return known + random.Random(27).sample([f for f in files if f not in known], 30)


def test_yaml_language_server_flags_nothing_trainspec_lets_through(yls: LspClient, folder: Path) -> None:
    """On every sampled config `trainspec check` passes, each line yaml-language-server flags is one
    trainspec warns about too (an old key name; `500_000`, an integer to Axolotl's YAML 1.1 loader
    but a string to a YAML 1.2 server)."""
    checked = 0
    for i, path in enumerate(corpus_sample()):
        found = api.check(path, gpu=GPU, world_size=WORLD_SIZE)
        if any(d.severity == "error" for d in found):
            continue
        warned = {d.line for d in found if d.severity == "warning" and d.line is not None}
        flagged = yls.check((folder / f"corpus{i}.yml").as_uri(), "yaml", MODELINE + path.read_text(encoding="utf-8"))
        lines = {d["range"]["start"]["line"] for d in flagged}  # 0-based after the modeline = 1-based in the file
        assert lines <= warned, (path.relative_to(CORPUS).as_posix(), json.dumps(flagged, indent=1)[:2000])
        checked += 1
    assert checked >= 25
