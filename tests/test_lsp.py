"""The language server's parts, in process: positions and ranges, settings, diagnostics as LSP values,
the quick fixes (each applied and checked again), completion contexts, message framing, and where pygls
may be imported.

`test_lsp_server.py` drives the same features through a real client over stdio.
"""

from __future__ import annotations

import ast
import asyncio
import io
import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest
from lsprotocol import types as lsp

from trainspec.cli import main
from trainspec.editor.lsp.actions import _candidates, code_actions
from trainspec.editor.lsp.analysis import Analysis, Settings
from trainspec.editor.lsp.completion import complete
from trainspec.editor.lsp.convert import span, to_lsp
from trainspec.editor.lsp.framing import (
    FramingError,
    StreamReader,
    TooLarge,
    frames,
)
from trainspec.editor.lsp.hover import hover
from trainspec.editor.lsp.text import Edit, Source, apply, line_edits
from trainspec.families import get_family
from trainspec.spec.diagnostics import Diagnostic, Related, Severity, at_world_size
from trainspec.spec.limits import LSP_MESSAGE_BYTES

SRC = Path(__file__).resolve().parent.parent / "src" / "trainspec"


@pytest.mark.parametrize(
    ("line", "column", "end"),
    [
        ("seq_len = 2048", 0, 7),  # a TOML key
        ("seq_len = 2048", 10, 14),  # its value
        ('name = "a b\\" c"  # x', 7, 16),  # a quoted string with an escaped quote
        ("betas = [0.9, [1, 2]] # x", 8, 21),  # a bracketed value
        ("  chat_template: qwen chat  # note", 2, 15),  # a YAML key
        ("  chat_template: qwen chat  # note", 17, 26),  # a plain scalar with a space, up to the comment
        ("key =", 5, 5),  # nothing there: the rest of the line, empty
    ],
)
def test_token_end(line, column, end):
    assert Source(line).token_end(0, column) == end


def test_positions_count_utf16_units_on_the_wire_and_code_points_inside():
    source = Source('a = "😀x"\nb = 1\n')
    assert source.position(0, 6) == lsp.Position(line=0, character=7)  # 😀 is two UTF-16 units
    assert source.from_client(lsp.Position(line=0, character=7)) == (0, 6)
    assert Source(source.text, lsp.PositionEncodingKind.Utf32).position(0, 6).character == 6
    assert source.place(source.offset(1, 2)) == (1, 2)


def test_line_edits_touch_only_changed_lines():
    old = "a: 1\nb: 2\nc: 3\nd: 4\n"
    new = "a: 1\nb: 20\nc: 3\nd: 4\ne: 5\n"
    edits = line_edits(old, new)
    assert apply(old, edits) == new
    assert [e.new for e in edits] == ["b: 20\n", "e: 5\n"]


def test_settings_take_what_is_valid_and_ignore_the_rest():
    s = Settings.from_client(
        {"trainspec": {"family": "kempnerforge", "worldSize": [8, 0, "x", True, 16], "select": ["tp", 3]}}
    )
    assert (s.family, s.world_sizes, s.select) == ("kempnerforge", (8, 16), ("tp",))
    assert Settings.from_client({"worldSize": 4, "debounceMs": 10}).world_sizes == (4,)
    assert Settings.from_client({"debounceMs": 10}).debounce == 0.01
    assert Settings.from_client({"rulesOnly": "yes", "debounceMs": -1}) == Settings()
    assert Settings.from_client(None) == Settings() == Settings.from_client([1, 2])


def test_a_diagnostic_keeps_its_own_end_and_otherwise_ends_with_its_token():
    source = Source("[distributed]\ntp = 3\n")
    assert span(source, 2, 1, (2, 7)) == (1, 0, 1, 6)
    assert span(source, 2, 1) == (1, 0, 1, 2)
    assert span(source, None, None) == (0, 0, 0, 13)  # no place in the file: its first line


def test_a_diagnostic_as_the_client_gets_it():
    source = Source("[distributed]\ntp = 3\n\n[model]\nn_heads = 32\n")
    d = Diagnostic(
        "job.toml", 2, 1, ("distributed", "tp"), "tp-divides-heads", Severity.ERROR, "tp must divide n_heads",
        related=(Related(("model", "n_heads"), 5, 1),), world_size=8,
    )  # fmt: skip
    shown = to_lsp(d, source, "file:///job.toml", get_family("kempnerforge"))
    assert shown.code == "tp-divides-heads" and shown.source == "trainspec"
    assert shown.severity is lsp.DiagnosticSeverity.Error and shown.message.endswith("(at world size 8)")
    assert shown.data == {"rule": "tp-divides-heads", "config_path": "distributed.tp"}
    (related,) = shown.related_information or []
    assert related.location.range.start.line == 4 and related.message == "model.n_heads"
    note = Diagnostic("job.toml", None, None, (), "world-size-unknown", Severity.NOTE, "no world size", origin="x")
    assert to_lsp(note, source, "u", None).severity is lsp.DiagnosticSeverity.Information
    unused = Diagnostic("job.toml", 1, 1, (), "unused-suppression", Severity.WARNING, "unused")
    assert to_lsp(unused, source, "u", None).tags == [lsp.DiagnosticTag.Unnecessary]


def test_a_check_at_several_world_sizes_names_each_size_once():
    source = Source("[distributed]\ntp = 3\n")
    d = Diagnostic(
        "job.toml", 2, 1, ("distributed", "tp"), "tp-divides-heads", Severity.ERROR, "tp must divide n_heads"
    )
    several = replace(d, world_size=8).adding(at_world_size(8))
    assert to_lsp(several, source, "file:///job.toml", None).message == "at world size 8: tp must divide n_heads"


def fixes(analysis: Analysis) -> dict[str, str]:
    """Every offered fix, by title, as the text it produces."""
    out = {}
    for action in code_actions(analysis, "u", 0, len(analysis.source.lines)):
        assert action.edit is not None and action.edit.changes is not None
        edits = action.edit.changes["u"]
        out[action.title] = _applied(analysis.source, edits)
    return out


def _applied(source: Source, edits: list[lsp.TextEdit]) -> str:
    def at(position: lsp.Position) -> int:
        return source.offset(*source.from_client(position))

    return apply(source.text, [Edit(at(e.range.start), at(e.range.end), e.new_text) for e in edits])


def rules(analysis: Analysis, text: str) -> set[str]:
    return {d.rule for d in analysis.recheck(text) if d.severity is not Severity.NOTE}


def test_a_buffer_is_checked_once_for_its_diagnostics_document_and_config(monkeypatch):
    import trainspec.engine.runner

    checks = []
    real = trainspec.engine.runner.check_path
    monkeypatch.setattr(trainspec.engine.runner, "check_path", lambda *a, **k: checks.append(a) or real(*a, **k))
    analysis = Analysis("job.toml", "[model]\ndim = 4100\n", Settings(world_sizes=(8,)), "utf-16")
    assert analysis.resolved is analysis.checked and len(checks) == 1
    assert analysis.resolved.config is not None and analysis.resolved.config["model"]["dim"] == 4100
    assert analysis.resolved.document is not None and analysis.resolved.world_size == 8
    assert {d.rule for d in analysis.reported} == {d.rule for d in analysis.resolved.diagnostics}


def test_a_yaml_key_moves_into_its_section_or_a_new_one():
    base = "model:\n  target_model_path: Qwen/Qwen3-8B\n"
    existing = Analysis(
        "run.yaml",
        base + "data:\n  max_length: 2048\ntraining:\n  num_epochs: 2\n  train_data_path: train.jsonl\n",
        Settings(),
        "utf-16",
    )
    moved = fixes(existing)["Move `training.train_data_path` to `data.train_data_path`"]
    assert moved == base + ("data:\n  train_data_path: train.jsonl\n  max_length: 2048\ntraining:\n  num_epochs: 2\n")
    assert "unknown-key" not in rules(existing, moved)

    missing = Analysis(
        "run.yaml", base + "training:\n  train_data_path: train.jsonl\n", Settings(family="specforge"), "utf-16"
    )
    created = fixes(missing)["Move `training.train_data_path` to `data.train_data_path`"]
    assert created == base + "training:\ndata:\n  train_data_path: train.jsonl\n"


def test_a_toml_key_moves_to_a_table_the_file_lacks():
    analysis = Analysis("job.toml", "[train]\nseq_len = 2048\nlr = 3e-4\n", Settings(family="kempnerforge"), "utf-16")
    moved = fixes(analysis)["Move `train.lr` to `optimizer.lr`"]
    assert moved == "[train]\nseq_len = 2048\n\n[optimizer]\nlr = 3e-4\n"


def test_a_fix_that_would_break_the_buffer_is_not_offered():
    # the suggested key is already set in its section: moving it there would duplicate it
    text = "[train]\nlr = 3e-4\n\n[optimizer]\nlr = 1e-3\n"
    titles = fixes(Analysis("job.toml", text, Settings(), "utf-16"))
    assert not any(t.startswith("Move") for t in titles)
    assert "Suppress `unknown-key` on this line" in titles


def test_a_width_is_set_to_the_nearest_value_that_passes():
    analysis = Analysis("job.toml", "[model]\ndim = 4100\nn_heads = 32\nn_kv_heads = 8\n", Settings(), "utf-16")
    offered = fixes(analysis)
    assert "Set model.dim = 4096" in offered and "Set model.dim = 4128" in offered
    assert not any(t.startswith("Set model.n_heads") for t in offered)  # 4100 / 41 breaks the kv heads
    assert rules(analysis, offered["Set model.dim = 4096"]) == set()


def test_a_world_size_product_is_repaired_by_one_degree():
    text = "[distributed]\ntp = 2\ndp_shard = 3\n"
    analysis = Analysis("job.toml", text, Settings(world_sizes=(8,)), "utf-16")
    offered = fixes(analysis)
    assert "Set distributed.dp_shard = 4" in offered and "Set distributed.dp_shard = -1" in offered
    assert "world-size-product" not in rules(analysis, offered["Set distributed.dp_shard = 4"])


def test_candidates_are_divisors_and_multiples_nearest_first():
    assert _candidates(3, [32], None)[:5] == [2, 4, 1, -1, 8]
    assert 4 in _candidates(5, [2, 1], 8)[:2]  # 8 / (2·1) = 4


def test_a_suppression_joins_an_existing_comment():
    text = "[distributed]\ntp = 3  # trainspec: ignore[fp8-no-tp]\n\n[model]\nn_heads = 32\n"
    offered = fixes(Analysis("job.toml", text, Settings(), "utf-16"))
    assert (
        "tp = 3  # trainspec: ignore[fp8-no-tp, tp-divides-heads]"
        in offered["Suppress `tp-divides-heads` on this line"]
    )


def test_json_has_no_suppression_comments_but_renames_keys():
    text = '{"model": {"target_model_path": "m"}, "data": {"train_data_path": "t"}, "training": {"num_epoch": 2}}'
    offered = fixes(Analysis("run.json", text, Settings(), "utf-16"))
    assert offered == {"Rename `num_epoch` to `num_epochs`": text.replace("num_epoch", "num_epochs")}


def test_rules_only_drops_what_the_schema_servers_report():
    text = "[train]\nseq_lenn = 1\n\n[distributed]\ntp = 3\n"
    everything = {d.rule for d in Analysis("job.toml", text, Settings(), "utf-16").diagnostics}
    rules_only = {d.rule for d in Analysis("job.toml", text, Settings(rules_only=True), "utf-16").diagnostics}
    assert {"unknown-key", "tp-divides-heads"} <= everything
    assert "tp-divides-heads" in rules_only and "unknown-key" not in rules_only


def test_hover_over_nothing_says_nothing():
    analysis = Analysis("job.toml", "# a comment\n\n[train]\nseq_len = 2048\n", Settings(), "utf-16")
    assert hover(analysis, 1, 0) is None
    assert hover(analysis, 3, 0) is not None


@pytest.mark.parametrize(
    ("text", "before", "expected"),
    [
        ("a:\n  b:\n    - c: 1\n      ", "      ", ("key", ("a", "b", 0), "")),
        ("a:\n  b:\n    - c: 1\n    - d", "    - d", ("key", ("a", "b", 0), "d")),
        ("a:\n  b:\n    - c:\n        ", "        ", ("key", ("a", "b", 0, "c"), "")),
        ("a:\n  # note\n\n  b: x", "  b: x", ("value", ("a", "b"), "x")),
        ("a: 1\nb", "b", ("key", (), "b")),
    ],
)
def test_yaml_completion_finds_where_the_cursor_is(text, before, expected):
    from trainspec.read import yaml

    source = Source(text)
    assert yaml.place(source.lines, len(source.lines) - 1, len(before)) == expected


def test_completion_in_a_union_branch_follows_the_config():
    family = get_family("specforge")
    text = "deployment:\n  mode: disaggregated\n  disaggregated:\n    backend: \n"
    items = complete(family, Source(text), "yaml", 3, 13, None)
    assert "mooncake" in [i.label for i in items]


def test_yaml_values_a_loader_reads_otherwise_are_quoted():
    from trainspec.editor.lsp.completion import _literal

    assert _literal("on", "yaml") == '"on"'  # a boolean to a YAML 1.1 loader
    assert _literal("1e-4", "yaml") == '"1e-4"'  # a number to YAML 1.2
    assert _literal("sdpa", "yaml") == "sdpa"
    assert _literal("sdpa", "toml") == '"sdpa"'


def imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_pygls_is_imported_by_the_server_only_and_the_server_by_the_command_only():
    modules = {p.relative_to(SRC).as_posix(): p for p in SRC.rglob("*.py")}
    assert [m for m, p in modules.items() if "pygls" in imports(p)] == ["editor/lsp/server.py"]
    assert all(m.startswith("editor/lsp/") for m, p in modules.items() if "lsprotocol" in imports(p))
    outside = {m: p for m, p in modules.items() if not m.startswith("editor/lsp/")}
    importers = [m for m, p in outside.items() if "trainspec.editor.lsp" in p.read_text()]
    assert importers == ["cli/lsp.py"]


EXTENSION = Path(__file__).resolve().parent.parent / "editors" / "vscode"


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("family", "specforge"),
        ("worldSize", [8]),
        ("set", ["train.seq_len=4096"]),
        ("select", ["tp-"]),
        ("ignore", ["unknown-key"]),
        ("rulesOnly", True),
        ("debounceMs", 10),
        ("inlayHints", True),
    ],
)
def test_every_setting_the_vscode_extension_offers_is_read_by_the_server(name, value):
    offered = json.loads((EXTENSION / "package.json").read_text())["contributes"]["configuration"]["properties"]
    assert f"trainspec.{name}" in offered
    assert Settings.from_client({"trainspec": {name: value}}) != Settings()


def test_the_vscode_extension_offers_no_setting_the_server_ignores():
    offered = json.loads((EXTENSION / "package.json").read_text())["contributes"]["configuration"]["properties"]
    read = {"family", "worldSize", "set", "select", "ignore", "rulesOnly", "debounceMs", "inlayHints"}
    assert {name.removeprefix("trainspec.") for name in offered} == read | {"path"}  # path: the client's own


@pytest.mark.parametrize(
    ("before", "expected"),
    [
        ("{", ("key", (), "")),
        ('{"training": {"nu', ("key", ("training",), '"nu')),
        ('{"training": {"attention_backend": "fl', ("value", ("training", "attention_backend"), '"fl')),
        ('{"a": [{"b": 1}, {', ("key", ("a", 0), "")),
        ('{"a": {"b": [1, ', ("value", ("a", "b", 0), "")),
        ('{"a": 1 ', None),  # after a value: neither a key nor a value may start
    ],
)
def test_json_completion_finds_where_the_cursor_is(before, expected):
    from trainspec.read import json

    lines = before.split("\n")
    assert json.place(lines, len(lines) - 1, len(lines[-1])) == expected


def test_json_completion_inserts_json():
    family = get_family("specforge")
    text = '{"training": {"attention_backend": "fl'
    (item,) = [i for i in complete(family, Source(text), "json", 0, len(text), None) if "flex" in i.label]
    assert item.text_edit is not None and item.text_edit.new_text == '"flex_attention"'
    assert item.text_edit.range.start.character == text.index('"fl')
    keys = complete(family, Source('{"training": {"nu'), "json", 0, 17, None)
    assert '"num_epochs": ' in [k.text_edit.new_text for k in keys if k.text_edit is not None]


def test_a_place_past_the_end_of_the_text_is_its_end():
    source = Source("a = 1\nb = 2")
    assert source.position(7, 3) == lsp.Position(line=1, character=5)


def test_rules_only_fixes_are_proven_against_everything_check_reports():
    text = "[train]\nseq_lenn = 1\n\n[distributed]\ntp = 3\n\n[model]\nn_heads = 32\nn_kv_heads = 8\n"
    offered = fixes(Analysis("job.toml", text, Settings(rules_only=True), "utf-16"))
    assert "Set distributed.tp = 4" in offered  # the unknown key, not shown, is no new problem
    assert offered["Rename `seq_lenn` to `seq_len`"].startswith("[train]\nseq_len = 1\n")  # fixed, though not shown


async def _frames_of(data: bytes, limit: int) -> list[bytes | TooLarge]:
    with ThreadPoolExecutor(1) as pool:
        return [frame async for frame in frames(StreamReader(io.BytesIO(data), pool), limit)]


def test_frames_are_read_by_their_length_and_one_over_the_limit_is_skipped():
    stream = b"Content-Length: 2\r\n\r\n{}" + b"Content-Length: 50\r\n\r\n" + b"x" * 50 + b"Content-Length: 2\r\n\r\n[]"
    assert asyncio.run(_frames_of(stream, 10)) == [b"{}", TooLarge(50), b"[]"]
    assert asyncio.run(_frames_of(b"Content-Length: 10\r\n\r\n{}", 10)) == []  # cut off by the end of the stream


@pytest.mark.parametrize(
    "header",
    [b"\r\n", b"Content-Length: -1\r\n\r\n", b"Content-Length: 1e3\r\n\r\n", b"X" * 2000 + b"\r\n", b"a b: c\r\n\r\n"],
)
def test_a_header_that_cannot_be_read_is_a_framing_error(header):
    with pytest.raises(FramingError):
        asyncio.run(_frames_of(header + b"{}", 10))


@pytest.mark.parametrize(("value", "limit"), [(None, 64 * 2**20), ("", 64 * 2**20), (" 2048 ", 2048)])
def test_the_message_limit_comes_from_the_environment(monkeypatch, value, limit):
    if value is not None:
        monkeypatch.setenv(LSP_MESSAGE_BYTES.variable, value)
    assert LSP_MESSAGE_BYTES.value == limit


@pytest.mark.parametrize("value", ["0", "-1", "64M", "1.5"])
def test_an_unusable_message_limit_stops_the_server_with_a_reason(monkeypatch, capsys, value):
    """Vetted with every other limit before the server starts: a usage error naming the variable."""
    monkeypatch.setenv(LSP_MESSAGE_BYTES.variable, value)
    assert main(["lsp"]) == 2
    assert LSP_MESSAGE_BYTES.variable in capsys.readouterr().err
