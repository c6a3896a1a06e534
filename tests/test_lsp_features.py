"""`trainspec lsp` driven over stdio as an editor drives it: which buffers it speaks about, hover on
diagnostics, where notes and syntax errors are placed, completion of suggested values and of keys
with their defaults, the outline, inlay hints, and the jumps between the keys a rule reads."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .lsp_client import LspClient, markup_text

pytestmark = pytest.mark.external  # launches the server process

CORPUS = Path(__file__).parent / "corpus"
KF_JOB = "[model]\ndim = 4096\nn_heads = 32\nn_kv_heads = 8\n\n[distributed]\ntp = 3\n\n[train]\nseq_len = 2048\n"
WORKFLOW = "name: ci\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: make\n"
KUBERNETES = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: trainer\nspec:\n  containers: []\n"
PYPROJECT = '[project]\nname = "job"\nversion = "0.1"\n'
SF_RUN = (CORPUS / "specforge" / "qwen3-8b-dflash-disaggregated.yaml").read_text()


def start(root: Path, settings: dict[str, Any] | None = None, snippets: bool = True) -> LspClient:
    return LspClient(
        [sys.executable, "-m", "trainspec", "lsp"],
        root,
        {"trainspec": settings or {}},
        initialization_options={"trainspec": settings or {}},
        snippets=snippets,
    )


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LspClient]:
    c = start(tmp_path)
    yield c
    c.shutdown()


def line_of(text: str, start: str) -> int:
    return next(n for n, line in enumerate(text.split("\n")) if line.lstrip().startswith(start))


# -- which buffers ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "language", "text"),
    [
        ("pyproject.toml", "toml", PYPROJECT),
        (".github/workflows/ci.yml", "yaml", WORKFLOW),
        ("deploy/pod.yaml", "yaml", KUBERNETES),
        ("package.json", "json", '{"name": "x", "version": "1.0.0"}'),
    ],
)
def test_a_file_that_is_no_config_gets_nothing(server, tmp_path, name, language, text):
    uri = (tmp_path / name).as_uri()
    assert server.check(uri, language, text) == []
    assert server.hover(uri, 0, 1) is None
    assert (
        server.code_actions(uri, {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}, []) == []
    )
    assert server.request("textDocument/documentSymbol", {"textDocument": {"uri": uri}}) is None


def test_a_file_a_directive_or_a_project_glob_names_hears_its_family_is_unknown_as_a_hint(tmp_path):
    (tmp_path / ".trainspec.toml").write_text('[[configs]]\npaths = ["configs/**/*.yaml"]\n')
    client = start(tmp_path)
    try:
        uri = (tmp_path / "pod.yaml").as_uri()
        (hint,) = client.check(uri, "yaml", "# trainspec: world-size=8\n" + KUBERNETES)
        assert (hint["code"], hint["severity"]) == ("unknown-family", 4)
        said = markup_text(client.hover(uri, 0, 0)["contents"])
        assert said.startswith("**hint[unknown-family]**") and "error[" not in said
        assert "```toml" not in said  # the example is a KempnerForge TOML file, this one is YAML

        uri = (tmp_path / "configs" / "pod.yaml").as_uri()
        assert [d["code"] for d in client.check(uri, "yaml", KUBERNETES)] == ["unknown-family"]
        assert client.check((tmp_path / "deploy" / "pod.yaml").as_uri(), "yaml", KUBERNETES) == []
    finally:
        client.shutdown()


# -- hover and places ------------------------------------------------------------------------------


def test_hover_on_a_yaml_error_shows_no_example_of_another_family_or_format(server, tmp_path):
    uri = (tmp_path / "run.yaml").as_uri()
    text = SF_RUN.replace("report_to: none", "report_to: wandbx")
    (wrong,) = [d for d in server.check(uri, "yaml", text) if d["code"] == "not-allowed-value"]
    said = markup_text(server.hover(uri, wrong["range"]["start"]["line"], 16)["contents"])
    assert said.startswith("**error[not-allowed-value]**")
    assert "```toml" not in said and "norm_type" not in said
    assert "`tracking.report_to`" in said


def test_the_derived_world_size_note_is_at_the_keys_it_comes_from(server, tmp_path):
    uri = (tmp_path / "run.yaml").as_uri()
    (note,) = [d for d in server.check(uri, "yaml", SF_RUN) if d["code"] == "world-size-derived"]
    assert note["range"]["start"]["line"] == line_of(SF_RUN, "nnodes:") > 0
    assert note["severity"] == 3  # information: listed among the problems, not a faint mark


def test_an_unclosed_flow_sequence_is_reported_on_its_own_line(server, tmp_path):
    uri = (tmp_path / "run.yaml").as_uri()
    text = "training:\n  num_epochs: [6\n  max_steps: 10\n"
    (syntax,) = server.check(uri, "yaml", text)
    assert syntax["code"] == "syntax-error" and syntax["range"]["start"] == {"line": 1, "character": 14}
    assert "`[` is never closed" in syntax["message"]


# -- completion ------------------------------------------------------------------------------------


def test_a_value_with_suggested_values_completes_them(server, tmp_path):
    uri = (tmp_path / "run.yaml").as_uri()
    assert "\n  strategy: dflash\n" in SF_RUN
    text = SF_RUN.replace("\n  strategy: dflash\n", "\n  strategy:\n")
    n = line_of(text, "strategy:")
    server.check(uri, "yaml", text)
    items = server.completion(uri, n, len(text.split("\n")[n]))
    assert [i["label"] for i in items] == ["eagle3", "peagle", "dflash", "domino", "dspark"]
    assert items[0]["textEdit"]["newText"] == " eagle3" and items[0]["detail"] == "default"


def test_a_key_is_completed_with_its_default_as_a_snippet_when_the_client_takes_snippets(server, tmp_path):
    uri = (tmp_path / "job.toml").as_uri()
    server.check(uri, "toml", "[model]\nnorm\n")
    (item,) = [i for i in server.completion(uri, 1, 4) if i["label"] == "norm_eps"]
    assert item["textEdit"]["newText"] == "norm_eps = ${1:1e-05}" and item["insertTextFormat"] == 2
    assert item["filterText"] == "norm_eps = "

    plain = start(tmp_path, snippets=False)
    try:
        plain.check(uri, "toml", "[model]\nnorm\n")
        (item,) = [i for i in plain.completion(uri, 1, 4) if i["label"] == "norm_eps"]
        assert item["textEdit"]["newText"] == "norm_eps = " and item.get("insertTextFormat") in (None, 1)
    finally:
        plain.shutdown()


# -- outline, inlay hints, definition and references -----------------------------------------------


def test_the_outline_lists_sections_and_keys(server, tmp_path):
    uri = (tmp_path / "job.toml").as_uri()
    server.check(uri, "toml", KF_JOB)
    symbols = server.request("textDocument/documentSymbol", {"textDocument": {"uri": uri}})
    assert [s["name"] for s in symbols] == ["model", "distributed", "train"]
    model = symbols[0]
    assert [(c["name"], c["detail"]) for c in model["children"]] == [
        ("dim", "4096"),
        ("n_heads", "32"),
        ("n_kv_heads", "8"),
    ]
    assert model["range"]["start"]["line"] == 0 and model["range"]["end"]["line"] == 3
    assert model["selectionRange"] == {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 7}}


def test_inlay_hints_of_unwritten_keys_are_off_unless_asked_for(server, tmp_path):
    uri = (tmp_path / "job.toml").as_uri()
    server.check(uri, "toml", KF_JOB)
    whole = {"start": {"line": 0, "character": 0}, "end": {"line": 10, "character": 0}}
    assert server.request("textDocument/inlayHint", {"textDocument": {"uri": uri}, "range": whole}) is None

    client = start(tmp_path, {"inlayHints": True})
    try:
        client.check(uri, "toml", KF_JOB)
        hints = client.request("textDocument/inlayHint", {"textDocument": {"uri": uri}, "range": whole})
        by_line = {h["position"]["line"]: h for h in hints}
        assert sorted(by_line) == [0, 5, 8]  # [model], [distributed], [train]
        assert by_line[0]["position"]["character"] == len("[model]")
        label = by_line[0]["label"]
        assert label.startswith("n_layers = 32, ") and label.endswith(" more") and " dim = " not in label
        assert "- `max_seq_len` = `2048` (default)" in markup_text(by_line[0]["tooltip"])
    finally:
        client.shutdown()


def test_definition_and_references_lead_from_a_key_to_the_others_its_rule_reads(server, tmp_path):
    uri = (tmp_path / "job.toml").as_uri()
    server.check(uri, "toml", KF_JOB)
    at_tp = {"textDocument": {"uri": uri}, "position": {"line": 6, "character": 1}}
    targets = server.request("textDocument/definition", at_tp)
    assert sorted(t["range"]["start"]["line"] for t in targets) == [2, 3]  # n_heads, n_kv_heads
    assert all(t["uri"] == uri for t in targets)

    at_heads = {"textDocument": {"uri": uri}, "position": {"line": 2, "character": 1}}
    assert sorted(t["range"]["start"]["line"] for t in server.request("textDocument/definition", at_heads)) == [3, 6]
    refs = server.request("textDocument/references", {**at_heads, "context": {"includeDeclaration": True}})
    assert sorted(r["range"]["start"]["line"] for r in refs) == [2, 3, 6]

    # without a diagnostic: the rules that read the key lead to the other keys they read
    server.check(uri, "toml", KF_JOB.replace("tp = 3", "tp = 2"))
    targets = server.request("textDocument/definition", at_tp)
    assert {2, 3} <= {t["range"]["start"]["line"] for t in targets}
