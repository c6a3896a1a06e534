"""The language server while a file is edited, in process: the diagnostics it keeps while the buffer does
not parse (`carry.py`). `test_lsp_server.py` drives it through a real client."""

from __future__ import annotations

from trainspec.diagnostics import Diagnostic, Related, Severity
from trainspec.editor.lsp.analysis import Analysis, Settings
from trainspec.editor.lsp.carry import carried

KF_JOB = "[model]\ndim = 4096\nn_heads = 32\nn_kv_heads = 8\n\n[distributed]\ntp = 3\n\n[train]\nseq_lenn = 2048\n"


# -- the last good diagnostics -----------------------------------------------------------------------------


def diagnostic(line: int, *related: int, rule: str = "some-rule") -> Diagnostic:
    return Diagnostic(
        "f.toml",
        line,
        1,
        ("a",),
        rule,
        Severity.ERROR,
        "m",
        related=tuple(Related(("b",), r, 1) for r in related),
        end_line=line,
        end_column=3,
    )


def test_diagnostics_move_with_the_lines_added_above_them_and_leave_the_lines_changed():
    then = "a\nb\nc\nd\ne\n"
    found = [diagnostic(1), diagnostic(2, 5), diagnostic(4, 1, 3), diagnostic(5), diagnostic(2, rule="syntax-error")]
    now = "a\nb\nNEW\nc\nD\ne\n"  # a line typed after b, and d changed
    moved = carried(found, then, now)
    assert [(d.line, d.end_line, [r.line for r in d.related]) for d in moved] == [
        (1, 1, []),
        (2, 2, [6]),
        (6, 6, []),
    ]  # c and d are one changed stretch: the diagnostic on d is gone, so is the related place on c
    assert all(d.rule != "syntax-error" for d in moved)


def test_a_line_typed_at_the_end_of_another_leaves_that_one_alone():
    then = "a\nb\nc\n"
    moved = carried([diagnostic(2), diagnostic(3)], then, "a\nb\nnew\nc\n")
    assert [d.line for d in moved] == [2, 4]


def test_a_file_level_diagnostic_stays():
    d = Diagnostic("f.toml", None, None, (), "world-size-unknown", Severity.NOTE, "m")
    assert carried([d], "a\n", "b\n") == [d]


def test_the_last_good_diagnostics_are_kept_across_versions_that_do_not_parse():
    file = "/w/job.toml"
    good = Analysis(file, KF_JOB, Settings(), "utf-16")
    half = KF_JOB.replace("[train]\n", "[train]\nmax_st\n")
    broken = Analysis(file, half, Settings(), "utf-16", good)
    more = Analysis(file, half.replace("max_st", "max_ste"), Settings(), "utf-16", broken)
    for analysis in (broken, more):
        rules = {d.rule: d.line for d in analysis.diagnostics}
        assert rules["syntax-error"] == 10 and rules["tp-divides-heads"] == 7 and rules["unknown-key"] == 11
    settings_changed = Analysis(file, half, Settings(world_sizes=(8,)), "utf-16", good)
    assert {d.rule for d in settings_changed.diagnostics} == {"syntax-error"}  # other settings: nothing kept
    assert Analysis(file, half, Settings(), "utf-16").diagnostics == broken.reported  # and nothing before
