"""The language server's parse of an edited buffer (`editor/lsp/reparse.py`): re-reading the edited line
gives exactly what parsing the whole text gives (data, positions, problems, YAML 1.1 readings), and
everything it cannot vouch for is parsed whole."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from trainspec.editor.lsp.analysis import Analysis, Settings
from trainspec.editor.lsp.reparse import Parses
from trainspec.editor.lsp.text import changed
from trainspec.read.files import parse
from trainspec.spec.document import Document, ReadError

ROOT = Path(__file__).resolve().parent.parent

YAML = """\
# a config
base_model: org/model
betas: [0.9, 0.95]
flow: {a: 1, b: "two", c: [x, y]}
spread: [1,
  2, 3]
literal: |
  line one
  line two
quoted: "a \\" quote"
single: 'it''s'
plain_multi: this is
  continued here
empty:
nested:
  deeper:
    value: 3
    list:
      - a
      - b: 1
        c: 2
  octal: 017
  flag: yes
dup: 1
dup: 2
datasets:
  - path: x
    type: y
  - path: z   # a comment
    type: w
last: end
"""

TOML = """\
# a job
[model]
dim = 4096
name = 'literal'
betas = [0.9, 0.95]
multi = [
  1,
  2,
]
text = \"\"\"
two lines
\"\"\"
inline = { a = 1 }
dotted.key = 3
when = 1979-05-27

[[data.datasets]]
path = "/a"
weight = 1.5

[[data.datasets]]
path = "/b"
weight = 2.5
"""


def same(got: Document, whole: Document) -> None:
    assert got.text == whole.text
    assert repr(got.data) == repr(whole.data)
    assert dict(got.positions) == dict(whole.positions)
    assert list(got.positions) == list(whole.positions)
    assert got.problems == whole.problems
    assert got.yaml_1_1 == whole.yaml_1_1


def edited(text: str, line: int, old: str, new: str) -> str:
    lines = text.split("\n")
    assert old in lines[line], (lines[line], old)
    lines[line] = lines[line].replace(old, new, 1)
    return "\n".join(lines)


def reread(file: str, text: str, new: str) -> tuple[Document, bool]:
    """`new` parsed after `text`, and whether only the edited line was read."""
    parses = Parses()
    parses.parse(file, text)
    got = parses.parse(file, new)
    same(got, parse(file, new))
    return got, parses.reread == 1


@pytest.mark.parametrize(
    ("line", "old", "new"),
    [
        (1, "org/model", "org/model2"),  # a plain value
        (2, "0.95", "0.96"),  # an item of a flow list
        (2, "0.9,", "0.91,"),  # one that moves the items after it
        (3, '"two"', '"three"'),  # a quoted value inside a flow mapping
        (9, 'quote"', 'quotes"'),  # double-quoted
        (10, "it''s", "it''ll"),  # single-quoted
        (16, "3", "3.5"),  # a number, nested
        (21, "017", "018"),  # YAML 1.1 reads 017 as 15, 018 as the text
        (22, "yes", "no"),  # a YAML 1.1 boolean
        (26, "x", "xy"),  # a list item's first key
        (28, "z", "zz"),  # before a comment
        (28, "# a comment", "# another"),  # the comment only
        (0, "a config", "the config"),  # a comment line
        (13, "empty:", "empty: now"),  # a null given a value
        (30, "end", "en"),
    ],
)
def test_a_yaml_edit_of_one_line_rereads_that_line_alone(line, old, new):
    _, alone = reread("run.yaml", YAML, edited(YAML, line, old, new))
    assert alone


@pytest.mark.parametrize(
    ("line", "old", "new"),
    [
        (5, "2, 3]", "2, 4]"),  # inside a flow list over two lines
        (7, "line one", "line 1"),  # inside a block scalar
        (12, "continued", "continues"),  # a plain scalar's second line
        (1, "base_model", "base_models"),  # a key
        (23, "dup: 1", "dupe: 1"),  # a duplicate key goes
        (26, "- path: x", "-  path: x"),  # the entry moves within its item
        (27, "    type: y", "   type: y"),  # the indentation changes
        (1, "org/model", "org/model: x"),  # a value becomes a mapping
        (1, "org/model", "*alias"),  # an alias
        (1, "org/model", "!!str model"),  # a tag
        (30, "last: end", "---"),  # a document marker
    ],
)
def test_a_yaml_edit_the_line_alone_cannot_vouch_for_is_parsed_whole(line, old, new):
    new_text = edited(YAML, line, old, new)
    parses = Parses()
    parses.parse("run.yaml", YAML)
    try:
        whole = parse("run.yaml", new_text)
    except ReadError:
        with pytest.raises(ReadError):
            parses.parse("run.yaml", new_text)
    else:
        same(parses.parse("run.yaml", new_text), whole)
    assert parses.reread == 0


def test_a_yaml_document_with_anchors_is_always_parsed_whole():
    text = "base: &b\n  lr: 1\nother: *b\nname: x\n"
    new = text.replace("lr: 1", "lr: 2")
    parses = Parses()
    parses.parse("run.yaml", text)
    got = parses.parse("run.yaml", new)
    assert got.data["other"] == {"lr": 2} and parses.reread == 0


def test_adding_or_removing_a_line_is_parsed_whole():
    for new in (YAML.replace("last: end\n", "last: end\nmore: 1\n"), YAML.replace("empty:\n", "")):
        _, alone = reread("run.yaml", YAML, new)
        assert not alone


@pytest.mark.parametrize(
    ("line", "old", "new", "alone"),
    [
        (2, "4096", "4097", True),
        (3, "'literal'", "'literals'", True),  # a literal string
        (4, "0.95", "0.9", True),  # an array's item
        (18, "1.5", "1.7", True),  # in an array of tables
        (17, '"/a"', '"/aa"', True),
        (0, "a job", "the job", True),  # a comment
        (7, "2,", "3,", False),  # inside an array over several lines
        (10, "two lines", "2 lines", False),  # inside a multi-line string
        (12, "1", "2", False),  # an inline table
        (13, "3", "4", False),  # a dotted key
        (14, "1979", "1980", False),  # a date
        (1, "[model]", "[modal]", False),  # a table header
        (2, "dim", "dims", False),  # a key
    ],
)
def test_a_toml_edit_of_one_line(line, old, new, alone):
    _, reread_alone = reread("job.toml", TOML, edited(TOML, line, old, new))
    assert reread_alone is alone


def test_a_change_that_breaks_the_syntax_is_reported_as_a_whole_parse_reports_it():
    parses = Parses()
    parses.parse("job.toml", TOML)
    broken = edited(TOML, 2, "4096", "40 96")
    with pytest.raises(ReadError) as caught:
        parses.parse("job.toml", broken)
    with pytest.raises(ReadError) as whole:
        parse("job.toml", broken)
    assert caught.value.diagnostic == whole.value.diagnostic
    same(parses.parse("job.toml", TOML), parse("job.toml", TOML))  # parsed whole again after it


def test_each_check_gets_a_document_of_its_own():
    parses = Parses()
    first = parses.parse("run.yaml", YAML)
    first.data["nested"]["deeper"]["value"] = 99
    first.positions.pop(("base_model",))
    first.problems.clear()
    same(parses.parse("run.yaml", YAML), parse("run.yaml", YAML))


def _random_edit(text: str, rnd: random.Random, values_only: bool) -> str:
    """`text` with one character typed, deleted or replaced on one line (`values_only`: in a value)."""
    chars = "abz019 .-_'\"" if values_only else "abz019 :-=.'\"#[]{},&*!|>"
    lines = text.split("\n")
    candidates = [n for n, t in enumerate(lines) if ": " in t or " = " in t] if values_only else range(len(lines))
    n = rnd.choice(list(candidates))
    line = lines[n]
    sep = line.index(": ") + 2 if ": " in line else line.index(" = ") + 3 if " = " in line else 0
    at = rnd.randrange(sep if values_only else 0, len(line) + 1)
    roll = rnd.random()
    if roll < 0.45:
        line = line[:at] + rnd.choice(chars) + line[at:]
    elif roll < 0.8 and at < len(line):
        line = line[:at] + line[at + 1 :]
    else:
        line = line[:at] + rnd.choice(chars) + line[at + 1 :]
    lines[n] = line
    return "\n".join(lines)


@pytest.mark.parametrize("values_only", [True, False])
@pytest.mark.parametrize(
    ("file", "text"),
    [
        ("run.yaml", YAML),
        ("job.toml", TOML),
        ("run.yaml", (ROOT / "tests/corpus/specforge/qwen3-8b-domino-disaggregated.yaml").read_text()),
        ("job.toml", (ROOT / "examples/kempnerforge_7b_12gpu.toml").read_text()),
        ("run.yaml", (ROOT / "examples/axolotl_llama3_8b_lora.yaml").read_text()),
    ],
)
def test_random_edits_are_parsed_as_a_whole_parse_parses_them(file, text, values_only):
    """Typing at random, each version as the last one parsed left it: the same result as parsing it whole."""
    rnd = random.Random(f"{file}{len(text)}{values_only}")
    parses = Parses()
    parses.parse(file, text)
    good = text
    for _ in range(150):
        new = _random_edit(text, rnd, values_only)
        try:
            whole = parse(file, new)
        except ReadError as exc:
            with pytest.raises(ReadError) as caught:
                parses.parse(file, new)
            assert caught.value.diagnostic == exc.diagnostic
            text = new if rnd.random() < 0.5 else good  # typed on, or undone
            continue
        same(parses.parse(file, new), whole)
        text = good = new
    if values_only:
        assert parses.reread > 25


def datasets(entries: int) -> str:
    lines = ["base_model: org/model", "learning_rate: 0.0002", "adapter: lorax", "datasets:"]
    for n in range(entries):
        lines += [f"  - path: org/data-{n:04d}", "    type: chat_template"]
    return "\n".join([*lines, "micro_batch_size: 2", ""])


def test_a_long_list_edited_in_the_server_is_re_read_a_line_at_a_time_with_the_same_diagnostics():
    """Analyses chained as the server chains them: each edit of a 2,000-line config re-reads its line, and
    what is published is what a fresh check of the same text publishes."""
    text = datasets(1000)
    file = "/nonexistent/finetune.yaml"
    analysis = Analysis(file, text, Settings(), "utf-16")
    written = "org/data-0500"
    for typed in ["org/data-0500x", "org/data-050", "org/data-0500"]:
        text, written = text.replace(f"{written}\n", f"{typed}\n", 1), typed
        analysis = Analysis(file, text, Settings(), "utf-16", analysis)
        fresh = Analysis(file, text, Settings(), "utf-16")
        assert analysis.family is not None and "adapter-known" in {d.rule for d in analysis.diagnostics}
        assert _shown(analysis) == _shown(fresh)
        assert analysis.checked.config == fresh.checked.config
    assert analysis.parses.reread == 3


def _shown(analysis: Analysis) -> list[Any]:
    return [(d.rule, d.line, d.column, d.message) for d in analysis.diagnostics]


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("abc", "abc", (3, 3, 3)),
        ("abc", "abxc", (2, 2, 3)),
        ("abc", "ac", (1, 2, 1)),
        ("aaaa", "aaaaa", (4, 4, 5)),
        ("", "x", (0, 0, 1)),
        ("x\ny\nz", "x\nY\nz", (2, 3, 3)),
    ],
)
def test_changed_finds_the_one_stretch_that_differs(old, new, expected):
    assert changed(old, new) == expected
    start, old_end, new_end = expected
    assert old[:start] + new[start:new_end] + old[old_end:] == new
