"""The engine's ids live in one registry (`trainspec.spec.codes`); the rest of the code asks it.

An id written out as text elsewhere is a second place to change when it is
renamed and a place the flags do not reach, so the source is scanned for it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from trainspec.spec import codes
from trainspec.spec.diagnostics import Severity

ROOT = Path(__file__).resolve().parent.parent
REGISTRY_MODULE = ROOT / "src" / "trainspec" / "spec" / "codes.py"


def id_literals(source: str) -> list[tuple[int, str]]:
    """(line, id) of every string constant that is exactly an engine id.

    Only whole constants count: an id inside prose (a message, a docstring, a
    comment) names it for a reader, and no code compares or builds with it.
    """
    return [
        (node.lineno, node.value)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in codes.REGISTRY
    ]


def test_no_engine_id_is_written_outside_the_registry():
    found = [
        f"{path.relative_to(ROOT)}:{line}: {rule_id!r}; use the `codes` constant"
        for folder in ("src", "tools")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if path != REGISTRY_MODULE
        for line, rule_id in id_literals(path.read_text(encoding="utf-8"))
    ]
    assert found == []


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ('if d.rule == "syntax-error":\n    pass\n', [(1, "syntax-error")]),
        ('IDS = frozenset({"wrong-format", "unknown-family"})\n', [(1, "wrong-format"), (1, "unknown-family")]),
        ('EXAMPLES = {"unknown-key": None}\n', [(1, "unknown-key")]),
        ('message = f"{x}: see unknown-key"\n', []),
        ('"""Reported as `syntax-error`."""\n', []),
        ('rule = "family-own-rule"\n', []),
    ],
)
def test_the_scan_finds_an_id_written_as_text(source, found):
    assert id_literals(source) == found


def test_an_id_is_declared_once():
    with pytest.raises(ValueError, match="declared twice"):
        codes.Code("syntax-error", Severity.ERROR, codes.Category.READ, codes.Flag.NONE, "Again.")
    assert codes.REGISTRY["syntax-error"] is codes.SYNTAX_ERROR


def test_flags_answer_for_engine_ids_only():
    assert codes.has_flag(codes.UNKNOWN_FAMILY.id, codes.Flag.QUIET_IN_EDITORS)
    assert not codes.has_flag(codes.SYNTAX_ERROR.id, codes.Flag.QUIET_IN_EDITORS)
    assert codes.has_flag(codes.SYNTAX_ERROR.id, codes.Flag.FILE_NOT_CHECKED)
    assert not codes.has_flag("tp-divides-heads", codes.Flag.FILE_NOT_CHECKED)
