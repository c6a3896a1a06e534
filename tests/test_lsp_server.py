"""`trainspec lsp`, started as a subprocess and driven over stdio by the same LSP client the editor
tests use: diagnostics with codes, ranges and related places, incremental edits, each kind of quick
fix applied and re-checked, hover and completion for both families."""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from trainspec.editor.lsp.analysis import Settings

from .lsp_client import LspClient, apply_edits, markup_text

pytestmark = pytest.mark.external  # launches the server process

KF_JOB = """\
[model]
dim = 4096
n_heads = 32
n_kv_heads = 8

[distributed]
tp = 3

[train]
seq_lenn = 2048
"""

SF_RUN = """\
model:
  target_model_path: Qwen/Qwen3-8B
data:
  train_data_path: train.jsonl
training:
  num_epochs: 2
"""
SF_CLEAN = (Path(__file__).parent / "corpus" / "specforge" / "qwen3-8b-domino-disaggregated.yaml").read_text()
URLS = "server_urls:\n      - http://127.0.0.1:30000\n"
SF_LEGACY = SF_CLEAN.replace("    " + URLS, "").replace("  seed: 42\n", "  seed: 42\n  " + URLS.replace("  -", "-"))


def start(root: Path, settings: dict[str, Any] | None = None) -> LspClient:
    return LspClient(
        [sys.executable, "-m", "trainspec", "lsp", "--stdio"],
        root,
        {"trainspec": settings or {}},
        initialization_options={"trainspec": settings or {}},
        timeout=30,
    )


@pytest.fixture
def client(tmp_path: Path) -> Iterator[LspClient]:
    c = start(tmp_path)
    yield c
    c.shutdown()


def by_code(diagnostics: list[dict[str, Any]], code: str) -> list[dict[str, Any]]:
    return [d for d in diagnostics if d.get("code") == code]


def problems(diagnostics: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Errors and warnings (notes are information)."""
    return [d for d in diagnostics if d["severity"] <= 2]


def rng(line: int, start: int, end: int) -> dict[str, Any]:
    return {"start": {"line": line, "character": start}, "end": {"line": line, "character": end}}


def apply_action(client: LspClient, uri: str, text: str, action: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """Apply a code action the way an editor does (its edits, sent as incremental changes); the new
    text and the diagnostics published for it."""
    edits = action["edit"]["changes"][uri]
    new = apply_edits(text, edits)
    ordered = sorted(edits, key=lambda e: (e["range"]["start"]["line"], e["range"]["start"]["character"]))
    client.edit(uri, [{"range": e["range"], "text": e["newText"]} for e in reversed(ordered)])
    return new, client.wait_for_version(uri, client.version(uri))


def test_a_rule_and_a_typo_are_published_with_codes_ranges_and_related_places(client, tmp_path):
    uri = (tmp_path / "job.toml").as_uri()
    found = client.check(uri, "toml", KF_JOB)

    (typo,) = by_code(found, "unknown-key")
    assert typo["range"] == rng(9, 0, 8)  # exactly `seq_lenn`
    assert typo["severity"] == 1 and typo["source"] == "trainspec"
    assert "did you mean `seq_len`" in typo["message"]

    (tp,) = by_code(found, "tp-divides-heads")
    assert tp["range"]["start"] == {"line": 6, "character": 0} and tp["severity"] == 1
    related = {r["location"]["range"]["start"]["line"] for r in tp["relatedInformation"]}
    assert related == {2, 3}  # n_heads and n_kv_heads
    assert all(r["location"]["uri"] == uri for r in tp["relatedInformation"])


def test_the_rename_fix_removes_the_typo_and_nothing_else(client, tmp_path):
    uri = (tmp_path / "job.toml").as_uri()
    found = client.check(uri, "toml", KF_JOB)
    (typo,) = by_code(found, "unknown-key")
    actions = client.code_actions(uri, typo["range"], [typo])
    rename = next(a for a in actions if a["title"] == "Rename `seq_lenn` to `seq_len`")
    assert rename["kind"] == "quickfix" and rename["isPreferred"] is True

    text, after = apply_action(client, uri, KF_JOB, rename)
    assert "seq_len = 2048" in text
    assert by_code(after, "unknown-key") == []
    assert by_code(after, "tp-divides-heads")  # the other problem is still reported


def test_a_key_in_the_wrong_section_is_moved_where_it_belongs(client, tmp_path):
    uri = (tmp_path / "job.toml").as_uri()
    source = '[train]\nseq_len = 2048\nlr = 3e-4  # peak\n\n[optimizer]\nname = "adamw"\n'
    (wrong,) = by_code(client.check(uri, "toml", source), "unknown-key")
    move = next(a for a in client.code_actions(uri, wrong["range"], [wrong]) if a["title"].startswith("Move"))
    assert move["title"] == "Move `train.lr` to `optimizer.lr`"
    text, after = apply_action(client, uri, source, move)
    assert text == '[train]\nseq_len = 2048\n\n[optimizer]\nlr = 3e-4  # peak\nname = "adamw"\n'
    assert problems(after) == []


def test_setting_the_degree_to_a_value_that_passes(client, tmp_path):
    uri = (tmp_path / "job.toml").as_uri()
    found = client.check(uri, "toml", KF_JOB)
    (tp,) = by_code(found, "tp-divides-heads")
    titles = [a["title"] for a in client.code_actions(uri, tp["range"], [tp])]
    assert "Set distributed.tp = 2" in titles and "Set distributed.tp = 4" in titles
    assert not any(t.startswith("Set model.") for t in titles)  # a head count change breaks other rules
    action = next(a for a in client.code_actions(uri, tp["range"], [tp]) if a["title"] == "Set distributed.tp = 4")
    text, after = apply_action(client, uri, KF_JOB, action)
    assert "tp = 4" in text
    assert not [d for d in after if str(d["code"]).startswith("tp-divides")]


def test_a_suppression_comment_silences_exactly_that_problem(client, tmp_path):
    uri = (tmp_path / "job.toml").as_uri()
    (tp,) = by_code(client.check(uri, "toml", KF_JOB), "tp-divides-heads")
    actions = client.code_actions(uri, tp["range"], [tp])
    suppress = next(a for a in actions if a["title"] == "Suppress `tp-divides-heads` on this line")
    text, after = apply_action(client, uri, KF_JOB, suppress)
    assert "tp = 3  # trainspec: ignore[tp-divides-heads]" in text
    assert by_code(after, "tp-divides-heads") == [] and by_code(after, "unused-suppression") == []
    assert by_code(after, "unknown-key")


def test_incremental_edits_and_a_half_typed_buffer(client, tmp_path):
    uri = (tmp_path / "job.toml").as_uri()
    client.check(uri, "toml", KF_JOB)
    client.edit(uri, [{"range": rng(6, 5, 6), "text": "4"}])  # tp = 3 -> tp = 4
    after = client.wait_for_version(uri, client.version(uri))
    assert by_code(after, "tp-divides-heads") == [] and by_code(after, "unknown-key")

    for n, char in enumerate("[distri"):  # typing a table header, one key at a time
        client.edit(uri, [{"range": rng(10, n, n), "text": char}] if n else [{"range": rng(10, 0, 0), "text": "["}])
    broken = client.wait_for_version(uri, client.version(uri))
    (syntax,) = by_code(broken, "syntax-error")
    assert syntax["range"]["start"]["line"] == 10

    client.edit(uri, [{"range": rng(10, 0, 7), "text": ""}])
    healed = client.wait_for_version(uri, client.version(uri))
    assert by_code(healed, "syntax-error") == [] and by_code(healed, "unknown-key")
    assert client.hover(uri, 6, 0) is not None  # still serving


def test_while_a_new_key_is_typed_the_other_diagnostics_stay(client, tmp_path):
    """A buffer that does not parse gets its syntax error and the last good diagnostics of its other lines,
    moved with the lines typed above them; those on the lines edited since are left out until it parses."""
    uri = (tmp_path / "job.toml").as_uri()
    before = client.check(uri, "toml", KF_JOB)
    (rule,) = by_code(before, "tp-divides-heads")
    (typo,) = by_code(before, "unknown-key")
    assert [r["location"]["range"]["start"]["line"] for r in rule["relatedInformation"]] == [2, 3]

    client.edit(uri, [{"range": rng(2, 12, 12), "text": "\nnorm_e"}])  # a new key below n_heads, half typed
    typing = client.wait_for_version(uri, client.version(uri))
    (syntax,) = by_code(typing, "syntax-error")
    assert syntax["range"]["start"]["line"] == 3
    (kept,) = by_code(typing, "tp-divides-heads")
    assert kept["range"]["start"]["line"] == rule["range"]["start"]["line"] + 1  # moved with the new line
    assert [r["location"]["range"]["start"]["line"] for r in kept["relatedInformation"]] == [2, 4]
    assert kept["message"] == rule["message"]
    assert by_code(typing, "unknown-key")[0]["range"]["start"]["line"] == typo["range"]["start"]["line"] + 1

    client.edit(uri, [{"range": rng(7, 5, 6), "text": "5"}])  # the rule's own line changes while it does not parse
    changed = client.wait_for_version(uri, client.version(uri))
    assert by_code(changed, "syntax-error") and by_code(changed, "unknown-key")
    assert by_code(changed, "tp-divides-heads") == []  # on an edited line: no longer vouched for

    client.edit(uri, [{"range": rng(3, 6, 6), "text": "ps = 1e-6"}])  # the key finished: it parses again
    parsed = client.wait_for_version(uri, client.version(uri))
    assert by_code(parsed, "syntax-error") == [] and by_code(parsed, "unknown-key")


def test_yaml_value_fixes_follow_the_quoting_of_the_file(client, tmp_path):
    """The enum fix writes the allowed value as the replaced one was written: plain, single or double quoted."""
    for n, (written, fixed) in enumerate(
        [("flex_attentio", "flex_attention"), ('"flex_attentio"', '"flex_attention"'), ("'sdp'", "'sdpa'")]
    ):
        uri = (tmp_path / f"run{n}.yaml").as_uri()
        source = SF_RUN + f"  attention_backend: {written}\n"
        (found,) = by_code(client.check(uri, "yaml", source), "not-allowed-value")
        fix = next(a for a in client.code_actions(uri, found["range"], [found]) if a["title"].startswith("Set "))
        text, after = apply_action(client, uri, source, fix)
        assert text.endswith(f"  attention_backend: {fixed}\n") and by_code(after, "not-allowed-value") == []


def test_hover_documents_a_key_its_rules_and_its_resolved_value(client, tmp_path):
    uri = (tmp_path / "job.toml").as_uri()
    client.check(uri, "toml", KF_JOB)
    on_tp = markup_text(client.hover(uri, 6, 0)["contents"])
    assert "`distributed.tp`" in on_tp and "Tensor-parallel degree" in on_tp
    assert "default `1`" in on_tp and "In this config: `3`" in on_tp
    assert "`tp-divides-heads`" in on_tp
    assert "error[tp-divides-heads]" in on_tp and "Fixed:" in on_tp  # the explanation of the diagnostic on it

    on_model = markup_text(client.hover(uri, 0, 2)["contents"])
    assert "- `max_seq_len` = `2048` (default)" in on_model  # not written, resolved from the schema
    assert "`dim`" not in on_model.split("Not written")[1]  # written keys are not listed


def labels(items: list[dict[str, Any]]) -> list[str]:
    return [i["label"] for i in items]


def test_completion_of_kempnerforge_keys_and_values(client, tmp_path):
    uri = (tmp_path / "job.toml").as_uri()
    client.check(uri, "toml", "[train]\nse\n")
    keys = client.completion(uri, 1, 2)
    seq_len = next(i for i in keys if i["label"] == "seq_len")
    # the client takes snippets: the default is a placeholder to accept or type over
    assert seq_len["textEdit"]["newText"] == "seq_len = ${1:2048}" and seq_len["textEdit"]["range"] == rng(1, 0, 2)
    assert "sequence" in markup_text(seq_len["documentation"]).lower()
    assert "mixed_precision" in labels(keys) and "dim" not in labels(keys)

    client.open(uri, "toml", "[model]\ndim = 4096\n\n[train]\nseq_len = 2048\n[")
    tables = labels(client.completion(uri, 5, 1))
    assert "optimizer" in tables and "model" not in tables and "train" not in tables

    client.open(uri, "toml", "[train]\nmixed_precision = \n")
    values = client.completion(uri, 1, 18)
    assert labels(values) == ['"bf16"', '"fp16"', '"fp32"', '"fp8"']
    assert "bfloat16" in markup_text(values[0]["documentation"])


def test_completion_of_specforge_keys_and_values(client, tmp_path):
    uri = (tmp_path / "run.yaml").as_uri()
    client.check(uri, "yaml", SF_RUN + "  attention_backend: \n")
    values = client.completion(uri, 6, 21)
    assert labels(values) == ["eager", "sdpa", "flex_attention", "fa", "usp"]
    assert "FlexAttention" in markup_text(values[2]["documentation"])

    client.open(uri, "yaml", SF_RUN + "  \n")
    keys = client.completion(uri, 6, 2)
    assert {"learning_rate", "attention_backend"} <= set(labels(keys))
    assert "num_epochs" not in labels(keys)  # written already
    assert "target_model_path" not in labels(keys)  # another section's


def test_a_legacy_specforge_key_is_migrated(client, tmp_path):
    uri = (tmp_path / "run.yaml").as_uri()
    assert "  seed: 42\n  server_urls:\n    - http" in SF_LEGACY
    (legacy,) = by_code(client.check(uri, "yaml", SF_LEGACY), "legacy-key-migrated")
    assert legacy["range"]["start"]["line"] == 30 and 2 in legacy.get("tags", [])  # Deprecated
    actions = client.code_actions(uri, legacy["range"], [legacy])
    migrate = next(a for a in actions if a["title"] == "Migrate legacy keys to their current place")
    text, after = apply_action(client, uri, SF_LEGACY, migrate)
    assert "  seed: 42\ntracking:" in text
    assert "    backend: mooncake\n    mooncake_metadata_server" in text  # the rest kept as written
    assert "\n    server_urls:\n    - http://127.0.0.1:30000\n" in text or "      - http://127.0.0.1:30000" in text
    assert problems(after) == []


def test_rules_only_leaves_schema_problems_to_the_schema_servers(tmp_path):
    c = start(tmp_path, {"rulesOnly": True})
    try:
        uri = (tmp_path / "job.toml").as_uri()
        codes = {d["code"] for d in c.check(uri, "toml", KF_JOB)}
        assert "tp-divides-heads" in codes and "unknown-key" not in codes
        assert c.completion(uri, 9, 0) == []
    finally:
        c.shutdown()


def test_beside_a_schema_server_each_problem_is_reported_once(tmp_path):
    """The client says taplo and yaml-language-server run too (`schemaServers`, in its initialization options
    only): their parsers report every syntax error; a file tied to trainspec's schema, by its schema comment
    or by the schema settings the client sends, gets its schema problems and completion from them too."""
    yaml_schemas = {"yaml": {"schemas": {"/schemas/specforge.schema.json": ["runs/*.yaml"]}}}
    c = LspClient(
        [sys.executable, "-m", "trainspec", "lsp"],
        tmp_path,
        {"trainspec": {"worldSize": 8}, **yaml_schemas},  # the settings sent later do not repeat schemaServers
        initialization_options={"trainspec": {"schemaServers": ["toml", "yaml"]}},
        timeout=30,
    )
    try:
        untied = (tmp_path / "job.toml").as_uri()
        codes = {d["code"] for d in c.check(untied, "toml", KF_JOB)}
        assert {"unknown-key", "tp-divides-heads"} <= codes  # taplo has no schema for it: trainspec says all
        assert c.completion(untied, 9, 0)
        assert by_code(c.check(untied, "toml", KF_JOB + "[broken\n"), "syntax-error") == []  # taplo says it

        tied = (tmp_path / "tied.toml").as_uri()
        found = c.check(tied, "toml", "#:schema ./.trainspec/schemas/kempnerforge.schema.json\n" + KF_JOB)
        codes = {d["code"] for d in found}
        assert "tp-divides-heads" in codes and "unknown-key" not in codes
        assert c.completion(tied, 10, 0) == []

        (tmp_path / "runs").mkdir()
        bad = SF_RUN + "  attention_backend: flex\n"
        matched = c.check((tmp_path / "runs" / "a.yaml").as_uri(), "yaml", bad)
        elsewhere = c.check((tmp_path / "b.yaml").as_uri(), "yaml", bad)
        assert by_code(matched, "not-allowed-value") == [] and by_code(elsewhere, "not-allowed-value")
    finally:
        c.shutdown()


def test_rules_only_false_publishes_everything_beside_a_schema_server(tmp_path):
    c = start(tmp_path, {"rulesOnly": False, "schemaServers": ["toml"]})
    try:
        uri = (tmp_path / "tied.toml").as_uri()
        found = c.check(uri, "toml", "#:schema kempnerforge.schema.json\n" + KF_JOB + "[broken\n")
        assert by_code(found, "syntax-error")
        found = c.check(uri, "toml", "#:schema kempnerforge.schema.json\n" + KF_JOB)
        assert by_code(found, "unknown-key") and c.completion(uri, 10, 0)
    finally:
        c.shutdown()


def test_world_size_and_select_settings_flow_into_the_check(tmp_path):
    c = start(tmp_path, {"worldSize": 8, "ignore": ["unknown-key"]})
    try:
        uri = (tmp_path / "job.toml").as_uri()
        codes = {d["code"] for d in c.check(uri, "toml", KF_JOB)}
        assert "world-size-product" in codes or "world-size-auto-shard-divisible" in codes
        assert "unknown-key" not in codes and "world-size-unknown" not in codes
    finally:
        c.shutdown()


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("a.toml", "[model\x00]]]\n= = =\n"),
        ("b.yaml", "a: [" * 2000),
        ("c.json", '{"model": {"dim": 1e999, '),
        ("d.yaml", "\ufeff\t- : :\n  ? [\n"),
    ],
)
def test_garbage_never_stops_the_server(client, tmp_path, name, text):
    uri = (tmp_path / name).as_uri()
    language = name.rsplit(".", 1)[1]
    found = client.check(uri, language, text)
    assert found and all(d["source"] == "trainspec" for d in found)
    client.hover(uri, 0, 1)
    client.completion(uri, 0, 1)
    client.code_actions(uri, rng(0, 0, 1), found)
    assert client.check(uri, language, "") is not None  # and it still answers
    assert json.dumps(found)


def test_a_200_line_config_is_checked_within_100_ms_of_a_change(client, tmp_path):
    uri = (tmp_path / "job.toml").as_uri()
    text = KF_JOB + "".join(f"# line {n}\n" for n in range(200 - KF_JOB.count("\n")))
    client.check(uri, "toml", text)
    latencies = []
    for n in range(12):
        sent = time.perf_counter()
        client.edit(uri, [{"range": rng(6, 5, 6), "text": "3" if n % 2 else "4"}])
        found = client.wait_for_version(uri, client.version(uri))
        latencies.append(time.perf_counter() - sent)
        assert bool(by_code(found, "tp-divides-heads")) == bool(n % 2)
    assert statistics.median(latencies) < 0.1  # debounce included; bench/lsp.py measures it in full


def test_a_2000_line_config_is_checked_within_100_ms_of_a_change(client, tmp_path):
    """A long list, edited in its middle: the edited line is re-read alone (bench/lsp.py measures it in full)."""
    uri = (tmp_path / "finetune.yaml").as_uri()
    lines = ["base_model: org/model", "learning_rate: 0.0002", "adapter: lorax", "datasets:"]
    for n in range(998):
        lines += [f"  - path: org/data-{n:04d}", "    type: chat_template"]  # line 1002: data-0499
    client.check(uri, "yaml", "\n".join(lines) + "\n")
    latencies = []
    for n in range(12):
        sent = time.perf_counter()
        client.edit(uri, [{"range": rng(1002, 21, 22), "text": "7" if n % 2 == 0 else "9"}])
        found = client.wait_for_version(uri, client.version(uri))
        latencies.append(time.perf_counter() - sent)
        assert by_code(found, "adapter-known")
    assert statistics.median(latencies) < 0.1


def test_check_never_imports_pygls(tmp_path):
    job = tmp_path / "job.toml"
    job.write_text(KF_JOB)
    code = (
        "import sys; from trainspec.cli import main; main(['check', sys.argv[1]]); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pygls', 'lsprotocol')))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(job)], capture_output=True, text=True, check=False)
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stderr


VSCODE_STUB = """
const path = require("path");
const calls = (globalThis.calls = { errors: [], commands: [] });
let settings = JSON.parse(process.env.SETTINGS);
module.exports = {
  workspace: {
    workspaceFolders: process.env.FOLDER ? [{ uri: { fsPath: process.env.FOLDER } }] : [],
    getConfiguration: (section) => section === "trainspec" ? ({ ...settings, get(k) { return settings[k]; } })
      : ({ get(k) { return (JSON.parse(process.env.OTHER || "{}")[section] || {})[k]; } }),
    createFileSystemWatcher: (glob) => ({ glob }),
    onDidChangeConfiguration: (listener) => { globalThis.changed = (s) => { settings = s; return listener(
      { affectsConfiguration: (name) => name === "trainspec.path" }); }; return {}; },
  },
  extensions: { getExtension: (id) => (process.env.INSTALLED || "").split(",").includes(id) ? { id }
    : id === "ms-python.python" && process.env.PYTHON ? {
    isActive: true,
    exports: { environments: {
      getActiveEnvironmentPath: () => ({ path: process.env.PYTHON }),
      resolveEnvironment: async (e) => ({ executable: { uri: { fsPath: e.path } } }),
      onDidChangeActiveEnvironmentPath: () => ({}),
    } },
  } : undefined },
  window: { showErrorMessage: async (message) => { calls.errors.push(message); } },
  commands: { executeCommand: (...args) => calls.commands.push(args) },
};
"""
CLIENT_STUB = """
globalThis.started = [];
class LanguageClient {
  constructor(id, name, server, options) { this.record = { id, server, options, stopped: false };
    globalThis.started.push(this.record); }
  start() { return Promise.resolve(); }
  stop() { this.record.stopped = true; return Promise.resolve(); }
}
module.exports = { LanguageClient };
"""
RUN_EXTENSION = """
const e = require("./extension.js");
(async () => {
  await e.activate({ subscriptions: [] });
  if (process.env.CHANGE) await globalThis.changed(JSON.parse(process.env.CHANGE));
  const s = globalThis.started.map((c) => ({ server: c.server, stopped: c.stopped,
    selector: c.options.documentSelector, sync: c.options.synchronize, init: c.options.initializationOptions }));
  console.log(JSON.stringify({ started: s, errors: globalThis.calls.errors }));
})();
"""


def run_extension(tmp_path: Path, settings: dict, **env: str) -> dict:
    """The extension run by Node against stand-ins for the `vscode` and language-client modules."""
    stubs = tmp_path / "node_modules"
    (stubs / "vscode").mkdir(parents=True, exist_ok=True)
    (stubs / "vscode" / "index.js").write_text(VSCODE_STUB)
    (stubs / "vscode-languageclient").mkdir(exist_ok=True)
    (stubs / "vscode-languageclient" / "node.js").write_text(CLIENT_STUB)
    extension = Path(__file__).resolve().parent.parent / "editors" / "vscode" / "extension.js"
    (tmp_path / "extension.js").write_text(extension.read_text())
    environment = {"PATH": env.pop("PATH", "/nonexistent"), "SETTINGS": json.dumps(settings), **env}
    node = shutil.which("node")
    assert node is not None, "needs Node.js"
    out = subprocess.run([node, "-e", RUN_EXTENSION], cwd=tmp_path, capture_output=True, text=True, env=environment)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_the_vscode_extension_starts_trainspec_lsp_with_its_settings(tmp_path):
    ran = run_extension(tmp_path, {"path": "/opt/bin/trainspec", "worldSize": [8]})
    (started,) = ran["started"]
    assert started["server"] == {"command": "/opt/bin/trainspec", "args": ["lsp"]}
    assert [s["language"] for s in started["selector"]] == ["toml", "yaml", "json"]
    assert started["sync"] == {
        "configurationSection": ["trainspec", "yaml", "json", "evenBetterToml"],
        "fileEvents": {"glob": "**/{pyproject.toml,.trainspec.toml}"},
    }
    assert started["init"]["trainspec"]["worldSize"] == [8]
    assert started["init"]["trainspec"]["schemaServers"] == ["json"]  # VS Code's own JSON support


def test_the_vscode_extension_tells_the_server_which_schema_servers_run_and_what_they_check(tmp_path):
    """The YAML and Even Better TOML extensions, when installed, and the settings that tie files to schemas:
    the server reads them to leave those extensions what they report (`schema_servers.left`)."""
    other = {"yaml": {"schemas": {"./.trainspec/schemas/axolotl.schema.json": "finetune/*.yml"}}}
    ran = run_extension(
        tmp_path,
        {"path": "/opt/bin/trainspec"},
        INSTALLED="redhat.vscode-yaml,tamasfe.even-better-toml",
        OTHER=json.dumps(other),
    )
    (started,) = ran["started"]
    init = started["init"]
    assert init["trainspec"]["schemaServers"] == ["json", "yaml", "toml"]
    assert init["yaml"] == other["yaml"] and "json" not in init
    settings = Settings.from_client(init)
    assert settings.rules_only is None and settings.schema_servers == {"json", "yaml", "toml"}
    assert settings.associations == (("glob", "finetune/*.yml", "./.trainspec/schemas/axolotl.schema.json"),)


def test_the_vscode_extension_finds_trainspec_as_the_python_extensions_do(tmp_path):
    """The selected interpreter first, then the workspace's virtualenv, then PATH."""
    interpreter_bin = tmp_path / "env" / "bin"
    executable(interpreter_bin / "python")
    beside = executable(interpreter_bin / "trainspec")
    workspace = tmp_path / "work"
    in_venv = executable(workspace / ".venv" / "bin" / "trainspec")
    on_path = executable(tmp_path / "path-bin" / "trainspec")
    everything = {"PYTHON": str(interpreter_bin / "python"), "FOLDER": str(workspace), "PATH": str(on_path.parent)}

    def command(**env: str) -> str:
        (started,) = run_extension(tmp_path, {"path": ""}, **env)["started"]
        return started["server"]["command"]

    assert command(**everything) == str(beside)
    beside.unlink()
    assert command(**everything) == str(in_venv)
    in_venv.unlink()
    assert command(**everything) == str(on_path)


def test_the_vscode_extension_names_the_setting_when_trainspec_is_nowhere(tmp_path):
    ran = run_extension(tmp_path, {"path": ""}, FOLDER=str(tmp_path))
    assert ran["started"] == []
    (error,) = ran["errors"]
    assert "trainspec.path" in error and "pip install 'trainspec[lsp]'" in error


def test_a_changed_trainspec_path_restarts_the_server_without_a_reload(tmp_path):
    ran = run_extension(tmp_path, {"path": "/opt/a/trainspec"}, CHANGE=json.dumps({"path": "/opt/b/trainspec"}))
    first, second = ran["started"]
    assert (first["server"]["command"], first["stopped"]) == ("/opt/a/trainspec", True)
    assert (second["server"]["command"], second["stopped"]) == ("/opt/b/trainspec", False)


def test_the_vscode_extension_gives_toml_files_a_language():
    """VS Code has no TOML language of its own: without one, .toml files are plain text and the
    extension never starts for KempnerForge configs."""
    manifest = json.loads((Path(__file__).resolve().parent.parent / "editors" / "vscode" / "package.json").read_text())
    (toml,) = [lang for lang in manifest["contributes"]["languages"] if lang["id"] == "toml"]
    assert ".toml" in toml["extensions"] and "onLanguage:toml" in manifest["activationEvents"]


def test_the_project_configuration_and_file_directives_apply(client, tmp_path):
    uri = (tmp_path / "job.toml").as_uri()
    assert by_code(client.check(uri, "toml", KF_JOB), "world-size-unknown")
    project = tmp_path / ".trainspec.toml"
    project.write_text('world-size = 8\nignore = ["unknown-key"]\n')
    mark = client.publication_mark()
    client.notify("textDocument/didSave", {"textDocument": {"uri": project.as_uri()}})
    codes = {d["code"] for d in client.diagnostics(uri, mark)}
    assert "world-size-unknown" not in codes and "unknown-key" not in codes
    assert "tp-divides-heads" in codes

    directive = "# trainspec: world-size=6\n" + KF_JOB.replace("tp = 3", "tp = 2\ndp_shard = 4")
    found = client.check(uri, "toml", directive)
    (product,) = by_code(found, "world-size-product")
    assert "world size is 6" in product["message"]


def test_without_pygls_the_command_says_how_to_install_it():
    code = "import sys; sys.modules['pygls'] = None; from trainspec.cli import main; sys.exit(main(['lsp']))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 2 and out.stdout == ""  # stdout belongs to the protocol
    assert "pip install 'trainspec[lsp]'" in out.stderr


def test_rules_only_still_offers_the_rename_and_move_fixes(tmp_path):
    """The schema servers publish the unknown key; the fix for it is trainspec's to offer all the same."""
    c = start(tmp_path, {"rulesOnly": True})
    try:
        uri = (tmp_path / "job.toml").as_uri()
        source = '[train]\nseq_lenn = 2048\nlr = 3e-4\n\n[optimizer]\nname = "adamw"\n'
        assert by_code(c.check(uri, "toml", source), "unknown-key") == []  # left to taplo
        actions = c.code_actions(uri, rng(1, 0, 8), [])
        rename = next(a for a in actions if a["title"] == "Rename `seq_lenn` to `seq_len`")
        assert "diagnostics" not in rename or not rename["diagnostics"]  # about nothing this server published
        text, _ = apply_action(c, uri, source, rename)
        assert text.startswith("[train]\nseq_len = 2048\n")
        titles = [a["title"] for a in c.code_actions(uri, rng(2, 0, 2), [])]
        assert "Move `train.lr` to `optimizer.lr`" in titles
    finally:
        c.shutdown()


@pytest.mark.parametrize(
    ("source", "code", "title", "fixed"),
    [
        ('[model]\nnorm_type = "rmsnrm"\n', "not-allowed-value", 'Set model.norm_type = "rmsnorm"', '= "rmsnorm"\n'),
        ('[train]\nmax_steps = "4"\n', "wrong-type", "Set train.max_steps = 4", "max_steps = 4\n"),
        ("[train]\nmax_steps = 0\n", "out-of-range", "Set train.max_steps = 1", "max_steps = 1\n"),
    ],
)
def test_a_value_the_message_names_is_one_fix_away(client, tmp_path, source, code, title, fixed):
    uri = (tmp_path / "job.toml").as_uri()
    (found,) = by_code(client.check(uri, "toml", source), code)
    fix = next(a for a in client.code_actions(uri, found["range"], [found]) if a["title"] == title)
    assert fix["isPreferred"] is True and fix["diagnostics"][0]["code"] == code
    text, after = apply_action(client, uri, source, fix)
    assert fixed in text and by_code(after, code) == []


def test_a_notification_leaves_no_future_behind():
    """pygls files the future of a generator-run notification (`didChange`) under an id no response
    removes; the server's protocol drops it once done, so memory does not grow with each keystroke
    (bench/lsp_soak.py measures the whole server)."""
    from pygls.protocol import LanguageServerProtocol

    from trainspec.editor.lsp.server import TrainspecServer

    def a_generator_handler(params: Any) -> Iterator[None]:
        yield from ()

    def left_behind(server: Any) -> int:
        protocol = server.protocol
        protocol.fm.builtin_features["test/notify"] = a_generator_handler
        for _ in range(50):
            protocol._handle_notification("test/notify", None)
        return len(protocol._request_futures)

    class Plain(TrainspecServer):
        def __init__(self) -> None:
            super(TrainspecServer, self).__init__("plain", "0", protocol_cls=LanguageServerProtocol)

    assert left_behind(Plain()) == 50  # what pygls alone keeps
    assert left_behind(TrainspecServer()) == 0
