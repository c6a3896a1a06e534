"""World sizes as people give them: the command line's are the ones checked, and long lists are summarised."""

from __future__ import annotations

import io
import json

import pytest

from trainspec.cli import main
from trainspec.engine import progress
from trainspec.layouts.planner import PlanError, plan
from trainspec.spec.world_sizes import sizes_text

from .conftest import ROOT

EXAMPLE_7B = ROOT / "examples" / "kempnerforge_7b_12gpu.toml"


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_sizes_read_back_in_the_syntax_world_size_takes():
    assert sizes_text([12]) == "12"
    assert sizes_text([1, 2, 3, 5, 6, 9]) == "1..3, 5, 6, 9"
    assert sizes_text(list(range(4, 1025, 4))) == "every multiple of 4 from 4 to 1024 (256 sizes)"
    odd = [n for n in range(1, 200) if n % 4]
    text = sizes_text(odd)
    assert text.startswith("1..3, 5..7, ") and ", ..., " in text and text.endswith("197..199 (150 sizes)")


def test_a_long_range_is_one_finding_and_a_verdict_by_size(capsys):
    code, out, _ = run(capsys, "check", "--isolated", str(EXAMPLE_7B), "--world-size", "1..1024")
    lines = out.splitlines()
    assert code == 1 and len(lines) == 3, out
    assert "error[world-size-product] at 1,023 of the 1,024 world sizes (1..11, 13..1024), first at 1: " in lines[0]
    assert lines[1].endswith(
        "note[world-size-checked] world-size rules checked at 1,024 world sizes (1..1024): "
        "passes at 12; fails at 1..11, 13..1024"
    )
    assert lines[2] == "1 error(s), 0 warning(s) in 1 file; world sizes 1..1024"
    code, out, _ = run(capsys, "check", "--isolated", str(EXAMPLE_7B), "--world-size", "1..1024", "--format", "json")
    (finding,) = [d for d in json.loads(out)["diagnostics"] if d["severity"] == "error"]
    assert finding["world_sizes"] == [n for n in range(1, 1025) if n != 12]


def test_a_short_list_keeps_one_line_per_size(capsys):
    _, out, _ = run(capsys, "check", "--isolated", str(EXAMPLE_7B), "--world-size", "8,12")
    assert "error[world-size-product] at world size 8: " in out
    assert "note[world-size-checked] at world size 12: every world-size rule passes" in out


def test_a_sweep_at_many_sizes_knows_where_each_variant_passes(capsys):
    args = ["check", "--isolated", str(EXAMPLE_7B), "--world-size", "1..24", "--sweep", "distributed.tp=4"]
    _, out, _ = run(capsys, *args, "--format", "json")
    (variant,) = json.loads(out)["variants"]
    assert variant["passes_at_world_sizes"] == [12]


def test_plan_over_budget_says_how_far_it_got(monkeypatch):
    monkeypatch.setenv("TRAINSPEC_MAX_LAYOUTS", "2000")
    with pytest.raises(PlanError) as caught:
        plan(EXAMPLE_7B, tuple(range(1, 4097)))
    message = str(caught.value)
    assert "over the limit of 2,000 candidate layouts" in message
    assert "; planned world sizes 1.." in message and "of the 4,096 given before it ran out" in message


def test_plan_at_several_sizes_ends_with_a_verdict_by_size(capsys):
    code, out, _ = run(capsys, "plan", str(EXAMPLE_7B), "--gpus", "6..9")
    assert code == 0
    assert out.splitlines()[-1] == "4 world sizes planned: a layout passes at 6..9"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_long_plan_shows_progress_on_a_terminal(capsys, monkeypatch):
    monkeypatch.setattr(progress, "DELAY", 0.0)
    screen = Terminal()
    monkeypatch.setattr("sys.stderr", screen)
    assert main(["plan", str(EXAMPLE_7B), "--gpus", "6..9", "--format", "json"]) == 0
    assert "\rtrainspec: planned 1/4 world sizes" in screen.getvalue()
    assert screen.getvalue().endswith("\r\033[K")  # the line is taken off before the output is read
    monkeypatch.setattr("sys.stderr", io.StringIO())
    assert main(["plan", str(EXAMPLE_7B), "--gpus", "6..9", "--format", "json"]) == 0  # piped: nothing
