"""A diagnostic keeps the finding's own text apart from what later stages add, and renders them once."""

from __future__ import annotations

from pathlib import Path

import trainspec
from trainspec.spec.diagnostics import Clause, Diagnostic, Join, Severity

DATA = Path(__file__).parent / "data" / "diagnostics"


def test_without_clauses_the_message_is_the_text():
    d = Diagnostic("job.toml", 1, 1, (), "r", Severity.ERROR, "m")
    assert d.clauses == () and d.message == "m"


def test_clauses_render_around_the_text():
    d = Diagnostic("job.toml", 1, 1, (), "r", Severity.ERROR, "m").adding(
        Clause("aside"), Clause("inner", Join.BEFORE), Clause("then", Join.AFTER)
    )
    d = d.adding(Clause("outer", Join.BEFORE), Clause("more"))
    assert d.text == "m"
    assert d.message == "outer: inner: m (aside); then (more)"
    assert d.to_dict()["message"] == d.message and d.message in d.one_line()


def test_a_size_is_a_clause_not_part_of_the_finding():
    found = [d for d in trainspec.check(DATA / "kf_several_world_sizes.toml", world_size=[8, 16]) if d.is_error]
    assert found
    for d in found:
        assert d.clauses[0] == Clause(f"at world size {d.world_size}", Join.BEFORE)
        assert "at world size" not in d.text and d.message == f"at world size {d.world_size}: {d.text}"
