"""Output formats for CI: GitHub annotations, SARIF, JUnit, and the text excerpt on terminals."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path

import pytest
from jsonschema.validators import validator_for

from trainspec.cli import main
from trainspec.engine.runner import Options, check_file
from trainspec.report.github import escape_data, escape_property, format_command
from trainspec.report.reporters import get_reporter
from trainspec.spec.diagnostics import Diagnostic, Severity
from trainspec.spec.result import Result

SARIF_SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"

BROKEN = "[model]\ndim = 4100\nn_heads = 32\nn_kv_heads = 8\nn_head = 3\n\n[optimizer]\neps = 0.0\n"
CLEAN = "[model]\ndim = 4096\n"
NOTE = (
    "world-size rules not checked (world-size-auto-shard-divisible, world-size-product, cp-mesh-smaller-than-world, "
    "pp-stage-fsdp-auto-shard): "
    "no world size known; pass --world-size N"
)


@pytest.fixture
def configs(tmp_path, monkeypatch):
    """A broken and a clean config in the working directory; the clean one's name needs escaping."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "job.toml").write_text(BROKEN)
    (tmp_path / "ok,1:2.toml").write_text(CLEAN)
    return ["job.toml", "ok,1:2.toml"]


def run(capsys, *args: str) -> tuple[int, str]:
    code = main(list(args))
    return code, capsys.readouterr().out


def test_github_annotations(capsys, configs):
    code, out = run(capsys, "check", "--format", "github", *configs)
    assert code == 1
    assert out == (
        "::error file=job.toml,line=2,endLine=2,col=1,endColumn=10,title=trainspec [model-heads-divide-dim]::"
        "model.dim = 4100 is not divisible by model.n_heads = 32 (head_dim would be 128.125)\n"
        "::error file=job.toml,line=5,endLine=5,col=1,endColumn=6,title=trainspec [unknown-key]::unknown key "
        "`n_head` in model; did you mean `n_heads`?\n"
        "::warning file=job.toml,line=8,endLine=8,col=1,endColumn=9,title=trainspec [value-domain]::"
        "optimizer.eps = 0.0 is not positive; "
        "KempnerForge accepts it but the run will misbehave\n"
        f"::notice file=job.toml,title=trainspec [world-size-unknown]::{NOTE}\n"
        f"::notice file=ok%2C1%3A2.toml,title=trainspec [world-size-unknown]::{NOTE}\n"
        "2 error(s), 1 warning(s) in 2 files; no world size, world-size rules not checked\n"
    )


def test_github_escaping():
    assert escape_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    d = Diagnostic(
        "x.toml", None, None, (), "override-syntax", Severity.ERROR, "bad: 50%\nof it", origin="override #1 (--set a)"
    )
    assert format_command(d) == (
        "::error file=x.toml,title=trainspec [override-syntax]::override #1 (--set a): bad: 50%25%0Aof it"
    )


def test_junit_report(capsys, configs):
    code, out = run(capsys, "check", "--format", "junit", *configs)
    assert code == 1
    assert (
        out
        == f"""<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="trainspec" tests="2" failures="1" errors="0">
  <testsuite name="trainspec" tests="2" failures="1" errors="0" skipped="0">
    <testcase classname="trainspec.kempnerforge" name="job.toml">
      <failure type="trainspec" message="2 errors">job.toml:2:1: error[model-heads-divide-dim] model.dim = 4100 \
is not divisible by model.n_heads = 32 (head_dim would be 128.125)
job.toml:5:1: error[unknown-key] unknown key `n_head` in model; did you mean `n_heads`?</failure>
      <system-out>job.toml:8:1: warning[value-domain] optimizer.eps = 0.0 is not positive; KempnerForge accepts \
it but the run will misbehave
job.toml: note[world-size-unknown] {NOTE}</system-out>
    </testcase>
    <testcase classname="trainspec.kempnerforge" name="ok,1:2.toml">
      <system-out>ok,1:2.toml: note[world-size-unknown] {NOTE}</system-out>
    </testcase>
  </testsuite>
</testsuites>
"""
    )


def test_junit_escapes_xml():
    d = Diagnostic("a<b>.toml", 1, 1, (), "syntax-error", Severity.ERROR, 'invalid "x" & <y>')
    out = io.StringIO()
    get_reporter("junit")([Result("a<b>.toml", None, [d])], out)
    assert 'name="a&lt;b&gt;.toml"' in out.getvalue()
    assert 'invalid "x" &amp; &lt;y&gt;</failure>' in out.getvalue()


def sarif_validator():
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    return validator_for(schema)(schema)


def test_sarif_validates_against_the_schema(capsys, configs):
    code, out = run(capsys, "check", "--format", "sarif", "--world-size", "8,12", *configs, "missing.toml")
    assert code == 2
    log = json.loads(out)
    errors = sorted(sarif_validator().iter_errors(log), key=lambda e: list(e.absolute_path))
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors]
    run_ = log["runs"][0]
    rules = run_["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [
        "model-heads-divide-dim",
        "unknown-key",
        "value-domain",
        "world-size-checked",
        "file-not-found",
    ]
    for r in rules:
        assert r["shortDescription"]["text"] and r["help"]["text"] and r["fullDescription"]["text"]
    assert "```toml" in rules[0]["help"]["markdown"]  # the example and its fix
    tags = {r["id"]: r["properties"]["tags"] for r in rules}
    assert tags["model-heads-divide-dim"] == ["trainspec", "kempnerforge"]
    assert tags["unknown-key"] == ["trainspec", "engine", "schema"]  # an engine id's stage of the check
    assert tags["file-not-found"] == ["trainspec", "engine", "read"]
    results = run_["results"]
    checked = [(r["ruleId"], r["level"]) for r in results if r["ruleId"] == "world-size-checked"]
    assert checked and all(level == "note" for _, level in checked)
    assert [(r["ruleId"], r["level"]) for r in results if r["ruleId"] != "world-size-checked"] == [
        ("model-heads-divide-dim", "error"),
        ("unknown-key", "error"),
        ("value-domain", "warning"),
        ("file-not-found", "error"),
    ]
    for r in results:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
    location = results[0]["locations"][0]["physicalLocation"]
    assert location == {
        "artifactLocation": {"uri": "job.toml", "uriBaseId": "SRCROOT"},
        "region": {"startLine": 2, "startColumn": 1, "endLine": 2, "endColumn": 11},  # `dim = 4100`
    }
    assert run_["originalUriBaseIds"]["SRCROOT"]["uri"] == Path.cwd().as_uri() + "/"
    related = results[0]["relatedLocations"][0]
    assert related["message"]["text"] == "model.n_heads: n_heads = 32"
    assert related["physicalLocation"]["region"] == {"startLine": 3, "startColumn": 1, "endLine": 3, "endColumn": 13}
    typo = next(r for r in results if r["ruleId"] == "unknown-key")
    assert typo["properties"] == {"suggestion": {"kind": "move", "to": "model.n_heads"}}
    assert typo["fixes"] == [
        {
            "description": {"text": "Rename `n_head` to `n_heads`"},
            "artifactChanges": [
                {
                    "artifactLocation": {"uri": "job.toml", "uriBaseId": "SRCROOT"},
                    "replacements": [
                        {
                            "deletedRegion": {"startLine": 5, "startColumn": 1, "endLine": 5, "endColumn": 7},
                            "insertedContent": {"text": "n_heads"},
                        }
                    ],
                }
            ],
        }
    ]
    assert "fixes" not in results[0] and "properties" not in results[0]  # a rule's error suggests nothing


SUGGESTING = '[model]\n"dimm" = 4096\n\n[train]\nmixed_precision = "bf17"\nmax_steps = "10"\n'


def test_json_and_sarif_carry_what_a_message_suggests(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "job.toml").write_text(SUGGESTING)
    code, out = run(capsys, "check", "--format", "json", "job.toml")
    assert code == 1
    suggested = {d["config_path"]: d["suggestion"] for d in json.loads(out)["diagnostics"]}
    assert suggested == {
        "model.dimm": {"kind": "move", "to": "model.dim"},
        "train.mixed_precision": {"kind": "set-value", "config_path": "train.mixed_precision", "value": "bf16"},
        "train.max_steps": {"kind": "set-value", "config_path": "train.max_steps", "value": 10},
        "": None,
    }
    code, out = run(capsys, "check", "--format", "sarif", "job.toml")
    log = json.loads(out)
    assert not list(sarif_validator().iter_errors(log))
    results = log["runs"][0]["results"]
    assert [r["properties"]["suggestion"] for r in results if "properties" in r] == [
        s for s in suggested.values() if s is not None
    ]
    (fixed,) = [r for r in results if "fixes" in r]  # a key renamed in place, written quoted as it was
    (change,) = fixed["fixes"][0]["artifactChanges"]
    assert change["replacements"][0]["insertedContent"] == {"text": '"dim"'}


def test_sarif_uris_are_relative_to_the_working_directory(capsys, configs, tmp_path):
    _code, out = run(capsys, "check", "--format", "sarif", str(tmp_path / "job.toml"))
    uri = json.loads(out)["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "job.toml"


def test_sarif_help_uri_follows_the_family_docs_url(monkeypatch):
    from trainspec.families import get_family
    from trainspec.report import sarif

    family = replace(get_family("kempnerforge"), docs_url="https://example.org/docs/reference/kempnerforge.md")
    monkeypatch.setattr(sarif, "_documentation_url", lambda: "")
    assert sarif.docs_page("kempnerforge", family) == "https://example.org/docs/reference/kempnerforge.md"
    assert sarif.docs_page("engine", family) == "https://example.org/docs/reference/engine.md"
    d = Diagnostic("job.toml", 2, 1, ("model", "dim"), "model-heads-divide-dim", Severity.ERROR, "m")
    log = sarif.build([Result("job.toml", family, [d])])
    assert sarif_validator().is_valid(log)
    rule = log["runs"][0]["tool"]["driver"]["rules"][0]
    assert rule["helpUri"] == "https://example.org/docs/reference/kempnerforge.md#model-heads-divide-dim"


def test_sarif_with_no_problems_is_valid(capsys, configs):
    code, out = run(capsys, "check", "--format", "sarif", "--world-size", "8", "ok,1:2.toml")
    log = json.loads(out)
    assert code == 0 and log["runs"][0]["results"] == []
    assert sarif_validator().is_valid(log)


def test_text_on_a_terminal_underlines_the_range_and_labels_related_keys(configs):
    out = io.StringIO()
    get_reporter("text", color="always")([check_file("job.toml", Options())], out)
    lines = out.getvalue().splitlines()
    assert "\033[1;31merror\033[0m" in lines[0]
    assert lines[1:7] == [
        "   |",
        " 2 | dim = 4100",
        "   | \033[1m^^^^^^^^^^\033[0m",
        " 3 | n_heads = 32",
        "   | \033[1m------------\033[0m n_heads = 32",
        "",
    ]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_caret_sits_under_the_column_tabs_included(monkeypatch, tmp_path):
    d = Diagnostic(str(tmp_path / "c.toml"), 2, 7, ("model", "dim"), "r", Severity.ERROR, "m")
    monkeypatch.setenv("NO_COLOR", "1")
    tty = Terminal()
    result = Result(d.file, None, [d], lines={2: "dim =\t4100"})
    get_reporter("text")([result], tty)
    assert tty.getvalue().splitlines()[1:4] == ["   |", " 2 | dim =\t4100", "   |      \t^"]
    plain = io.StringIO()
    get_reporter("text", color="never")([result], plain)  # colour off, excerpt kept (as rustc's --color never)
    assert plain.getvalue() == tty.getvalue()
    piped = io.StringIO()
    get_reporter("text")([result], piped)
    assert piped.getvalue().count("\n") == 2  # the problem and the summary, no excerpt


def test_no_color_keeps_excerpts_without_colour(monkeypatch, tmp_path):
    d = Diagnostic(str(tmp_path / "c.toml"), 2, 7, ("model", "dim"), "r", Severity.ERROR, "m")
    monkeypatch.setenv("NO_COLOR", "1")
    tty = Terminal()
    get_reporter("text")([Result(d.file, None, [d], lines={2: "dim = 4100"})], tty)
    assert "\033[" not in tty.getvalue()
    assert tty.getvalue().splitlines()[1:4] == ["   |", " 2 | dim = 4100", "   |       ^"]


def test_piped_text_stays_one_line_per_problem(capsys, configs):
    _code, out = run(capsys, "check", *configs)
    assert "\033[" not in out and " | " not in out
    assert out.splitlines()[0] == (
        "job.toml:2:1: error[model-heads-divide-dim] model.dim = 4100 is not divisible "
        "by model.n_heads = 32 (head_dim would be 128.125)"
    )
