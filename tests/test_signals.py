"""Signals as a terminal or a CI runner sends them: one line and a clean exit, nothing left behind.

Ctrl-C reaches every process of the terminal's process group, workers included;
SIGTERM and SIGHUP end a run that is writing a file (a CI timeout, a closed
terminal) and must leave neither a temporary file nor a half-written one.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import ROOT

pytestmark = [
    pytest.mark.external,
    pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts worker processes through /proc"),
]

ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


def wait_until(condition, proc: subprocess.Popen[bytes], timeout: float = 120.0) -> None:
    """Poll `condition` while `proc` runs: a generous deadline, since the machine may be busy."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert proc.poll() is None, f"the run ended (status {proc.returncode}) before the condition held"
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


@pytest.mark.parametrize("delay", [0.0, 0.3])
def test_ctrl_c_during_a_parallel_run_is_one_line_and_exit_130(tmp_path, delay):
    example = (ROOT / "examples" / "kempnerforge_7b_12gpu.toml").read_bytes()
    for n in range(5000):  # enough work that the run is still going when the signal comes
        (tmp_path / f"c{n}.toml").write_bytes(example + f"# {n}\n".encode())  # no two alike
    proc = subprocess.Popen(  # no result cache: every file is checked, by the workers
        [sys.executable, "-m", "trainspec", "check", "--no-cache", "--jobs", "2", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=ENV,
        start_new_session=True,  # its own process group, as a terminal's foreground job
    )
    try:
        wait_until(lambda: len(children(proc.pid)) >= 2, proc)
        time.sleep(delay)
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does
        started = time.monotonic()
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert (proc.returncode, err.decode()) == (130, "trainspec: interrupted\n"), err.decode()
    assert time.monotonic() - started < 30  # the workers stop too; seconds, even on a busy machine


WRITER = """
import os, sys, time
from pathlib import Path
from trainspec.write.safe_write import write_text

synced = os.fsync
def slow_fsync(fd):  # the temporary file is written: stop here until the signal comes
    synced(fd)
    print("ready", flush=True)
    time.sleep(60)
os.fsync = slow_fsync
write_text(Path(sys.argv[1]), "new\\n", expected="old\\n")
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_write_ended_by_a_signal_leaves_the_file_and_no_temporary_file(tmp_path, signum):
    """Every writer (`migrate`, `editor`, `plan --apply`) writes through safe_write.write_text."""
    path = tmp_path / "run.yaml"
    path.write_text("old\n")
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
        assert len(list(tmp_path.iterdir())) == 2  # the file and its temporary twin
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert (proc.returncode, err) == (128 + signum, b"")
    assert [p.name for p in tmp_path.iterdir()] == ["run.yaml"] and path.read_text() == "old\n"
