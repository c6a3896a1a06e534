"""Keys, values and file names from a hostile config reach every output escaped for its medium.

A key holding a newline must not start a line of its own (GitHub reads a line
`::error file=...` as an annotation), an escape sequence must not reach the
terminal, JUnit must stay well-formed XML, and JSON must stay strict.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trainspec.cli import main
from trainspec.spec.escaping import json_text, terminal

from .conftest import ROOT

HOSTILE_KEYS = (
    r"a\n::error file=/etc/passwd,line=1::pwned",  # a workflow command on a line of its own
    r"b\u001b]0;title\u0007x",  # OSC: sets the terminal's title
    r"c\u001b[2J\u0001\u007f\u0085",  # clears the screen; C0, DEL, C1
    r"d\u202e\u2028e",  # right-to-left override, line separator
)


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    path = tmp_path / "hostile.toml"
    keys = "".join(f'"{key}" = {n}\n' for n, key in enumerate(HOSTILE_KEYS))
    path.write_text(f"# trainspec: family=kempnerforge\n[model]\n{keys}")
    return path


def run(capsys, *args: str) -> str:
    main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return out


def assert_safe_lines(out: str, commands: int = 0) -> None:
    """No raw control character but newline and tab, and only `commands` lines a workflow runner would obey."""
    assert not [c for c in out if c not in "\n\t" and terminal(c) != c]
    assert sum(line.lstrip().startswith("::") for line in out.splitlines()) == commands


@pytest.mark.parametrize("options", [(), ("--color", "never"), ("--color", "always")])
def test_text_output_escapes_keys_in_messages_and_excerpts(capsys, hostile, options):
    out = run(capsys, "check", str(hostile), *options)
    assert_safe_lines(out.replace("\033[", "<CSI>") if "always" in options else out)
    assert r"unknown key `a\n::error file=/etc/passwd,line=1::pwned`" in out
    assert r"`b\x1b]0;title\x07x`" in out


def test_an_excerpt_underlines_an_escaped_key_over_its_whole_width(capsys, tmp_path):
    path = tmp_path / "c.json"  # JSON strings may hold DEL, C1 and bidirectional controls raw
    path.write_text('{\n"x\u202ey\x7f": 1}\n')
    out = run(capsys, "check", str(path), "--family", "specforge", "--color", "never")
    lines = out.splitlines()
    first = lines.index(next(line for line in lines if line.startswith(" 2 |")))  # the unknown key's excerpt
    source, under = lines[first : first + 2]
    assert source == r' 2 | "x\u202ey\x7f": 1}'
    assert under == "   | " + "^" * len(r'"x\u202ey\x7f"')


def test_github_output_has_one_workflow_command_per_diagnostic(capsys, hostile):
    out = run(capsys, "check", str(hostile), "--format", "github")
    assert_safe_lines(out, commands=len(HOSTILE_KEYS) + 1)  # and the world-size note
    assert "a%0A::error file=/etc/passwd,line=1::pwned" in out


def test_a_file_name_with_a_newline_is_escaped_in_the_summary(capsys, tmp_path):
    skipped = tmp_path / "x\n::error file=a::b.toml"
    skipped.write_text("unrelated = 1\n")
    out = run(capsys, "check", str(tmp_path), "--format", "github")
    assert_safe_lines(out)
    assert r"x\n::error file=a::b.toml" in out


def test_junit_is_well_formed_xml_whatever_the_keys(capsys, hostile):
    out = run(capsys, "check", str(hostile), "--format", "junit")
    failure = ET.fromstring(out.split("\n", 1)[1]).find(".//failure")
    assert failure is not None and r"`c\x1b[2J\x01\x7f\x85`" in (failure.text or "")


def test_show_json_writes_non_finite_numbers_as_strings(capsys, tmp_path):
    path = tmp_path / "nan.toml"
    text = (ROOT / "examples" / "tiny_kempnerforge.toml").read_text()
    path.write_text(text.replace("lr = 3e-3", "lr = nan").replace("weight_decay = 0.0", "weight_decay = -inf"))
    out = run(capsys, "show", str(path), "--format", "json")

    def refuse(token: str) -> None:
        raise AssertionError(f"bare {token} in JSON output")

    values = {v["path"]: v["value"] for v in json.loads(out, parse_constant=refuse)["values"]}
    assert (values["optimizer.lr"], values["optimizer.weight_decay"]) == ("NaN", "-Infinity")
    assert float(values["optimizer.lr"]) != float(values["optimizer.lr"])  # float() reads it back


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github", "junit"])
def test_a_lone_surrogate_in_a_json_key_is_written_by_every_format(tmp_path, fmt):
    path = tmp_path / "s.json"
    path.write_text('{"\\ud800": 1}')
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PYTHONIOENCODING": "utf-8"}
    done = subprocess.run(
        [sys.executable, "-m", "trainspec", "check", "--family", "specforge", "--format", fmt, str(path)],
        capture_output=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    assert b"\\ud800" in done.stdout


def test_escaping_is_idempotent_and_leaves_ordinary_text_alone():
    for text in ("plain `key` = 1.5, ünïcödé, 日本語\tand a tab", *HOSTILE_KEYS):
        decoded = text.encode().decode("unicode_escape") if "\\" in text else text
        once = terminal(decoded)
        assert terminal(once) == once
    assert terminal("plain `key`\tü") == "plain `key`\tü"
    assert json_text([float("inf"), {"a": (float("nan"),)}]) == '["Infinity", {"a": ["NaN"]}]'


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet=st.characters(codec=None, min_codepoint=0, max_codepoint=0x10FFFF)))
def test_plain_text_skips_the_patterns_and_nothing_else_does(text):
    """Printable ASCII comes back as it is without a pattern; any other text is escaped by the patterns:
    the two ways give the same text."""
    import re

    from trainspec.spec.escaping import INVISIBLE, escape

    assert terminal(text) == escape(text, f"[\x00-\x08\x0a-\x1f{INVISIBLE}\ud800-\udfff]")
    dumped = json.dumps(text)
    assert json_text(text) == re.sub(f"[{INVISIBLE}\ud800-\udfff]", lambda m: f"\\u{ord(m[0]):04x}", dumped)
