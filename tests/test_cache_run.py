"""A whole run over unchanged files, answered from its record (`engine.cache_run`): the same output and exit
status as a check without the cache, nothing of the checking pipeline imported; anything the run depends on,
changed, is checked again; a record that cannot be trusted is a miss."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from trainspec.cli import main
from trainspec.engine import cache_run, cache_store, runner
from trainspec.spec.result import Result

from .conftest import CORPUS, ROOT

KEMPNERFORGE = sorted((CORPUS / "kempnerforge" / "train").glob("*.toml"))[:2]
SPECFORGE = sorted((CORPUS / "specforge").glob("*.yaml"))[:1]
FORMATS = ("text", "json", "github", "sarif", "junit")


@pytest.fixture
def configs(tmp_path, monkeypatch) -> list[str]:
    """Four configs in one folder (one with mistakes), changed long enough ago for their status to be trusted."""
    monkeypatch.setenv("TRAINSPEC_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "configs"
    folder.mkdir()
    for source in [*KEMPNERFORGE, *SPECFORGE]:
        (folder / source.name).write_text(source.read_text())
    (folder / "broken.toml").write_text((ROOT / "examples" / "broken_kempnerforge.toml").read_text())
    monkeypatch.setattr(cache_run, "SETTLED_NS", 0)  # every file counts as changed long ago
    return sorted(str(p) for p in folder.iterdir())


def check(capsys, *args: str) -> tuple[int, str]:
    code = main(["check", *args])
    out, _ = capsys.readouterr()
    return code, out


def records() -> list[Path]:
    return sorted((Path(os.environ["TRAINSPEC_CACHE_DIR"]) / f"v{cache_store.FORMAT}").glob("*.run"))


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_second_run_is_replayed_byte_for_byte(capsys, checked, configs, fmt):
    uncached = check(capsys, "--no-cache", "--format", fmt, *configs)
    first = check(capsys, "--format", fmt, *configs)
    assert len(records()) == 1
    checked.clear()
    assert check(capsys, "--format", fmt, *configs) == first == uncached
    assert first[0] == 1  # broken.toml has errors: the status is replayed too
    assert checked == []


def _modules_after(args: list[str], env: dict[str, str]) -> tuple[str, list[str]]:
    """(standard output, the trainspec modules imported) of `trainspec check ARGS` in a new interpreter."""
    code = (
        "import sys\nfrom trainspec.cli import main\nsys.argv = ['trainspec', *sys.argv[1:]]\nstatus = main()\n"
        "sys.stdout.flush()\nprint(sorted(m for m in sys.modules if m.startswith('trainspec')), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, "check", *args], env=env, capture_output=True, text=True, check=False
    )
    return done.stdout, json.loads(done.stderr.strip().splitlines()[-1].replace("'", '"'))


def test_a_replayed_run_imports_nothing_of_the_checking_pipeline(configs, tmp_path):
    env = {**os.environ, "TRAINSPEC_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT / "src")}
    args = ["--family", "kempnerforge", *configs[:2]]
    first, imported = _modules_after(args, env)
    assert "trainspec.engine.pipeline" in imported
    again, imported = _modules_after(args, env)  # files changed just now: each read and hashed, no more
    assert again == first
    assert not [m for m in imported if m.startswith(("trainspec.families", "trainspec.rules", "trainspec.validate"))]
    assert not [m for m in imported if m.startswith(("trainspec.engine.pipeline", "trainspec.engine.runner"))]
    assert "trainspec.spec.diagnostics" not in imported and "trainspec.report.reporters" not in imported


def test_a_changed_file_is_checked_again(capsys, checked, configs):
    check(capsys, *configs)
    broken = next(c for c in configs if c.endswith("broken.toml"))
    Path(broken).write_text(Path(configs[0]).read_text())
    checked.clear()
    assert check(capsys, *configs) == check(capsys, "--no-cache", *configs)
    assert checked[:1] == [broken]


def _coarse(monkeypatch) -> None:
    """A file system whose change time does not move and whose clock is coarse: a rewrite of the same size,
    its modification time put back, leaves the status exactly as it was."""
    real = os.lstat

    def lstat(path: str) -> types.SimpleNamespace:
        s = real(path)
        fields = ("st_dev", "st_ino", "st_mode", "st_size", "st_mtime_ns")
        return types.SimpleNamespace(**{f: getattr(s, f) for f in fields}, st_ctime_ns=s.st_mtime_ns)

    monkeypatch.setattr(cache_run, "_lstat", lstat)


def _rewrite_keeping_the_status(path: str, text: str) -> None:
    before = os.stat(path)
    assert len(text.encode()) == before.st_size
    Path(path).write_text(text)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def _same_size_edit(path: str) -> str:
    """The text of `path` with a key misspelt (an unknown key: a new error), the same number of bytes."""
    text = Path(path).read_text()
    edited = text.replace("\ndim = ", "\ndum = ", 1)
    assert edited != text and len(edited) == len(text)
    return edited


def test_a_same_size_rewrite_keeping_the_modification_time_is_caught_by_the_change_time(capsys, checked, configs):
    first = check(capsys, *configs)
    _rewrite_keeping_the_status(configs[0], _same_size_edit(configs[0]))
    checked.clear()
    again = check(capsys, *configs)
    assert again == check(capsys, "--no-cache", *configs) != first
    assert checked[:1] == [configs[0]]


def test_a_rewrite_soon_after_a_file_changed_is_caught_even_when_the_status_stays(
    capsys, checked, configs, monkeypatch
):
    monkeypatch.setattr(cache_run, "SETTLED_NS", 3600 * 10**9)  # every file changed "just now"
    _coarse(monkeypatch)
    first = check(capsys, *configs)
    _rewrite_keeping_the_status(configs[0], _same_size_edit(configs[0]))
    checked.clear()
    assert check(capsys, *configs) == check(capsys, "--no-cache", *configs) != first
    assert checked[:1] == [configs[0]]


def test_a_status_trusted_alone_is_the_documented_limit(capsys, configs, monkeypatch):
    """docs/ci.md: a file rewritten with the same size, the same modification time and an unchanged change time
    (a clock coarser than SETTLED_NS, or a file system that keeps no change time) is not read again."""
    _coarse(monkeypatch)
    first = check(capsys, *configs)
    _rewrite_keeping_the_status(configs[0], _same_size_edit(configs[0]))
    assert check(capsys, *configs) == first  # replayed: what `--no-cache` (or TRAINSPEC_NO_CACHE=1) is for


def test_a_new_status_with_the_same_bytes_renews_the_record(capsys, checked, configs):
    first = check(capsys, *configs)
    (record,) = records()
    before = record.stat().st_ino
    for file in configs:
        os.utime(file, ns=(10**9, 10**9))  # a checkout or a restored cache: new times, the same bytes
    checked.clear()
    assert check(capsys, *configs) == first
    assert checked == []
    (renewed,) = records()
    assert renewed.stat().st_ino != before  # written again, with the new statuses
    assert check(capsys, *configs) == first


def test_a_project_configuration_appearing_is_a_miss(capsys, checked, configs):
    check(capsys, *configs)
    folder = Path(configs[0]).parent
    (folder / ".trainspec.toml").write_text('ignore = ["KF"]\n')
    checked.clear()
    assert check(capsys, *configs) == check(capsys, "--no-cache", *configs)
    assert checked


@pytest.mark.parametrize("variable", ["NO_COLOR", "TRAINSPEC_MAX_FILE_BYTES"])
def test_the_environment_is_in_the_key(capsys, checked, configs, monkeypatch, variable):
    check(capsys, *configs)
    monkeypatch.setenv(variable, "1000000")
    checked.clear()
    check(capsys, *configs)
    assert len(records()) == 2


def test_the_command_line_is_in_the_key(capsys, checked, configs):
    check(capsys, *configs)
    check(capsys, "--warnings-as-errors", *configs)
    check(capsys, *reversed(configs))
    assert len(records()) == 3


@pytest.mark.parametrize(
    "spoil",
    [
        lambda record: record.write_bytes(record.read_bytes()[: record.stat().st_size // 2]),
        lambda record: record.write_bytes(record.read_bytes()[:-1] + b"!"),
        lambda record: record.write_bytes(b"\x80 not json\n"),
        lambda record: record.write_bytes(record.read_bytes().replace(b'"status":1', b'"status":"1"', 1)),
        lambda record: record.write_bytes(record.read_bytes().replace(b'"key":"', b'"key":"0', 1)),
        lambda record: record.write_bytes(record.read_bytes().replace(b'"files":[[', b'"files":[[1,', 1)),
        lambda record: (record.rename(record.with_name("elsewhere")), record.symlink_to(record.with_name("elsewhere"))),
    ],
)
def test_a_record_that_cannot_be_used_is_a_miss(capsys, configs, spoil):
    first = check(capsys, *configs)
    (record,) = records()
    spoil(record)
    assert check(capsys, *configs) == first


def test_a_forged_output_is_not_replayed_for_other_files(capsys, configs):
    """A record answers only for the statuses and hashes it holds: one made for other bytes is a miss."""
    first = check(capsys, *configs)
    (record,) = records()
    head, _, _ = record.read_bytes().partition(b"\n")
    forged = json.loads(head)
    forged["output"] = cache_run._digest(b"all clear\n")
    record.write_bytes(json.dumps(forged).encode() + b"\nall clear\n")
    assert check(capsys, *configs) == (1, "all clear\n")  # the store is the user's own folder: trusted
    Path(configs[0]).write_text(Path(configs[0]).read_text() + "\n")
    assert check(capsys, *configs) == first


def test_runs_that_are_never_recorded(capsys, configs, tmp_path, monkeypatch):
    folder = Path(configs[0]).parent
    monkeypatch.chdir(folder)
    check(capsys, "*.toml")  # a glob: what it matches can change without any file or folder recorded changing
    link = tmp_path / "link.toml"
    link.symlink_to(configs[0])
    check(capsys, str(link))
    check(capsys, "--sweep", "training.lr=1e-4,3e-4", configs[0])
    (folder / "sub").mkdir()
    (folder / "sub" / "link.toml").symlink_to(configs[0])
    check(capsys, str(folder))  # a walk that meets a symbolic link to a config
    assert records() == []


@pytest.fixture
def tree(configs) -> Path:
    """The configs' folder with a subfolder holding one more config."""
    folder = Path(configs[0]).parent
    (folder / "sub").mkdir()
    (folder / "sub" / "more.toml").write_text(Path(configs[0]).read_text())
    return folder


def test_a_folder_run_is_replayed_byte_for_byte(capsys, checked, tree):
    uncached = check(capsys, "--no-cache", str(tree))
    assert check(capsys, str(tree)) == uncached and len(records()) == 1
    checked.clear()
    assert check(capsys, str(tree)) == uncached
    assert checked == []


@pytest.mark.parametrize(
    "change",
    [
        lambda tree: (tree / "sub" / "new.toml").write_text((tree / "broken.toml").read_text()),
        lambda tree: (tree / "sub" / "more.toml").unlink(),
        lambda tree: (tree / "sub" / "more.toml").rename(tree / "sub" / "more.yaml"),
        lambda tree: (tree / "deeper").mkdir() or (tree / "deeper" / "x.toml").write_text("[model]\ndim = 8\n"),
        lambda tree: (tree / "sub" / "more.toml").write_text("[model]\ndim = 7\n"),
        lambda tree: (tree / ".trainspec.toml").write_text('exclude = ["sub/more.toml"]\n'),
    ],
    ids=["file-added", "file-removed", "file-renamed", "folder-added", "file-changed", "project-added"],
)
def test_a_changed_folder_is_checked_again(capsys, tree, change):
    from trainspec.read.project import forget_projects

    first = check(capsys, str(tree))
    change(tree)
    forget_projects()  # as a new process would (this one remembers the folder had none)
    again = check(capsys, str(tree))
    assert again != first  # not replayed
    assert again == check(capsys, "--no-cache", str(tree))


def test_a_folder_whose_status_changed_but_not_its_entries_is_still_a_hit(capsys, checked, tree, monkeypatch):
    first = check(capsys, str(tree))
    (tree / "sub" / "notes.tmp").write_text("")
    (tree / "sub" / "notes.tmp").unlink()  # the folder's times moved; its entries are as they were
    checked.clear()
    assert check(capsys, str(tree)) == first
    assert checked == []
    read: list[str] = []
    listed = cache_run._listing
    monkeypatch.setattr(cache_run, "_listing", lambda folder: read.append(folder) or listed(folder))
    assert check(capsys, str(tree)) == first
    assert read == []  # the record was renewed: its status is trusted alone now


def test_a_folder_changed_while_it_was_checked_is_not_recorded(capsys, tree, monkeypatch):
    original = runner.check_file

    def adding(file: str, options: runner.Options) -> Result:
        (tree / "sub" / "late.toml").write_text("[model]\ndim = 8\n")
        return original(file, options)

    monkeypatch.setattr(runner, "check_file", adding)
    check(capsys, str(tree))
    assert records() == []


def test_an_unstorable_result_leaves_no_record(capsys, configs, monkeypatch):
    monkeypatch.setenv("TRAINSPEC_MAX_FILE_BYTES", "100")  # every file over the limit: none stored
    check(capsys, *configs)
    assert records() == []


def test_a_file_written_just_before_the_first_run_is_trusted_by_the_second(capsys, configs, monkeypatch):
    """The recording run hashes again, at its end, each file too recent to trust when it started."""
    monkeypatch.setattr(cache_run, "SETTLED_NS", 3600 * 10**9)  # every file changed "just now"...
    calls: list[int] = []
    real = cache_run._now

    def clock() -> int:  # ...and the run ends two hours after it starts (look-up, taken, settled, ...)
        calls.append(0)
        return real() + (0 if len(calls) <= 2 else 7200 * 10**9)

    monkeypatch.setattr(cache_run, "_now", clock)
    first = check(capsys, *configs)
    read: list[str] = []
    original = cache_store.read_regular

    def spy(path, limit):
        read.append(str(path))
        return original(path, limit)

    monkeypatch.setattr(cache_store, "read_regular", spy)
    assert check(capsys, *configs) == first
    assert read == [str(records()[0])]  # the record alone: no file read, none hashed


def test_a_project_configuration_appearing_above_files_named_relatively_is_a_miss(
    capsys, checked, configs, monkeypatch
):
    folder = Path(configs[0]).parent
    monkeypatch.chdir(folder.parent)
    named = [f"{folder.name}/{Path(c).name}" for c in configs]
    check(capsys, *named)
    (folder.parent / ".trainspec.toml").write_text('ignore = ["KF"]\n')
    checked.clear()
    assert check(capsys, *named) == check(capsys, "--no-cache", *named)
    assert checked
