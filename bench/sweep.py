"""Benchmark `trainspec check --sweep` against one `trainspec check` process per variant.

    python bench/sweep.py [--repeat 5] [--sample 20]

The sweep: the bundled 7B example with `distributed.dp_shard = -1`, 10 learning rates × 10 batch
sizes × 10 tensor-parallel degrees = 1,000 variants, each at world sizes 12, 16 and 64. Times:
- the sweep, one command-line invocation (median of --repeat runs);
- one process per variant, measured on --sample variants and scaled to all 1,000.
Prints a Markdown table of seconds.
"""

from __future__ import annotations

import argparse
import itertools
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "kempnerforge_7b_12gpu.toml"
FIXED = ["--set", "distributed.dp_shard=-1", "--world-size", "12,16,64"]
AXES = {
    "optimizer.lr": ["1e-4", "2e-4", "3e-4", "4e-4", "5e-4", "6e-4", "8e-4", "1e-3", "2e-3", "3e-3"],
    "train.batch_size": ["1", "2", "3", "4", "6", "8", "12", "16", "24", "32"],
    "distributed.tp": ["1", "2", "3", "4", "5", "6", "8", "12", "16", "32"],
}
# --isolated: the repository's pyproject.toml gives the example a world size, which the sizes below replace
# anyway; without the project configuration the run depends on nothing but these arguments.
TRAINSPEC = [sys.executable, "-m", "trainspec", "check", "--isolated", str(EXAMPLE)]


def timed(cmd: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr}")
    return elapsed, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sample", type=int, default=20)
    args = parser.parse_args()

    sweep = [*TRAINSPEC, *FIXED]
    for path, values in AXES.items():
        sweep += ["--sweep", f"{path}={','.join(values)}"]
    runs = [timed(sweep) for _ in range(args.repeat)]
    summary = runs[0][1].strip().splitlines()[-1]
    if not summary.endswith("world sizes 12, 16, 64)"):  # the sizes claimed are the sizes checked
        raise SystemExit(f"the sweep did not check at world sizes 12, 16, 64: {summary}")

    variants = list(itertools.product(*AXES.values()))
    sample = random.Random(0).sample(variants, args.sample)
    alone = []
    for values in sample:
        sets = [a for path, v in zip(AXES, values, strict=True) for a in ("--set", f"{path}={v}")]
        alone.append(timed([*TRAINSPEC, *FIXED, *sets])[0])
    per_process = statistics.mean(alone)

    print(f"{len(variants):,} variants × 3 world sizes ({summary})\n")
    print("| how | seconds |")
    print("|---|---|")
    print(f"| `check --sweep`, one process (median of {args.repeat}) | {statistics.median(t for t, _ in runs):.2f} |")
    print(
        f"| one `check` process per variant ({per_process:.3f} s each, mean of {args.sample}, × {len(variants):,}) "
        f"| {per_process * len(variants):.0f} |"
    )


if __name__ == "__main__":
    main()
