"""Benchmark the result cache: a first and a second `trainspec check` over the same unchanged files.

    python bench/cache.py [--files 10000] [--rounds 3] [--formats toml,yaml,json] [--folder]

For each format it builds the files as bench/run.py does (TOML: KempnerForge at `--world-size 8`; YAML
and JSON: SpecForge; about half with one or two mistakes), then, each round in a new empty cache folder
(`TRAINSPEC_CACHE_DIR`): the first run (which checks every file, fills the cache and records the run),
the second (the same command line over the same files, answered from that record), and a run with
`--no-cache` (what the first run would cost without the cache), each once, in turn, after an untimed run
over ten files that writes the bytecode. It prints the wall time and the CPU time (the process and its
workers) of each, and checks that the three printed the same report. With `--folder` the runs name the
files' folder instead of each file.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run as base  # bench/run.py: the same files, the same commands


def timed(cmd: list[str], env: dict[str, str], out: Path) -> tuple[float, float]:
    """Wall and CPU seconds (user and system, the process and the workers it waited for) of one run,
    its standard output written to `out`."""
    with open(out, "wb") as sink:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=sink, stderr=subprocess.DEVNULL, env=env)
        _, _, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    return wall, usage.ru_utime + usage.ru_stime


def spread(values: list[float], digits: int = 2, unit: str = "") -> str:
    """`median (min–max)`."""
    if len(values) == 1:
        return f"{values[0]:.{digits}f}{unit}"
    return f"{statistics.median(values):.{digits}f}{unit} ({min(values):.{digits}f}–{max(values):.{digits}f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--formats", default="toml,yaml,json")
    parser.add_argument("--folder", action="store_true", help="name the files' folder, not each file")
    args = parser.parse_args()
    print(
        "| format | files | first run (s) | second run (s) | second faster by | first, CPU (s) | second, CPU (s) "
        "| CPU ratio | `--no-cache` run (s) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in args.formats.split(","):
            files = base.build(Path(tmp) / fmt, fmt, args.files)
            cmd = base.commands(fmt, files)["trainspec"]
            if args.folder:
                cmd = [*cmd[: -len(files)], str(Path(tmp) / fmt)]
            first, second, uncached = [], [], []
            warm = {**base.ENV, "TRAINSPEC_NO_CACHE": "1"}
            named = len(files) if not args.folder else 1
            timed([*cmd[:-named], *map(str, files[:10])], warm, Path(os.devnull))  # writes the bytecode
            for n in range(args.rounds):
                env = {**base.ENV, "TRAINSPEC_CACHE_DIR": str(Path(tmp) / f"cache-{fmt}-{n}")}
                env.pop("TRAINSPEC_NO_CACHE", None)
                reports = [Path(tmp) / f"{fmt}-{n}-{what}.txt" for what in ("first", "second", "none")]
                first.append(timed(cmd, env, reports[0]))
                second.append(timed(cmd, env, reports[1]))
                uncached.append(timed([*cmd[:2], "--no-cache", *cmd[2:]], env, reports[2]))
                texts = {r.read_bytes() for r in reports}
                if len(texts) != 1:
                    raise SystemExit(f"{fmt}: the reports with and without the cache differ ({reports})")
            ratios = [f[0] / s[0] for f, s in zip(first, second, strict=True)]
            cpu_ratios = [f[1] / s[1] for f, s in zip(first, second, strict=True)]
            cells = [
                spread([f[0] for f in first]),
                spread([s[0] for s in second], 3),
                spread(ratios, 1, "x"),
                spread([f[1] for f in first]),
                spread([s[1] for s in second], 3),
                spread(cpu_ratios, 1, "x"),
                spread([u[0] for u in uncached]),
            ]
            print(f"| {fmt.upper()} | {args.files:,} | {' | '.join(cells)} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
