"""What `trainspec migrate` and `trainspec editor init|annotate` write, and what they refuse (`safe_write`).

Each test reproduces one finding of the audit: a write must never go through a
link out of the workspace, lose a file's owner, mode, byte-order mark, hard
links or a concurrent edit, leave a temporary file, or end in a traceback.
"""

from __future__ import annotations

import errno
import importlib.abc
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from trainspec.cli import main

LEGACY = (
    "model:\n  target_model_path: m\ndata:\n  train_data_path: /d.jsonl\ntraining:\n  deployment_mode: disaggregated\n"
)
MIGRATED = "training: {}\ndeployment:\n  mode: disaggregated\n"
BOM = b"\xef\xbb\xbf"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(argv)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


def temporary_files(*directories: Path) -> list[Path]:
    return [p for d in directories for p in d.iterdir() if p.name.endswith(".tmp")]


def commands(path: Path) -> dict[str, list[str]]:
    root = str(path.parent)
    return {
        "migrate": ["migrate", str(path)],
        "annotate": ["editor", "annotate", "--root", root, "--family", "specforge", str(path)],
    }


# -- migrate and annotate: what is kept ----------------------------------------------------------


@pytest.mark.parametrize("command", ["migrate", "annotate"])
def test_a_symlink_stays_a_link_and_its_target_is_rewritten(command, tmp_path, capsys):
    target = tmp_path / "real" / "run.yaml"
    target.parent.mkdir()
    target.write_text(LEGACY)
    link = tmp_path / "run.yaml"
    link.symlink_to(target)
    assert run(commands(link)[command], capsys)[0] == 0
    assert link.is_symlink() and os.readlink(link) == str(target)
    rewritten = target.read_text()
    assert rewritten.endswith(MIGRATED) if command == "migrate" else rewritten.startswith("# yaml-language-server:")
    assert temporary_files(tmp_path, target.parent) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
@pytest.mark.parametrize("command", ["migrate", "annotate"])
def test_owner_mode_and_byte_order_mark_are_kept(command, tmp_path, capsys):
    path = tmp_path / "run.yaml"
    path.write_bytes(BOM + LEGACY.encode())
    os.chown(path, 12345, 23456)
    path.chmod(0o640)
    inode = path.stat().st_ino
    assert run(commands(path)[command], capsys)[0] == 0
    st = path.stat()
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (12345, 23456, 0o640)
    assert st.st_ino != inode  # replaced by a rename, not rewritten in place
    data = path.read_bytes()
    assert data.startswith(BOM) and data.count(BOM) == 1
    assert data.endswith(MIGRATED.encode()) if command == "migrate" else data[3:].startswith(b"# yaml-language-server:")


# -- migrate and annotate: what is refused -------------------------------------------------------


def read_only(path: Path) -> None:
    path.chmod(0o444)


def hard_linked(path: Path) -> None:
    os.link(path, path.with_name("other-name.yaml"))


@pytest.mark.parametrize("command", ["migrate", "annotate"])
@pytest.mark.parametrize(
    "prepare, message",
    [(read_only, "read-only; nothing was written"), (hard_linked, "has 2 hard links; nothing was written")],
)
def test_read_only_and_hard_linked_files_are_refused(command, prepare, message, tmp_path, capsys):
    path = tmp_path / "run.yaml"
    path.write_text(LEGACY)
    prepare(path)
    code, err = run(commands(path)[command], capsys)
    assert code == 2 and f"{path}: {message}" in err
    assert path.read_text() == LEGACY and temporary_files(tmp_path) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_an_owner_that_cannot_be_kept_is_refused(tmp_path, capsys, monkeypatch):
    path = tmp_path / "run.yaml"
    path.write_text(LEGACY)
    os.chown(path, 12345, 12345)

    def not_allowed(fd: int, uid: int, gid: int) -> None:
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "fchown", not_allowed)
    code, err = run(["migrate", str(path)], capsys)
    assert code == 2 and f"{path}: owned by 12345:12345" in err and "run as its owner" in err
    assert path.read_text() == LEGACY and temporary_files(tmp_path) == []


def edit_after_migrate_read(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from trainspec.cli import migrate as command

    real = command.migrate

    def then_edited(file: str, family: str | None) -> object:
        result = real(file, family)
        path.write_text(LEGACY + "# edited meanwhile\n")
        return result

    monkeypatch.setattr(command, "migrate", then_edited)


def edit_while_writing(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.fsync

    def edited_then_fsync(fd: int) -> None:
        path.write_text(LEGACY + "# edited meanwhile\n")
        real(fd)

    monkeypatch.setattr(os, "fsync", edited_then_fsync)


@pytest.mark.parametrize("edit", [edit_after_migrate_read, edit_while_writing])
def test_a_file_changed_since_it_was_read_is_not_overwritten(edit, tmp_path, capsys, monkeypatch):
    path = tmp_path / "run.yaml"
    path.write_text(LEGACY)
    edit(path, monkeypatch)
    code, err = run(["migrate", str(path)], capsys)
    assert code == 2 and f"{path}: changed since trainspec read it; nothing was written" in err
    assert path.read_text() == LEGACY + "# edited meanwhile\n" and temporary_files(tmp_path) == []


# -- failures and interruptions while writing ----------------------------------------------------


@pytest.mark.parametrize("command", ["migrate", "init"])
@pytest.mark.parametrize(
    "error, code, message",
    [
        (OSError(errno.ENOSPC, "No space left on device"), 2, "No space left on device; it is unchanged (free some"),
        (OSError(errno.EFBIG, "File too large"), 2, "File too large; it is unchanged (raise the file size limit"),
        (KeyboardInterrupt(), 130, "trainspec: interrupted"),
    ],
)
def test_a_write_failing_midway_leaves_the_original_and_no_temporary_file(
    command, error, code, message, tmp_path, capsys, monkeypatch
):
    if command == "migrate":
        path = tmp_path / "run.yaml"
        path.write_text(LEGACY)
        argv = ["migrate", str(path)]
    else:  # the schema is in place already: settings.json is the one file written
        argv = ["editor", "init", "--root", str(tmp_path), "--family", "specforge"]
        assert main(argv) == 0
        path = tmp_path / ".vscode" / "settings.json"
        path.write_text('{"editor.tabSize": 2}\n')
    before = path.read_bytes()

    def fail(fd: int) -> None:  # the new text is in the temporary file, not yet renamed
        raise error

    monkeypatch.setattr(os, "fsync", fail)
    got, err = run(argv, capsys)
    assert got == code and message in err
    last = err.splitlines()[-1]  # after migrate's legacy-key warnings
    assert last.startswith(f"trainspec: cannot write {path}: ") if code == 2 else last == message
    assert path.read_bytes() == before and temporary_files(path.parent) == []


def test_a_read_only_directory_is_a_one_line_error(tmp_path, capsys, monkeypatch):
    """Root may write anywhere, so the directory's refusal is simulated where the temporary file is made."""
    path = tmp_path / "run.yaml"
    path.write_text(LEGACY)
    real = os.open

    def denied(file: str | os.PathLike[str], flags: int, mode: int = 0o777, **kwargs: int) -> int:
        if os.fspath(file).endswith(".tmp"):
            raise PermissionError(errno.EACCES, "Permission denied", os.fspath(file))
        return real(file, flags, mode, **kwargs)

    monkeypatch.setattr(os, "open", denied)
    code, err = run(["migrate", str(path)], capsys)
    assert code == 2
    assert err.splitlines()[-1] == (
        f"trainspec: cannot write {path}: Permission denied; it is unchanged (make {tmp_path} writable and run again)"
    )
    assert path.read_text() == LEGACY


def test_a_full_disk_for_real_is_a_one_line_error(tmp_path):
    """A file-size limit makes the kernel refuse the write (EFBIG), as a full disk would (ENOSPC)."""
    path = tmp_path / "run.yaml"
    path.write_text(LEGACY)
    limit = len(LEGACY) // 2

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "trainspec", "migrate", str(path)],
        capture_output=True,
        text=True,
        preexec_fn=limited,
        env=env,
        check=False,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"cannot write {path}: File too large; it is unchanged" in proc.stderr
    assert path.read_text() == LEGACY and temporary_files(tmp_path) == []


# -- Ctrl-C and stray OS errors in `main` --------------------------------------------------------


class InterruptImport(importlib.abc.MetaPathFinder):
    """Ctrl-C pressed while a module is being imported."""

    def __init__(self, name: str) -> None:
        self.name = name

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> None:
        if fullname == self.name:
            raise KeyboardInterrupt


@pytest.mark.parametrize("module", ["trainspec.cli.migrate", "trainspec.read.yaml_roundtrip"])
def test_ctrl_c_during_an_import_is_exit_130_without_a_traceback(module, tmp_path, capsys, monkeypatch):
    """`main` imports the command it runs, and `migrate` imports ruamel.yaml's round trip lazily."""
    path = tmp_path / "run.yaml"
    path.write_text(LEGACY)
    monkeypatch.delitem(sys.modules, module)
    monkeypatch.setattr(sys, "meta_path", [InterruptImport(module), *sys.meta_path])
    assert run(["migrate", str(path)], capsys) == (130, "trainspec: interrupted\n")
    assert path.read_text() == LEGACY


def test_an_os_error_no_command_expected_is_one_line(tmp_path, capsys, monkeypatch):
    from trainspec.cli import migrate as command

    def broken(file: str, family: str | None) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(command, "migrate", broken)
    assert run(["migrate", str(tmp_path / "run.yaml")], capsys) == (2, "trainspec: [Errno 5] Input/output error\n")


# -- editor init: links planted in a cloned workspace --------------------------------------------


def home_with_bashrc(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text("echo hello\n")
    return home


@pytest.mark.parametrize(
    "link, points_at",
    [
        (".trainspec/schemas/kempnerforge.schema.json", ".bashrc"),
        (".trainspec/schemas/kempnerforge.schema.json", "not-there-yet"),  # a dangling link would create it
        (".vscode/settings.json", ".bashrc"),
        (".vscode", "."),
        (".trainspec", "."),
    ],
)
def test_init_refuses_links_leading_out_of_the_workspace(link, points_at, tmp_path, capsys):
    home = home_with_bashrc(tmp_path)
    workspace = tmp_path / "cloned"
    planted = workspace / link
    planted.parent.mkdir(parents=True)
    planted.symlink_to(home / points_at)
    code, err = run(["editor", "init", "--root", str(workspace)], capsys)
    assert code == 2 and f"trainspec: {planted} is a symbolic link leading out of {workspace}" in err
    assert sorted(p.name for p in home.iterdir()) == [".bashrc"]
    assert (home / ".bashrc").read_text() == "echo hello\n"


def test_init_writes_through_links_that_stay_in_the_workspace(tmp_path, capsys):
    workspace = tmp_path / "ws"
    (workspace / "shared" / "vscode").mkdir(parents=True)
    (workspace / ".vscode").symlink_to("shared/vscode")
    assert run(["editor", "init", "--root", str(workspace), "--family", "specforge"], capsys)[0] == 0
    assert (workspace / ".vscode").is_symlink()
    settings = workspace / "shared" / "vscode" / "settings.json"
    assert "./.trainspec/schemas/specforge.schema.json" in json.loads(settings.read_text())["yaml.schemas"]
    umask = os.umask(0)
    os.umask(umask)
    assert settings.stat().st_mode & 0o777 == 0o666 & ~umask  # a new file gets the usual mode, not 0600


def test_annotate_refuses_a_schema_directory_linked_out_of_the_workspace(tmp_path, capsys):
    home = home_with_bashrc(tmp_path)
    workspace = tmp_path / "cloned"
    workspace.mkdir()
    (workspace / ".trainspec").symlink_to(home)
    config = workspace / "run.yaml"
    config.write_text(LEGACY)
    code, err = run(["editor", "annotate", "--root", str(workspace), "--family", "specforge", str(config)], capsys)
    assert code == 2 and f"{workspace / '.trainspec'} is a symbolic link leading out of {workspace}" in err
    assert sorted(p.name for p in home.iterdir()) == [".bashrc"] and config.read_text() == LEGACY


def test_init_does_not_hang_on_a_planted_pipe(tmp_path, capsys):
    (tmp_path / ".vscode").mkdir()
    os.mkfifo(tmp_path / ".vscode" / "settings.json")
    code, err = run(["editor", "init", "--root", str(tmp_path)], capsys)
    assert code == 2 and "settings.json: not a regular file (a pipe or device?)" in err


def test_a_file_past_the_input_limit_is_not_read_whole_nor_rewritten(tmp_path, monkeypatch):
    from trainspec.write.safe_write import WriteRefused, write_text

    monkeypatch.setenv("TRAINSPEC_MAX_FILE_BYTES", "1000")
    big = tmp_path / "settings.json"
    big.write_text("{" + " " * 5000 + "}")
    with pytest.raises(WriteRefused, match="over the limit of 1,000 bytes"):
        write_text(big, "{}", expected="{" + " " * 5000 + "}")
    assert big.read_text() == "{" + " " * 5000 + "}"
