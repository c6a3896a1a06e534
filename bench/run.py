"""Benchmark `trainspec check` against check-jsonschema on the same schemas and files.

    python bench/run.py [--files 1000] [--repeat 3]

Builds N configs (half KempnerForge TOML, half SpecForge YAML, from the
bundled corpus, about one in five made invalid), then times, for each tool:
- throughput: one invocation per family over all its files (best of --repeat, default 5);
- cold start: one invocation on one file (median of 15 runs);
- world sizes: trainspec on the bundled 7B example at one world size, then at every size
  1..1024 (median of 15 runs each): the file is read, validated and defaulted once either way.
check-jsonschema only validates the schema; trainspec also runs every rule.
Prints a Markdown table of seconds and ratios.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"
SCHEMAS = {
    "kempnerforge": ROOT / "schema/kempnerforge/job.schema.json",
    "specforge": ROOT / "schema/specforge/run.schema.json",
}
BREAK = {
    "kempnerforge": [("[model]\n", "[model]\ndimm = 1\n"), ("[train]\n", "[train]\nbatch_size = 0\n")],
    "specforge": [("model:\n", "model:\n  torch_dtype: float8\n"), ("data:\n", "data:\n  max_lenght: 5\n")],
}


def build(out: Path, count: int) -> dict[str, list[Path]]:
    rng = random.Random(0)
    sources = {
        "kempnerforge": sorted((CORPUS / "kempnerforge").rglob("*.toml")),
        "specforge": sorted((CORPUS / "specforge").glob("*.yaml")),
    }
    files: dict[str, list[Path]] = {name: [] for name in sources}
    for i in range(count):
        family = "kempnerforge" if i % 2 == 0 else "specforge"
        source = sources[family][i // 2 % len(sources[family])]
        text = source.read_text()
        if rng.random() < 0.2:
            old, new = rng.choice(BREAK[family])
            text = text.replace(old, new, 1)
        path = out / f"{i:04d}{source.suffix}"
        path.write_text(text)
        files[family].append(path)
    return files


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def commands(family: str, files: list[Path]) -> dict[str, list[str]]:
    tool = shutil.which("trainspec") or "trainspec"
    names = [str(f) for f in files]
    return {
        "trainspec": [tool, "check", "--family", family, *names],
        "check-jsonschema": [
            shutil.which("check-jsonschema") or "check-jsonschema",
            "--schemafile",
            str(SCHEMAS[family]),
            *names,
        ],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        files = build(Path(tmp), args.files)
        through = {"trainspec": 0.0, "check-jsonschema": 0.0}
        for family, paths in files.items():
            for tool, cmd in commands(family, paths).items():
                through[tool] += min(timed(cmd) for _ in range(args.repeat))
        cold = {}
        one = files["kempnerforge"][:1]
        for tool, cmd in commands("kempnerforge", one).items():
            timed(cmd)  # warm the file cache
            cold[tool] = statistics.median(timed(cmd) for _ in range(15))
        example = str(ROOT / "examples" / "kempnerforge_7b_12gpu.toml")
        tool = shutil.which("trainspec") or "trainspec"
        sweep = {
            sizes: statistics.median(timed([tool, "check", example, "--world-size", sizes]) for _ in range(15))
            for sizes in ("12", "1..1024")
        }
    print(f"| measure ({args.files} files) | trainspec | check-jsonschema | ratio |")
    print("|---|---|---|---|")
    t, c = through["trainspec"], through["check-jsonschema"]
    print(f"| throughput, all files (s) | {t:.2f} | {c:.2f} | trainspec {c / t:.1f}x faster |")
    t, c = cold["trainspec"], cold["check-jsonschema"]
    print(f"| cold start, one file (s) | {t:.3f} | {c:.3f} | trainspec {c / t:.2f}x faster |")
    one, many = sweep["12"], sweep["1..1024"]
    print("\n| one file (s) | --world-size 12 | --world-size 1..1024 | ratio |\n|---|---|---|---|")
    print(f"| trainspec | {one:.3f} | {many:.3f} | {many / one:.2f}x the time of one size |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
