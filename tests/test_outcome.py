"""A file's outcome is decided where it is found (`Result.outcome`), and the runner skips files by it."""

from __future__ import annotations

import pytest

from trainspec.engine.pipeline import check_path
from trainspec.engine.runner import Options, check_file
from trainspec.spec.result import Outcome, exit_status

BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{n}: &{n} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
    for p, n in zip("abcde", "bcdef", strict=True)
)


@pytest.mark.parametrize(
    ("name", "text", "family", "outcome"),
    [
        ("ok.toml", "[model]\ndim = 4096\n", None, Outcome.CHECKED),
        ("bad.toml", "[model]\ndim = 'x'\n", "kempnerforge", Outcome.CHECKED),
        ("broken.toml", "[model\ndim = 4096\n", None, Outcome.SYNTAX),
        ("latin1.toml", b"x = '\xe9'\n", None, Outcome.SYNTAX),
        ("list.yaml", "- model\n- data\n", "specforge", Outcome.NOT_A_MAPPING),
        ("other.toml", "[tool]\nname = 'x'\n", None, Outcome.UNCLAIMED),
        ("ok.toml", "[model]\ndim = 4096\n", "no-such-family", Outcome.UNKNOWN_FAMILY),
        ("run.yaml", "model:\n  dim: 4096\n", "kempnerforge", Outcome.WRONG_FORMAT),
        (
            "directive.toml",
            "# trainspec: family=no-such-family\n[model]\ndim = 4096\n",
            None,
            Outcome.UNUSABLE_DIRECTIVE,
        ),
        ("bomb.yaml", BOMB, "specforge", Outcome.TOO_LARGE),
        ("dotted.toml", "a" + ".a" * 2000 + " = 1\n", None, Outcome.OVER_LIMIT),
    ],
)
def test_the_outcome_is_what_stopped_the_check(tmp_path, name, text, family, outcome):
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    result = check_path(path, family=family)
    assert result.outcome is outcome
    if outcome is not Outcome.CHECKED:
        assert result.reason == result.diagnostics[-1].message


def test_a_missing_file_is_unreadable(tmp_path):
    result = check_path(tmp_path / "missing.toml")
    assert result.outcome is Outcome.UNREADABLE
    assert result.reason == "no such file"


@pytest.mark.parametrize(
    ("name", "text", "options", "skipped"),
    [
        ("other.toml", "[tool]\nname = 'x'\n", {"expanded": True}, True),
        ("other.toml", "[tool]\nname = 'x'\n", {"skip_unknown": True}, True),
        ("other.toml", "[tool]\nname = 'x'\n", {}, False),
        ("broken.toml", "[model\n", {"skip_unknown": True}, True),
        ("broken.toml", "[model\n", {"skip_unknown": True, "family": "kempnerforge"}, False),
        ("broken.toml", "[model\n", {"expanded": True}, False),
        ("run.yaml", "model:\n  dim: 4096\n", {"expanded": True, "family": "kempnerforge"}, True),
        ("run.yaml", "model:\n  dim: 4096\n", {"family": "kempnerforge"}, False),
    ],
)
def test_the_runner_skips_by_outcome(tmp_path, name, text, options, skipped):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    expanded = frozenset({str(path)}) if options.pop("expanded", False) else frozenset()
    result = check_file(str(path), Options(expanded=expanded, **options))
    assert (result.outcome is Outcome.SKIPPED) is skipped
    assert bool(result.skipped) is skipped
    if skipped:
        assert result.diagnostics == []
        assert result.skipped.endswith(check_path(path, family=options.get("family")).reason)


@pytest.mark.parametrize(
    ("outcome", "ok", "status"),
    [
        (Outcome.CHECKED, True, 0),
        (Outcome.CHECKED, False, 1),
        (Outcome.SKIPPED, True, 0),
        (Outcome.SYNTAX, False, 1),
        (Outcome.SYNTAX, True, 1),  # --ignore hid why, but the file was not checked: it cannot pass
        (Outcome.UNUSABLE_DIRECTIVE, True, 1),
        (Outcome.TOO_LARGE, False, 1),
        (Outcome.OVER_LIMIT, False, 2),
        (Outcome.UNREADABLE, False, 2),
        (Outcome.UNCLAIMED, False, 2),
        (Outcome.UNUSABLE_SETTINGS, False, 2),
    ],
)
def test_the_exit_status_comes_from_the_outcome(outcome, ok, status):
    assert exit_status(outcome, ok) == status


@pytest.mark.parametrize(
    ("text", "outcome"),
    [(BOMB, Outcome.TOO_LARGE), ("model:\n  dim: !!python/int 4096\n", Outcome.CHECKED)],
)
def test_ignore_cannot_hide_unsupported_yaml(tmp_path, text, outcome):
    """Like the other ids of a file not checked (as written), `--ignore` leaves it: the file must not pass."""
    path = tmp_path / "run.yaml"
    path.write_text(text, encoding="utf-8")
    result = check_file(str(path), Options(family="specforge", ignore=("unsupported-yaml", "unsupported-*")))
    assert result.outcome is outcome
    assert "unsupported-yaml" in [d.rule for d in result.diagnostics]
    assert result.exit_status == 1


@pytest.mark.parametrize(("limit", "status"), [("100000", 1), ("10", 2)])
def test_migrate_exits_by_the_outcome_of_a_file_it_cannot_read(tmp_path, monkeypatch, capsys, limit, status):
    """A file that does not parse is the config's problem (1); one over the size limit is not read at all (2)."""
    from trainspec.cli import main

    monkeypatch.setenv("TRAINSPEC_MAX_FILE_BYTES", limit)
    path = tmp_path / "run.yaml"
    path.write_text("model: [a, b, c\n", encoding="utf-8")
    assert main(["migrate", str(path), "--family", "specforge"]) == status
    assert ("syntax-error" if status == 1 else "file-not-readable") in capsys.readouterr().err
