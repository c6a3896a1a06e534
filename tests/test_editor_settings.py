""".vscode/settings.json is the user's file: `editor init` edits it in place or refuses, and never half-writes.

Reproductions of the audit: `,` before `}` inside a string was stripped
(`"**/{a,}"` became `"**/{a}"`), comments were dropped, deep or odd settings
ended in an internal error after a schema file was written, and a second run
said "wrote" and rewrote a file that did not change.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from trainspec.cli import main
from trainspec.editor import jsonc

INIT = ["editor", "init", "--family", "specforge", "runs/*.yaml"]
REF = "./.trainspec/schemas/specforge.schema.json"


def init(root: Path, capsys) -> tuple[int, str, str]:
    code = main([*INIT, "--root", str(root)])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err and "internal error" not in err
    return code, out, err


def settings(root: Path, text: str | bytes) -> Path:
    path = root / ".vscode" / "settings.json"
    path.parent.mkdir()
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def test_strings_comments_and_layout_are_kept_byte_for_byte(tmp_path, capsys):
    original = (
        "{\n"
        "    // files I never want to see\n"
        '    "files.exclude": {"**/{a,}": true, "x,]": false}, /* trailing, */\n'
        '    "url": "http://x//y",\n'
        '    "yaml.schemas": {\n'
        '        "other.json": "a.yaml", // theirs\n'
        "    },\n"
        "}\n"
    )
    path = settings(tmp_path, original)
    assert init(tmp_path, capsys)[0] == 0
    text = path.read_text()
    for line in original.splitlines():
        assert line in text
    tree = jsonc.parse(text)
    assert tree is not None
    assert tree.value["files.exclude"] == {"**/{a,}": True, "x,]": False}
    assert tree.value["yaml.schemas"] == {"other.json": "a.yaml", REF: ["runs/*.yaml"]}


def test_a_file_of_comments_only_keeps_them(tmp_path, capsys):
    path = settings(tmp_path, "// settings for this repository\n")
    assert init(tmp_path, capsys)[0] == 0
    text = path.read_text()
    assert text.startswith("// settings for this repository\n{\n")
    tree = jsonc.parse(text)
    assert tree is not None and REF in tree.value["yaml.schemas"]


@pytest.mark.parametrize("newline, indent", [("\r\n", "\t"), ("\n", "  ")])
def test_line_endings_and_indentation_follow_the_file(tmp_path, capsys, newline, indent):
    path = settings(tmp_path, f'{{{newline}{indent}"editor.tabSize": 2{newline}}}{newline}')
    assert init(tmp_path, capsys)[0] == 0
    text = path.read_bytes().decode()
    assert text.count(newline) == len(text.splitlines())
    assert f'{newline}{indent}"yaml.schemas": {{{newline}{indent}{indent}"{REF}": [' in text


def test_a_second_run_says_unchanged_and_writes_nothing(tmp_path, capsys):
    path = settings(tmp_path, '{\n    "editor.tabSize": 2\n}\n')
    assert init(tmp_path, capsys)[0] == 0
    before = path.stat()
    code, out, _ = init(tmp_path, capsys)
    assert code == 0
    assert out == ".trainspec/schemas/specforge.schema.json unchanged\n.vscode/settings.json unchanged\n"
    after = path.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


@pytest.mark.parametrize(
    "text, message",
    [
        ("[" * 100_000, "nested deeper than 200 levels"),
        ('{"a": 1,,}', "line 1 column 9"),
        ('{"a": 1 /* never closed', "a comment that never ends"),
        (f'{{"yaml.schemas": {{"{REF}": 5}}}}', "is not a glob or a list of globs"),
        (f'{{"yaml.schemas": {{"{REF}": {{"a": 1}}}}}}', "is not a glob or a list of globs"),
        ('{"yaml.schemas": []}', "is not an object"),
        ("[1, 2]", "does not hold a JSON object"),
    ],
)
def test_settings_that_cannot_be_edited_are_refused_before_anything_is_written(tmp_path, capsys, text, message):
    path = settings(tmp_path, text)
    code, out, err = init(tmp_path, capsys)
    assert code == 2 and message in err and out == ""
    assert path.read_text() == text
    assert sorted(p.name for p in tmp_path.iterdir()) == [".vscode"]  # no schema file either


def _random_value(rng: random.Random, depth: int) -> object:
    kind = rng.choice(["scalar", "scalar", "list", "dict"] if depth < 4 else ["scalar"])
    if kind == "list":
        return [_random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    if kind == "dict":
        return {rng.choice(["a", "b,}", "c//", "d/*", "e]"]) + str(n): _random_value(rng, depth + 1) for n in range(3)}
    return rng.choice([1, -2.5, True, None, "s", "x,}", "// no", "/* no */", "\u00e9"])


def _with_comments(rng: random.Random, text: str) -> str:
    """`text` (JSON) with comments and trailing commas where JSONC allows them."""
    out = []
    in_string = escaped = False
    last = ""  # the last character of the JSON itself (not of a comment)
    for c in text:
        if in_string:
            escaped, in_string = (c == "\\" and not escaped), (c != '"' or escaped)
        elif c == '"':
            in_string = True
        elif c in "}]" and last not in "{[" and rng.random() < 0.3:
            out.append(",")
        elif c == "\n" and rng.random() < 0.3:
            out.append(" // note, }")
        out.append(c)
        last = c if in_string or not c.isspace() else last
        if c in ",{[" and not in_string and rng.random() < 0.3:
            out.append(" /* c, ] */ ")
    return "".join(out)


@pytest.mark.parametrize("seed", range(40))
def test_edits_keep_every_original_byte_and_give_the_new_value(seed):
    rng = random.Random(seed)
    old = {f"k{n}": _random_value(rng, 0) for n in range(rng.randrange(1, 5))}
    text = _with_comments(rng, json.dumps(old, indent=rng.choice([None, 2, 4, "\t"])))
    tree = jsonc.parse(text)
    assert tree is not None and tree.value == old
    new = json.loads(json.dumps(old))
    new["added"] = {"x": [1, {"y": "z,}"}]}
    for value in new.values():
        if isinstance(value, dict):
            value["more"] = ["g,]"]
        elif isinstance(value, list):
            value.append({"n": 1})
    out = jsonc.edited(text, tree, new)
    check = jsonc.parse(out)
    assert check is not None and check.value == new
    kept = iter(out)
    assert all(c in kept for c in text)  # the original is a subsequence of the result: nothing removed
