"""Time the first `trainspec.load` of a process, after `import trainspec` and the import of the typed model.

    python bench/first_load.py [--runs 3] [--samples 15] [--world-size N] [CONFIG]

Each sample is a fresh interpreter that imports trainspec and the model (`JobConfig` of the bundled
KempnerForge family, by default), then times `trainspec.load(CONFIG, model=JobConfig)` (the first: it
finds the family, imports it and the checking pipeline, builds the validator) and the same call once more
(warm). A run is the median of its samples; the script prints each run's medians and their range, and
what the imports before the first load took. One untimed interpreter runs first (it writes the bytecode,
as an installed package has it). Run it from anywhere: the interpreters start in this checkout.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "kempnerforge_7b_12gpu.toml"
ENV = {
    **{key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"},
    "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])),
}
PROBE = """
import sys, time
start = time.perf_counter()
import trainspec
from trainspec.generated.kempnerforge import JobConfig
imported = time.perf_counter()
size = int(sys.argv[2]) if sys.argv[2] else None
trainspec.load(sys.argv[1], model=JobConfig, world_size=size)
first = time.perf_counter()
trainspec.load(sys.argv[1], model=JobConfig, world_size=size)
print(imported - start, first - imported, time.perf_counter() - first)
"""


def sample(config: Path, world_size: int | None) -> tuple[float, float, float]:
    """(imports, first load, warm load) in seconds, in a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(config), str(world_size or "")],
        capture_output=True,
        text=True,
        check=True,
        env=ENV,
        cwd=ROOT,
    )
    imports, first, warm = map(float, done.stdout.split())
    return imports, first, warm


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("config", nargs="?", type=Path, default=EXAMPLE)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--samples", type=int, default=15, help="interpreters per run")
    parser.add_argument("--world-size", type=int, default=None)
    args = parser.parse_args()
    sample(args.config, args.world_size)  # untimed: writes the bytecode
    medians = []
    for run in range(1, args.runs + 1):
        got = [sample(args.config, args.world_size) for _ in range(args.samples)]
        imports, first, warm = (statistics.median(g[i] for g in got) * 1e3 for i in range(3))
        medians.append(first)
        print(
            f"run {run}: first load {first:.1f} ms (samples {min(g[1] for g in got) * 1e3:.1f}–"
            f"{max(g[1] for g in got) * 1e3:.1f}), warm {warm:.2f} ms, imports before it {imports:.0f} ms",
            flush=True,
        )
    print(f"first `trainspec.load` after import, medians of {args.runs} runs: {min(medians):.1f}–{max(medians):.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
