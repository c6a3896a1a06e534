"""Many files: directories and globs, a process pool with serial output, several world sizes."""

from __future__ import annotations

import io
import json
import os
import time
from pathlib import Path

import pytest

from trainspec.cli import main
from trainspec.engine import progress
from trainspec.read.discovery import expand
from trainspec.spec.formats import extensions as config_extensions

from .conftest import CORPUS

SOURCES = sorted(CORPUS.rglob("*.toml")) + sorted(CORPUS.rglob("*.yaml"))


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def vary(text: str, suffix: str, n: int) -> tuple[str, str]:
    """Variation n of a corpus file: (file suffix, text); most are valid, many are broken in different ways."""
    kind = n % 9
    toml = suffix == ".toml"
    if kind == 1:  # a rule violation
        broken = text.replace("dim = 4096", "dim = 4100") if toml else text.replace("batch_size: 1", "batch_size: 0")
        return suffix, broken
    if kind == 2:  # an unknown key
        return suffix, text + ("\n[extra]\nkey = 1\n" if toml else "\nextra_section: 1\n")
    if kind == 3:  # a syntax error
        return suffix, text[: len(text) // 2] + ("\n[[[\n" if toml else "\n  - : [\n")
    if kind == 4:  # a used and an unused suppression
        return suffix, "# trainspec: ignore[unknown-key, tp-divides-heads]\n" + text + (
            "\n[extra]\n" if toml else "\nextra: 1\n"
        )
    if kind == 5:  # not UTF-8
        return suffix, "\udcff"
    if kind == 6:  # a type error
        return suffix, text.replace("= true", '= "yes"') if toml else text.replace(": true", ": 3")
    return suffix, text


def make_configs(root: Path, count: int) -> None:
    for n in range(count):
        source = SOURCES[n % len(SOURCES)]
        suffix, text = vary(source.read_text(), source.suffix, n // len(SOURCES) + n)
        folder = root / f"group{n % 7}" / ("nested" if n % 3 == 0 else "")
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{n:04d}_{source.stem}{suffix}"
        if text == "\udcff":
            path.write_bytes(b"\xff\xfe not text")
        else:
            path.write_text(text)
    os.symlink(root / "does-not-exist.toml", root / "group0" / "dangling.toml")


def test_thousand_files_same_output_serial_and_parallel(capsys, tmp_path):
    make_configs(tmp_path, 999)
    for fmt in ("json", "text"):
        outputs = []
        for jobs in ("1", "2"):
            code, out, _ = run(capsys, "check", str(tmp_path), "--world-size", "8", "--format", fmt, "--jobs", jobs)
            outputs.append((code, out))
        assert outputs[0] == outputs[1]
    code, out = outputs[0]
    assert code == 2  # the dangling link is a missing file...
    assert out.splitlines()[-1].split("; ")[0].endswith("in 1000 files")  # ...and does not stop the other 999
    report = json.loads(run(capsys, "check", str(tmp_path), "--world-size", "8", "--format", "json")[1])
    rules = {d["rule"] for d in report["diagnostics"]}
    assert {
        "file-not-found",
        "syntax-error",
        "unknown-key",
        "wrong-type",
        "unused-suppression",
        "model-heads-divide-dim",
    } <= rules
    assert report["summary"]["files_with_errors"] < 1000


def test_directories_are_walked_skipping_hidden_and_node_modules(tmp_path):
    for name in (
        "a.toml",
        "b.yml",
        "c.json",
        "README.md",
        ".hidden.toml",
        "sub/d.yaml",
        ".git/e.toml",
        "node_modules/f.toml",
        "sub/.cache/g.toml",
    ):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    files, unmatched, _ = expand([str(tmp_path)], config_extensions({"toml", "yaml", "json"}))
    assert [Path(f).relative_to(tmp_path).as_posix() for f in files] == ["a.toml", "b.yml", "c.json", "sub/d.yaml"]
    assert unmatched == []
    files, _, _ = expand([str(tmp_path)], config_extensions({"yaml"}))
    assert [Path(f).name for f in files] == ["b.yml", "d.yaml"]


def test_globs_and_explicit_files(tmp_path):
    for name in ("x/a.toml", "x/b.toml", "x/notes.txt", "y/c.toml"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    exts = config_extensions({"toml"})
    files, unmatched, _ = expand(
        [f"{tmp_path}/**/*", str(tmp_path / "x/notes.txt"), f"{tmp_path}/x/a.toml", f"{tmp_path}/none/*.toml"], exts
    )
    assert [Path(f).relative_to(tmp_path).as_posix() for f in files] == [
        "x/a.toml",
        "x/b.toml",
        "y/c.toml",
        "x/notes.txt",
    ]
    assert unmatched == [f"{tmp_path}/none/*.toml"]


def test_found_files_are_named_as_a_user_names_them(tmp_path, monkeypatch, capsys):
    """`check .` prints `configs/a.toml`, not `./configs/a.toml`; a file named as `./b.toml` keeps its spelling."""
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "a.toml").write_text("[model]\ndim = 'x'\n")
    (tmp_path / "b.toml").write_text("[model]\ndim = 'x'\n")
    monkeypatch.chdir(tmp_path)
    exts = config_extensions({"toml"})
    assert expand(["."], exts)[0] == ["b.toml", "configs/a.toml"]
    assert expand(["./", "./configs/*.toml"], exts)[0] == ["b.toml", "configs/a.toml"]
    assert expand(["./b.toml"], exts)[0] == ["./b.toml"]
    code, out, _ = run(capsys, "check", ".")
    assert code == 1 and out.startswith("b.toml:2:7: error[") and "\nconfigs/a.toml:2:7: error[" in out


def test_empty_directory_is_a_usage_error(capsys, tmp_path):
    code, out, _ = run(capsys, "check", str(tmp_path))
    assert code == 2
    assert "error[file-not-found] no config files (.json, .toml, .yaml, .yml) in this directory" in out


def test_several_world_sizes_say_which_size(capsys, write):
    path = write("job.toml", "[distributed]\ndp_shard = 2\ntp = 2\n\n[model]\nn_head = 3\n")
    code, out, _ = run(capsys, "check", str(path), "--world-size", "8,4,16")
    product = (
        "dp_replicate·dp_shard·tp·pp·cp·ep = 1·2·2·1·1·1 = 4 but the world size is {0}; "
        "set distributed.dp_shard = -1 or adjust the degrees"
    )
    assert code == 1
    assert out.replace(str(path), "job.toml").splitlines() == [
        "job.toml:2:1: error[world-size-product] at world size 8: " + product.format(8),
        "job.toml:2:1: error[world-size-product] at world size 16: " + product.format(16),
        "job.toml:6:1: error[unknown-key] unknown key `n_head` in model; did you mean `n_heads`?",
        "job.toml: note[world-size-checked] at world size 4: every world-size rule passes",
        "3 error(s), 0 warning(s) in 1 file; world sizes 4, 8, 16",
    ]
    report = json.loads(run(capsys, "check", str(path), "--world-size", "8,4,16", "--format", "json")[1])
    assert [d.get("world_size") for d in report["diagnostics"]] == [8, 16, None, 4]


def test_world_size_rules_pass_at_every_listed_size(capsys):
    path = CORPUS / "kempnerforge" / "train" / "7b.toml"  # dp_shard = -1
    code, out, _ = run(capsys, "check", str(path), "--world-size", "4,8,64")
    assert code == 0 and out.endswith("no problems; world sizes 4, 8, 64\n")
    for size in (4, 8, 64):
        assert f"note[world-size-checked] at world size {size}: every world-size rule passes" in out


def test_progress_only_on_a_terminal_and_only_when_long(monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert progress.Progress.for_stream(10, io.StringIO()) is None
    quick = progress.Progress.for_stream(10, Terminal())
    assert quick is not None
    quick.advance()
    quick.close()
    assert quick.stream.getvalue() == ""
    monkeypatch.setattr(progress, "DELAY", 0.0)
    slow = progress.Progress(3, Terminal())
    time.sleep(0.01)
    slow.advance()
    slow.close()
    assert slow.stream.getvalue() == "\rtrainspec: checked 1/3 files\r\033[K"


def test_jobs_must_be_positive(capsys, write):
    with pytest.raises(SystemExit):
        main(["check", str(write("a.toml", "[model]\n")), "--jobs", "0"])


def test_a_walked_tree_skips_files_of_no_family_but_reports_broken_ones(tmp_path, capsys):
    from trainspec.cli import main

    (tmp_path / "configs").mkdir()
    (tmp_path / "package.json").write_text('{"name": "x", "version": "1.0.0"}\n')
    (tmp_path / "configs" / "job.toml").write_text("[model]\ndim = 64\nn_heads = 4\nn_kv_heads = 4\n")
    assert main(["check", str(tmp_path)]) == 0
    (tmp_path / "configs" / "bad.yaml").write_text("model: [\n")
    assert main(["check", str(tmp_path)]) == 1
    assert "bad.yaml:2:1: error[syntax-error]" in capsys.readouterr().out


def test_select_and_ignore_never_hide_a_file_that_could_not_be_checked(tmp_path, capsys):
    from trainspec.cli import main

    bad = tmp_path / "bad.yaml"
    bad.write_text("model: [\n")
    assert main(["check", str(tmp_path / "missing.toml"), str(bad), "--select", "model"]) == 2
    out = capsys.readouterr().out
    assert "error[file-not-found]" in out and "error[syntax-error]" in out
    assert main(["check", str(bad), "--ignore", "syntax-error"]) == 1


def test_a_process_pool_starts_only_for_many_files():
    """Below the measured break-even a pool costs more than it saves: few files are checked in one process."""
    import os

    from trainspec.engine.runner import PARALLEL_MIN_FILES, default_jobs

    assert default_jobs(PARALLEL_MIN_FILES - 1) == 1
    assert default_jobs(PARALLEL_MIN_FILES) == len(os.sched_getaffinity(0))
