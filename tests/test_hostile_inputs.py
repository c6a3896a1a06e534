"""Input a stranger's pull request may hold: each case of the audit, bounded in time and memory.

CLI cases run `trainspec` in a subprocess with a timeout and an address-space limit
(RLIMIT_AS), so a regression fails here instead of hanging or swapping the machine.
docs/guarantees.md ("Untrusted input") lists the promises these hold.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from trainspec.engine.runner import Options, check_file
from trainspec.engine.sweeper import SweepError, sweep
from trainspec.read.globs import Glob
from trainspec.read.overlay import OverlayError, load_overlay
from trainspec.read.project import load_project

SRC = str(Path(__file__).resolve().parent.parent / "src")
MEMORY = 1 << 30
"""The address space each CLI case may use: a check needs about 150 MB."""
KF = "# trainspec: family=kempnerforge\n[distributed]\ndp_shard = 3\n"


def cli(*args: str, cwd: Path, timeout: float = 60, stdin: object = subprocess.DEVNULL, **env: str):
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))

    environ = {**os.environ, "PYTHONPATH": SRC, **env}
    return subprocess.run(
        [sys.executable, "-m", "trainspec", *args],
        cwd=cwd,
        env=environ,
        stdin=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=limit,
    )


# -- budgets ------------------------------------------------------------------------------------


@pytest.mark.external  # runs trainspec in a subprocess
def test_a_world_size_with_many_divisors_ends_the_nearest_layout_search_at_its_budget(tmp_path):
    (tmp_path / "kf.toml").write_text(KF)
    env = {"TRAINSPEC_MAX_LAYOUT_WORLD_SIZE": "1000000000"}
    done = cli("check", "kf.toml", "--world-size", "735134400", cwd=tmp_path, **env)
    assert done.returncode == 1, done.stderr
    assert "no nearest layout was searched" in done.stdout and "TRAINSPEC_MAX_LAYOUTS" in done.stdout


@pytest.mark.external  # runs trainspec in a subprocess
def test_plan_refuses_a_world_size_past_the_layout_limit(tmp_path):
    (tmp_path / "kf.toml").write_text(KF)
    done = cli("plan", "kf.toml", "--gpus", "735134400", cwd=tmp_path)
    assert done.returncode == 2
    assert "TRAINSPEC_MAX_LAYOUT_WORLD_SIZE" in done.stderr and "735,134,400" in done.stderr


@pytest.mark.external  # runs trainspec in a subprocess
def test_a_plan_over_a_wide_range_stops_at_the_layout_budget(tmp_path):
    (tmp_path / "kf.toml").write_text(KF)
    done = cli("plan", "kf.toml", "--gpus", "1..65536", cwd=tmp_path, TRAINSPEC_MAX_LAYOUTS="20000")
    assert done.returncode == 2
    assert "over the limit of 20,000 candidate layouts (set TRAINSPEC_MAX_LAYOUTS to raise it)" in done.stderr


def test_a_sweep_past_its_budget_is_refused_before_any_variant_runs(tmp_path):
    (tmp_path / "kf.toml").write_text(KF)
    values = ",".join(str(v) for v in range(1, 1001))
    start = time.monotonic()
    with pytest.raises(SweepError, match="TRAINSPEC_MAX_SWEEP") as caught:
        sweep(tmp_path / "kf.toml", [f"train.batch_size={values}", f"train.seq_len={values}"])
    assert "1,000,000 variants" in str(caught.value) and time.monotonic() - start < 5


@pytest.mark.external  # runs trainspec in a subprocess
def test_jobs_are_capped_at_the_cpus_and_the_run_says_so(tmp_path):
    (tmp_path / "kf.toml").write_text(KF)
    done = cli("check", "kf.toml", "--jobs", "4096", cwd=tmp_path)
    assert done.returncode == 0 and "--jobs 4096 is more than the" in done.stderr


@pytest.mark.external  # runs trainspec in a subprocess
def test_a_file_past_the_size_limit_is_refused_unread(tmp_path):
    (tmp_path / "big.yaml").write_text("a: 1\n" * 1000)
    done = cli("check", "big.yaml", cwd=tmp_path, TRAINSPEC_MAX_FILE_BYTES="1000")
    assert done.returncode == 2
    assert "over the limit of 1,000 bytes (set TRAINSPEC_MAX_FILE_BYTES to raise it)" in done.stdout


def test_a_file_of_many_problems_reports_the_first_and_counts_the_rest(tmp_path, monkeypatch):
    monkeypatch.setenv("TRAINSPEC_MAX_DIAGNOSTICS", "50")
    path = tmp_path / "many.toml"
    path.write_text(KF + "".join(f"unknown_{n} = 1\n" for n in range(300)))
    found = check_file(str(path), Options()).diagnostics
    assert len(found) == 51
    last = found[-1]
    assert last.rule == "diagnostics-truncated" and last.is_error
    assert "more diagnostics" in last.message and "TRAINSPEC_MAX_DIAGNOSTICS" in last.message


@pytest.mark.external  # runs trainspec in a subprocess
def test_a_long_dotted_key_is_refused_before_it_costs_gigabytes(tmp_path):
    (tmp_path / "deep.toml").write_text("# trainspec: family=kempnerforge\n" + ".".join(["a"] * 20000) + " = 1\n")
    done = cli("check", "deep.toml", cwd=tmp_path, timeout=30)
    assert done.returncode == 2
    assert "a dotted key of 20,000 parts" in done.stdout and "TRAINSPEC_MAX_KEY_PARTS" in done.stdout


@pytest.mark.external  # runs trainspec in a subprocess
def test_a_limit_set_to_nonsense_is_one_line(tmp_path):
    (tmp_path / "kf.toml").write_text(KF)
    for nonsense in ("lots", "\u00b2"):  # a superscript two is a digit to str.isdigit, not to int()
        done = cli("check", "kf.toml", cwd=tmp_path, TRAINSPEC_MAX_FILE_BYTES=nonsense)
        assert done.returncode == 2 and f"TRAINSPEC_MAX_FILE_BYTES={nonsense!r} must be a whole number" in done.stderr


# -- globs and walks ----------------------------------------------------------------------------


def test_repeated_globstars_match_in_linear_time():
    pattern = "**/" * 14 + "x"
    start = time.monotonic()
    assert not Glob(pattern).fullmatch("a/" * 200 + "y")
    assert Glob(pattern).fullmatch("a/" * 200 + "x")
    assert time.monotonic() - start < 1


def test_an_exclude_of_repeated_globstars_does_not_slow_a_check(tmp_path):
    (tmp_path / ".trainspec.toml").write_text('exclude = ["' + "**/" * 14 + 'nothing"]\n')
    deep = tmp_path.joinpath(*"abcdefghijklmnopqrstuvwxyz")
    deep.mkdir(parents=True)
    (deep / "kf.toml").write_text(KF)
    project = load_project(tmp_path / ".trainspec.toml")
    assert project is not None
    start = time.monotonic()
    assert not project.excluded(deep / "kf.toml")
    assert time.monotonic() - start < 1


@pytest.mark.external  # runs trainspec in a subprocess
def test_a_globstar_through_looping_links_ends_and_finds_each_file_once(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "kf.toml").write_text(KF)
    os.symlink(".", tmp_path / "d" / "x")
    os.symlink(".", tmp_path / "d" / "y")
    done = cli("check", "d/**/*.toml", cwd=tmp_path, timeout=30)
    assert done.returncode == 0, done.stderr
    assert "1 file checked" in done.stdout and "d/x" not in done.stdout and "d/y" not in done.stdout


@pytest.mark.external  # runs trainspec in a subprocess
def test_walks_and_globs_treat_a_linked_directory_alike(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "kf.toml").write_text(KF)
    (tmp_path / "top").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "top" / "linked")
    walked = cli("check", "top", cwd=tmp_path)
    globbed = cli("check", "top/**/*.toml", cwd=tmp_path)
    assert "linked" not in walked.stdout + walked.stderr and "linked" not in globbed.stdout + globbed.stderr
    assert walked.returncode == globbed.returncode == 2  # neither finds a config: nothing is followed


def test_a_folder_that_cannot_be_listed_is_reported_even_as_root(tmp_path, monkeypatch):
    from trainspec.engine.inputs import gather
    from trainspec.spec.formats import FORMATS, extensions

    (tmp_path / "configs" / "locked").mkdir(parents=True)
    (tmp_path / "configs" / "ok.toml").write_text(KF)
    real = os.scandir

    def refusing(path):
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied")
        return real(path)

    monkeypatch.setattr(os, "scandir", refusing)
    found = gather([str(tmp_path / "configs")], extensions(FORMATS), isolated=True)
    assert [r.diagnostics[0].rule for r in found.missing] == ["file-not-readable"]
    assert "Permission denied" in found.missing[0].diagnostics[0].message


# -- special files ------------------------------------------------------------------------------


@pytest.mark.external  # runs trainspec in a subprocess
def test_an_overlay_that_is_a_fifo_is_refused_at_once(tmp_path):
    (tmp_path / "kf.toml").write_text(KF)
    os.mkfifo(tmp_path / "overlay.json")
    done = cli("check", "kf.toml", "--overlay", "overlay.json", cwd=tmp_path, timeout=30)
    assert done.returncode == 2 and "not a regular file" in done.stderr


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
@pytest.mark.external  # runs trainspec in a subprocess
def test_dev_zero_is_refused_as_overlay_stdin_and_project_file(tmp_path):
    (tmp_path / "kf.toml").write_text(KF)
    os.symlink("/dev/zero", tmp_path / "zero.json")
    overlay = cli("check", "kf.toml", "--overlay", "zero.json", cwd=tmp_path, timeout=30)
    assert overlay.returncode == 2 and "not a regular file" in overlay.stderr
    with open("/dev/zero", "rb") as zero:
        piped = cli("check", "-", "--stdin-filename", "kf.toml", cwd=tmp_path, stdin=zero, timeout=30)
    assert piped.returncode == 2 and "standard input is a terminal or a device" in piped.stderr
    os.symlink("/dev/zero", tmp_path / ".trainspec.toml")
    project = cli("check", "kf.toml", cwd=tmp_path, timeout=30)
    assert project.returncode == 2 and "not a regular file" in project.stdout + project.stderr


@pytest.mark.external  # runs trainspec in a subprocess
def test_piped_input_past_the_size_limit_is_refused(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "trainspec", "check", "-", "--stdin-filename", "kf.toml"],
        input=KF + "# padding\n" * 200,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": SRC, "TRAINSPEC_MAX_FILE_BYTES": "100"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "TRAINSPEC_MAX_FILE_BYTES" in done.stderr


# -- no code from the repository ----------------------------------------------------------------


def test_an_overlay_cannot_make_trainspec_import_a_module_of_the_repository(tmp_path, monkeypatch):
    marker = tmp_path / "imported"
    (tmp_path / "evilmod.py").write_text(f"open({str(marker)!r}, 'w').close()\nX = object\n")
    (tmp_path / "overlay.json").write_text('{"family": "kempnerforge", "name": "evil", "model": "evilmod:X"}')
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(OverlayError, match="never imports a module an overlay names"):
        load_overlay(tmp_path / "overlay.json")
    assert not marker.exists() and "evilmod" not in sys.modules


def test_an_overlay_may_name_its_familys_own_model(tmp_path):
    from trainspec.families import get_family

    model = get_family("kempnerforge").model
    (tmp_path / "overlay.json").write_text(f'{{"family": "kempnerforge", "name": "own", "model": "{model}"}}')
    assert load_overlay(tmp_path / "overlay.json").model == model


# -- the same classes in process (the fast loop) ------------------------------------------------


def test_every_reader_refuses_a_fifo_without_waiting_for_a_writer(tmp_path):
    from trainspec.read.files import read_text
    from trainspec.read.project import ProjectError, find_project, forget_projects
    from trainspec.spec.document import ReadError

    os.mkfifo(tmp_path / "run.toml")
    os.mkfifo(tmp_path / "overlay.json")
    os.mkfifo(tmp_path / ".trainspec.toml")
    start = time.monotonic()
    with pytest.raises(ReadError, match="not a regular file"):
        read_text(str(tmp_path / "run.toml"))
    with pytest.raises(OverlayError, match="not a regular file"):
        load_overlay(tmp_path / "overlay.json")
    forget_projects()
    with pytest.raises(ProjectError, match="not a regular file"):
        find_project(tmp_path)
    forget_projects()
    assert time.monotonic() - start < 5


def test_the_plan_api_stops_at_the_layout_budget(tmp_path, monkeypatch):
    from trainspec.layouts.planner import PlanError, plan

    monkeypatch.setenv("TRAINSPEC_MAX_LAYOUTS", "5000")
    (tmp_path / "kf.toml").write_text(KF)
    start = time.monotonic()
    with pytest.raises(PlanError, match="TRAINSPEC_MAX_LAYOUTS"):
        plan(tmp_path / "kf.toml", range(1, 4097))
    assert time.monotonic() - start < 30


def test_a_nearest_layout_hint_past_the_budget_says_why_it_names_none(tmp_path, monkeypatch):
    monkeypatch.setenv("TRAINSPEC_MAX_LAYOUTS", "100")
    (tmp_path / "kf.toml").write_text(KF)
    found = check_file(str(tmp_path / "kf.toml"), Options(world_sizes=(735134400,)))
    product = next(d for d in found.diagnostics if d.rule == "world-size-product")
    assert "no nearest layout was searched" in product.message and "TRAINSPEC_MAX_LAYOUT_WORLD_SIZE" in product.message


def test_a_long_dotted_key_is_refused_in_process(tmp_path):
    from trainspec.read.files import read
    from trainspec.spec.document import ReadError

    (tmp_path / "deep.toml").write_text(".".join(["a"] * 20000) + " = 1\n")
    start = time.monotonic()
    with pytest.raises(ReadError, match="TRAINSPEC_MAX_KEY_PARTS"):
        read(str(tmp_path / "deep.toml"))
    assert time.monotonic() - start < 2


def test_a_globstar_glob_through_looping_links_ends_in_process(tmp_path):
    from trainspec.read.discovery import expand

    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "kf.toml").write_text(KF)
    os.symlink(".", tmp_path / "d" / "x")
    os.symlink(".", tmp_path / "d" / "y")
    files, unmatched, _ = expand([f"{tmp_path}/d/**/*.toml"], frozenset({".toml"}))
    assert files == [f"{tmp_path}/d/kf.toml"] and not unmatched


SPECFORGE = Path(__file__).resolve().parent / "corpus" / "specforge" / "gemma3-1b-eagle3-online.yaml"


@pytest.mark.parametrize("source", ["directive", "project", "topology"])
def test_every_source_of_a_world_size_is_held_to_the_layout_budget(tmp_path, monkeypatch, source):
    monkeypatch.setenv("TRAINSPEC_MAX_LAYOUT_WORLD_SIZE", "1000000000")
    if source == "topology":
        text = SPECFORGE.read_text().replace("training:", "training:\n  sp_ulysses_size: 23", 1)
        path = tmp_path / "run.yaml"
        path.write_text(text.replace("nnodes: 1\n", "nnodes: 91891800\n", 1))
    else:
        path = tmp_path / "kf.toml"
        directive = "# trainspec: family=kempnerforge world-size=735134400\n" if source == "directive" else ""
        path.write_text(directive + KF)
        if source == "project":
            (tmp_path / ".trainspec.toml").write_text('[[configs]]\npaths = ["*.toml"]\nworld-size = 735134400\n')
    start = time.monotonic()
    found = check_file(str(path), Options(use_project=True))
    assert time.monotonic() - start < 20
    hinted = [d for d in found.diagnostics if "no nearest layout was searched" in d.message]
    assert hinted and "TRAINSPEC_MAX_LAYOUTS" in hinted[0].message


def test_the_language_server_refuses_a_fifo_overlay_and_an_oversized_buffer(tmp_path, monkeypatch):
    from trainspec.editor.lsp.analysis import Analysis, Settings

    os.mkfifo(tmp_path / "overlay.json")
    (tmp_path / ".trainspec.toml").write_text('[[configs]]\npaths = ["*.toml"]\noverlay = "overlay.json"\n')
    start = time.monotonic()
    found = Analysis(str(tmp_path / "kf.toml"), KF, Settings(), "utf-16").diagnostics
    assert any(d.rule == "invalid-project-config" and "not a regular file" in d.message for d in found)
    monkeypatch.setenv("TRAINSPEC_MAX_FILE_BYTES", "1000")
    (tmp_path / ".trainspec.toml").write_text("")
    from trainspec.read.project import forget_projects

    forget_projects()
    big = Analysis(str(tmp_path / "kf.toml"), KF + "# padding\n" * 200, Settings(), "utf-16").diagnostics
    assert [d.rule for d in big] == ["file-not-readable"] and "TRAINSPEC_MAX_FILE_BYTES" in big[0].message
    assert time.monotonic() - start < 10
