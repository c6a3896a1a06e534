"""An input format is its module and one line in `read.formats.FORMATS`: a format made here, in a module
no other part of trainspec knows, is checked, completed, fixed and rewritten; every real format's module
gives what the engine asks; and nothing outside `read/` branches on a format's name."""

from __future__ import annotations

import ast
import json
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from trainspec import Family, rule
from trainspec.cli import main
from trainspec.editor.lsp.actions import code_actions
from trainspec.editor.lsp.analysis import Analysis, Settings
from trainspec.editor.lsp.completion import complete
from trainspec.editor.lsp.text import Edit, Source, apply
from trainspec.engine.pipeline import check_path
from trainspec.families import register
from trainspec.spec import formats
from trainspec.spec.formats import BY_EXTENSION, FORMATS, InputFormat
from trainspec.write.rewrite import set_values

SRC = Path(__file__).resolve().parent.parent / "src" / "trainspec"

FLAT = '''
"""A flat format: one `dotted.key = JSON value` a line, `#` comments."""

import json

from trainspec.spec.codes import SYNTAX_ERROR
from trainspec.spec.document import Document, Pos, Span
from trainspec.read.files import file_error
from trainspec.spec.document import ReadError

CLOSING = ""
DIRECTIVE_ANYWHERE = False
EDITOR_SETTINGS = ()
LANGUAGE_SERVER = ""
LINE_REREAD = False


def parse(file, text):
    data, positions = {}, {}
    for n, line in enumerate(text.split("\\n"), 1):
        code = line.split("#")[0].rstrip()
        if not code:
            continue
        key, sep, raw = code.partition("=")
        try:
            value = json.loads(raw)
        except ValueError:
            raise ReadError(file_error(file, SYNTAX_ERROR.id, "expected `key = JSON value`", n, 1)) from None
        path = tuple(key.strip().split("."))
        start = len(key) - len(key.lstrip()) + 1
        node = data
        for depth, part in enumerate(path[:-1], 1):
            node = node.setdefault(part, {})
            positions.setdefault(path[:depth], Span(Pos(n, start), Pos(n, start)))
        node[path[-1]] = value
        last = start + len(key.strip()) - len(path[-1])  # the key's own part, after its tables
        value_at = len(key) + 2 + len(raw) - len(raw.lstrip())
        positions[path] = Span(Pos(n, last), Pos(n, value_at), Pos(n, last + len(path[-1])), Pos(n, len(code) + 1))
    return Document(file, "flat", text, data, lambda: positions)


def place(lines, line, column):
    before = lines[line].rstrip("\\r")[:column] if 0 <= line < len(lines) else ""
    key, sep, typed = before.partition("=")
    parts = key.strip().split(".")
    return ("value", tuple(parts), typed.strip()) if sep else ("key", tuple(parts[:-1]), parts[-1])


def key_text(name, *, table, section):
    return f"{name}." if section else f"{name} = "


def value_text(value):
    return json.dumps(value)


def value_lead(before):
    return " " if before.endswith("=") else ""


def entry(key, value):
    return f"{key} = {value}"


def insertion(text, positions, target, line):
    return len(text), "".join(f"{part}." for part in target[:-1]) + line + "\\n"


def string_text(value, replaced, styles):
    return json.dumps(value)


def shares_values(text):
    return False


def reread_line(doc, line, before, after, keys, values):
    return None


def set_values(doc, values):
    lines = doc.text.split("\\n")
    added = []
    for path, value in values.items():
        span = doc.positions.get(path)
        if span is None:
            added.append(f"{'.'.join(path)} = {json.dumps(value)}")
            continue
        n = span.value.line - 1
        lines[n] = lines[n][: span.value.column - 1] + json.dumps(value) + lines[n][span.value_end.column - 1 :]
    return "\\n".join(lines) + "".join(line + "\\n" for line in added)
'''

SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "model": {
            "type": "object",
            "additionalProperties": False,
            "default": {},
            "properties": {
                "width": {"type": "integer", "minimum": 1, "default": 64, "description": "Hidden width."},
                "heads": {"type": "integer", "minimum": 1, "default": 4, "description": "Attention heads."},
                "norm": {"enum": ["layer", "rms"], "default": "rms", "description": "Normalization."},
            },
        },
        "steps": {"type": "integer", "minimum": 1, "default": 10},
    },
}


@rule("heads-divide-width", "error", "model.width", "model.heads")
def heads_divide_width(width: int, heads: int) -> Iterator[str]:
    """Each head gets width / heads channels."""
    if width % heads:
        yield f"model.width = {width} is not divisible by model.heads = {heads}"


@pytest.fixture
def flat(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Family:
    """The flat format in the table (its one line), its module importable, and a family written in it."""
    module = types.ModuleType("flat_format")
    exec(compile(FLAT, "flat_format.py", "exec"), module.__dict__)
    monkeypatch.setitem(sys.modules, "flat_format", module)
    line = InputFormat("flat", (".flat",), "flat_format", "#", None, None, rewritable=False)
    monkeypatch.setitem(FORMATS, "flat", line)
    monkeypatch.setitem(BY_EXTENSION, ".flat", line)
    schema = tmp_path / "flatfamily.schema.json"
    schema.write_text(json.dumps(SCHEMA))
    family = Family(
        name="flatfamily",
        schema_file=schema,
        model="nowhere:Model",
        rules=[heads_divide_width],
        formats=frozenset({"flat"}),
    )
    register(family)  # gone after the test (conftest)
    return family


RUN = '# a run\nmodel.width = 96\nmodel.heads = 5\nmodel.nrom = "rms"\n'


def test_a_new_format_is_checked_at_its_lines(flat: Family, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    path = tmp_path / "run.flat"
    path.write_text(RUN)
    found = check_path(path, family=flat).diagnostics
    assert {(d.rule, d.line, d.column) for d in found if d.is_error} == {
        ("unknown-key", 4, 7),
        ("heads-divide-width", 2, 7),
    }
    path.write_text(RUN.replace("\nmodel.heads = 5\n", "\nmodel.heads = 5  # trainspec: ignore[heads-divide-width]\n"))
    assert main(["check", str(path), "--family", "flatfamily", "--isolated"]) == 1
    out = capsys.readouterr().out
    assert "run.flat:4:7: error[unknown-key]" in out and "heads-divide-width" not in out


def test_a_new_format_completes_keys_and_values(flat: Family):
    keys = complete(flat, Source("model.wi"), "flat", 0, 8, None)
    assert {k.label: k.text_edit.new_text for k in keys if k.text_edit is not None}["width"] == "width = "
    values = complete(flat, Source("model.norm ="), "flat", 0, 12, None)
    assert [v.text_edit.new_text for v in values if v.text_edit is not None] == [' "layer"', ' "rms"']


def test_a_new_format_gets_proven_quick_fixes(flat: Family):
    analysis = Analysis("run.flat", RUN, Settings(family="flatfamily"), "utf-16")
    offered = {}
    for action in code_actions(analysis, "u", 0, len(analysis.source.lines)):
        assert action.edit is not None and action.edit.changes is not None
        edits = [
            Edit(analysis.source.offset(*analysis.source.from_client(e.range.start)),
                 analysis.source.offset(*analysis.source.from_client(e.range.end)), e.new_text)
            for e in action.edit.changes["u"]
        ]  # fmt: skip
        offered[action.title] = apply(RUN, edits)
    assert offered["Rename `nrom` to `norm`"] == RUN.replace("nrom", "norm")
    assert offered["Set model.heads = 4"] == RUN.replace("heads = 5", "heads = 4")
    assert offered["Suppress `heads-divide-width` on this line"] == RUN.replace(
        "width = 96\n", "width = 96  # trainspec: ignore[heads-divide-width]\n"
    )


def test_a_new_format_is_rewritten_by_its_module(flat: Family):
    new = set_values("run.flat", RUN, {("model", "heads"): 8, ("steps",): 20})
    assert new == RUN.replace("heads = 5", "heads = 8") + "steps = 20\n"


def syntax_members() -> list[str]:
    """What `formats.Syntax` asks of a format's module, read from its definition."""
    tree = ast.parse((SRC / "spec" / "formats.py").read_text(encoding="utf-8"))
    (syntax,) = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == "Syntax"]
    return [
        n.name if isinstance(n, ast.FunctionDef) else n.target.id  # type: ignore[attr-defined]
        for n in syntax.body
        if isinstance(n, ast.FunctionDef | ast.AnnAssign)
    ]


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_every_format_module_gives_what_the_engine_asks(name: str):
    fmt = FORMATS[name]
    module = fmt.parser()
    asked = ["parse", *syntax_members(), *(["tree"] if fmt.rewritable else [])]
    assert len(asked) > 5 and [m for m in asked if not hasattr(module, m)] == []


FORMAT_NAMES = frozenset(FORMATS)
FORMAT_CONSTANTS = frozenset(name for name, value in vars(formats).items() if isinstance(value, InputFormat))
"""`TOML`, `YAML`, `JSON` (and `FALLBACK`): a comparison with one, or with its `.name`, is a branch too."""
OUTPUT_FORMATS = ("cli", "report")
"""Where `json` names an output format (`--format json`), not an input format."""


def _names_a_format(node: ast.AST, constants: bool = False) -> bool:
    """`node` is a format's name (or, with `constants`, one of the table's formats or its `.name`)."""
    if isinstance(node, ast.Constant):
        return node.value in FORMAT_NAMES
    if constants and isinstance(node, ast.Attribute) and node.attr == "name":
        return _names_a_format(node.value, constants)
    if constants and isinstance(node, ast.Name):
        return node.id in FORMAT_CONSTANTS
    return isinstance(node, ast.Tuple | ast.List | ast.Set) and any(_names_a_format(e, constants) for e in node.elts)


def format_branches(root: Path) -> list[str]:
    """Comparisons with a format or its name, lookups by one (`by_format["json"]`, `.get("yaml")`), outside
    `read/` (the formats themselves), `spec/formats.py` (their table) and `families/` (which declare the formats
    they are written in)."""
    found: list[tuple[str, int]] = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if relative == "spec/formats.py" or relative.startswith(
            ("read/", "families/", *(f"{p}/" for p in OUTPUT_FORMATS))
        ):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare):
                named = any(_names_a_format(side, constants=True) for side in [node.left, *node.comparators])
            elif isinstance(node, ast.Subscript):
                named = _names_a_format(node.slice)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
                named = bool(node.args) and _names_a_format(node.args[0])
            else:
                named = False
            if named:
                found.append((relative, getattr(node, "lineno", 0)))
    return [f"{file}:{line}" for file, line in sorted(found)]


def test_nothing_outside_read_branches_on_a_format_name():
    assert format_branches(SRC) == []


def test_a_branch_on_a_format_name_is_found(tmp_path: Path):
    (tmp_path / "engine").mkdir()
    (tmp_path / "engine" / "x.py").write_text(
        'a = doc.format == "toml"\nb = fmt in ("yaml", "yml")\nc = by_format["json"]\nd = by_format.get("json")\n'
        'e = doc.format == JSON.name or fmt is YAML\nf = model_dump(mode="json")\n'
    )
    assert format_branches(tmp_path) == [f"engine/x.py:{n}" for n in (1, 2, 3, 4, 5, 5)]
