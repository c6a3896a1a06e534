"""Wall time and peak memory of `trainspec` on hostile inputs below 1 MiB: what surrounds the config checks.

    python bench/hostile.py [--only NAME]

Each case builds its files in a temporary folder (a project configuration, an overlay, a settings file, a
config) and runs `python -m trainspec` on them in a subprocess, as CI would; the time is the wall time of
that process (Python's start and imports included, about 0.3 s here) and the memory its peak resident
set (`wait4`). Prints a Markdown table; a case over 2 s or 256 MiB is marked `OVER`, and the exit status
is 1 when one is. docs/guarantees.md records a run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SECONDS, MEBIBYTES = 2.0, 256
KF = "# trainspec: family=kempnerforge\n[distributed]\ndp_shard = 1\n"
PROJECT = '[[configs]]\npaths = ["*.toml"]\noverlay = "o.json"\n'


def overlay(folder: Path, patch: list[object], config: str = KF) -> list[str]:
    (folder / "o.json").write_text(json.dumps({"family": "kempnerforge", "name": "acme", "patch": patch}))
    (folder / ".trainspec.toml").write_text(PROJECT)
    (folder / "kf.toml").write_text(config)
    return ["check", "kf.toml"]


def add(value: object, key: str = "acme") -> dict[str, object]:
    return {"op": "add", "path": f"/properties/{key}", "value": value}


def project(folder: Path, text: str, files: int = 1) -> list[str]:
    (folder / ".trainspec.toml").write_text(text)
    for n in range(files):
        sub = folder / f"d{n}" if files > 1 else folder
        sub.mkdir(exist_ok=True)
        (sub / "kf.toml").write_text(KF)
    return ["check"] if files > 1 else ["check", "kf.toml"]


def fan_out(folder: Path) -> list[str]:
    defs = [
        {"op": "add", "path": f"/$defs/f{n}", "value": {"anyOf": [{"$ref": f"#/$defs/f{n + 1}"}] * 2}}
        for n in range(40)
    ]
    return overlay(folder, [*defs, {"op": "add", "path": "/$defs/f40", "value": {}}, add({"$ref": "#/$defs/f0"})])


def settings(folder: Path) -> list[str]:
    (folder / ".vscode").mkdir()
    (folder / ".vscode" / "settings.json").write_text('{"n": ' + "9" * 4400 + "}\n")
    return ["editor", "init", "--root", str(folder)]


def outside_link(folder: Path) -> list[str]:
    (folder / "kf.toml").symlink_to("/etc/passwd")
    return ["check", "kf.toml", "--family", "kempnerforge"]


def lines(count: int, line: Callable[[int], str]) -> str:
    return "".join(line(n) for n in range(count))


CASES: dict[str, Callable[[Path], list[str]]] = {
    "unknown key holding an annotation (stderr)": lambda f: project(f, '"x\\n::error::forged\\u001b]0;t\\u0007" = 1\n'),
    "overlay outside the project (/proc)": lambda f: project(
        f, '[[configs]]\npaths = ["*.toml"]\noverlay = "/proc/self/environ"\n'
    ),
    "overlay pattern (?=a)(a+)+$": lambda f: overlay(f, [add({"type": "string", "pattern": "(?=a)(a+)+$"})]),
    "overlay pattern ^(a+)+$, 900 KB value": lambda f: overlay(
        f,
        [add({"type": "string", "pattern": "^(a+)+$"})],
        KF.replace("[distributed]", f'acme = "{"a" * 900_000}!"\n[distributed]'),
    ),
    "overlay pattern \\d+x, 900 KB value": lambda f: overlay(
        f,
        [add({"type": "string", "pattern": "\\d+x"})],
        KF.replace("[distributed]", f'acme = "{"1" * 900_000}"\n[distributed]'),
    ),
    "overlay patternProperties ^(b+)+$, 900 KB key": lambda f: overlay(
        f,
        [add({"type": "object", "patternProperties": {"^(b+)+$": {"type": "integer"}}, "additionalProperties": False})],
        KF + f'[acme]\n"{"b" * 900_000}!" = 1\n',
    ),
    "overlay $ref to itself": lambda f: overlay(
        f, [{"op": "add", "path": "/$defs/loop", "value": {"$ref": "#/$defs/loop"}}, add({"$ref": "#/$defs/loop"})]
    ),
    "overlay 2^40 anyOf fan-out": fan_out,
    "--set path of 20,000 parts": lambda f: [
        *project(f, ""),
        "--family",
        "kempnerforge",
        "--set",
        ".".join(["model"] + ["a"] * 20_000) + "=1",
    ],
    "1,000 project `set` entries, long unknown paths": lambda f: project(
        f, "set = [" + ", ".join(f'"model.{"x" * 200}{n}.y=1"' for n in range(1000)) + ']\nfamily = "kempnerforge"\n'
    ),
    "3,000 project `set` entries (refused)": lambda f: project(
        f, "set = [" + ", ".join(f'"model.{"x" * 200}{n}.y=1"' for n in range(3000)) + "]\n"
    ),
    "1,000 `exclude` globs over 300 files": lambda f: project(
        f,
        "exclude = [" + ", ".join(f'"x{n}/**/*.toml"' for n in range(1000)) + ']\n[[configs]]\npaths = ["**/*.toml"]\n',
        300,
    ),
    "3,000 `[[configs]]` with world-size ranges (refused)": lambda f: project(
        f, lines(3000, lambda n: f'[[configs]]\npaths = ["e{n}/*.toml"]\nworld-size = "1..65536"\n')
    ),
    "editor init, settings with a 4,400-digit number": settings,
    "config linked to /etc/passwd": outside_link,
    "1 MiB YAML list without aliases": lambda f: [
        "check",
        str(_write(f / "big.yaml", "model:\n  k: [" + ", ".join(["1"] * 340_000) + "]\n")),
        "--family",
        "specforge",
    ],
    "1 MiB TOML of unknown keys": lambda f: [
        "check",
        str(
            _write(
                f / "kf.toml", "# trainspec: family=kempnerforge\n[model]\n" + lines(45_000, lambda n: f"k{n} = {n}\n")
            )
        ),
    ],
}


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def run(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, int]:
    """(seconds, peak MiB, exit status) of `python -m trainspec ARGS` in `cwd`."""
    with open(os.devnull, "wb") as sink:
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "trainspec", *args], cwd=cwd, env=env, stdout=sink, stderr=sink)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return elapsed, usage.ru_maxrss / 1024, proc.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run the cases whose name contains this text")
    options = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    over = False
    print("| case | seconds | peak MiB | exit |\n| --- | ---: | ---: | ---: |")
    for name, build in CASES.items():
        if options.only and options.only not in name:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            seconds, mib, status = run(build(folder), folder, env)
        mark = " OVER" if seconds > SECONDS or mib > MEBIBYTES else ""
        over = over or bool(mark)
        print(f"| {name} | {seconds:.2f}{mark} | {mib:.0f} | {status} |", flush=True)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
