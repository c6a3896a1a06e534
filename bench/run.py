"""Benchmark `trainspec check` against check-jsonschema, one input format at a time.

    python bench/run.py [--sizes 1000,10000] [--rounds 3] [--formats toml,yaml,json]

For each format (TOML: KempnerForge; YAML and JSON: SpecForge) it builds N configs
from the bundled corpus, about half of them made invalid by one or two edits
(a misspelt key, a value of the wrong type, an integer written 8.0, a bound
crossed, NaN, a date), and measures:

- throughput: `trainspec check --family F` (KempnerForge with `--world-size 8`;
  a SpecForge config states its own world size) and check-jsonschema with the same
  schema on the same files, one invocation each, alternating, `--rounds` times;
  the ratio is the median of the rounds' ratios;
- peak memory of the trainspec invocation (the largest process) at each N;
- in process, on the first N files: trainspec's check (serial, one process) against
  parsing alone with the library trainspec reads the format with (tomllib, PyYAML's C
  composer, json), median of the rounds;
- one-file cold start of both tools (an invalid file and the valid 7B example), the first
  and a warm `trainspec.load` after `import trainspec`, and the world-size sweep (one size
  against 1..1024), medians.

check-jsonschema only validates the schema; trainspec also runs every rule. Each
command runs once untimed first, and both run from bytecode, as installed tools do.
The machine may be shared: ratios of alternating runs hold up better than seconds.
Prints Markdown tables. `bench/sweep.py`, when present, benchmarks `--sweep`
and planning; `--with-sweep` runs it after these.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"
sys.path.insert(0, str(ROOT / "src"))

FORMATS = {  # format: (family, schema, corpus files, world sizes: none when the config states its own)
    "toml": ("kempnerforge", "schema/kempnerforge/job@5666d0d.schema.json", "kempnerforge*/train/*.toml", (8,)),
    "yaml": ("specforge", "schema/specforge/run@a6b6b02.schema.json", "specforge/*.yaml", ()),
    "json": ("specforge", "schema/specforge/run@a6b6b02.schema.json", "specforge/*.yaml", ()),
}
_TOML_PAIR = re.compile(r"^([A-Za-z_][\w-]*)(\s*=\s*)(.+?)\s*$")
_YAML_PAIR = re.compile(r"^(\s*)([A-Za-z_][\w-]*)(:\s+)([^\s#&*|>!][^#]*?)\s*$")


def _text_edit(line: str, fmt: str, rng: random.Random) -> str:
    """One plausible mistake on a `key = value` (TOML) or `key: value` (YAML) line."""
    if fmt == "toml":
        m = _TOML_PAIR.match(line)
        assert m is not None
        indent, key, sep, value = "", m[1], m[2], m[3]
    else:
        m = _YAML_PAIR.match(line)
        assert m is not None
        indent, key, sep, value = m[1], m[2], m[3], m[4]
    nan, date = ("nan", "1979-05-27") if fmt == "toml" else (".nan", "yes")
    choice = rng.choice(["key", "text", "float", "negative", "bool", "nan", "date", "big"])
    if choice == "key":
        key = key[:-1] if len(key) > 3 else key + "x"
    elif choice == "text":
        value = '"fast"'
    elif choice == "float" and re.fullmatch(r"-?\d+", value):
        value += ".0"
    elif choice == "negative" and re.fullmatch(r"[\d.e+-]+", value):
        value = "-" + value.lstrip("-") + "1"
    elif choice == "bool":
        value = "true"
    elif choice == "nan":
        value = nan
    elif choice == "date":
        value = date
    else:
        value = "123456789012"
    return f"{indent}{key}{sep}{value}"


def _json_edit(data: dict, rng: random.Random) -> None:
    """One plausible mistake at a random leaf of JSON data."""
    path: list = []
    node = data
    while isinstance(node, dict) and node:
        key = rng.choice(sorted(node))
        if not isinstance(node[key], dict) or not node[key]:
            break
        path.append(key)
        node = node[key]
    value = node[key]
    choice = rng.choice(["key", "text", "float", "negative", "bool", "null", "list"])
    if choice == "key":
        node[key + "x"] = node.pop(key)
    elif choice == "float" and isinstance(value, int) and not isinstance(value, bool):
        node[key] = float(value)
    elif choice == "negative" and isinstance(value, (int, float)) and not isinstance(value, bool):
        node[key] = -value - 1
    else:
        node[key] = {"text": "fast", "bool": True, "null": None, "list": [1, 2]}.get(choice, "fast")


def build(out: Path, fmt: str, count: int) -> list[Path]:
    """`count` configs of `fmt`, about half with one or two mistakes."""
    rng = random.Random(f"{fmt}-{count}")
    sources = sorted(CORPUS.glob(FORMATS[fmt][2]))
    files = []
    out.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        text = sources[i % len(sources)].read_text()
        broken = rng.random() < 0.5
        if fmt == "json":
            from trainspec.read.files import parse

            data = parse("x.yaml", text).data
            for _ in range(rng.randint(1, 2) if broken else 0):
                _json_edit(data, rng)
            text = json.dumps(data, indent=2)
        elif broken:
            lines = text.splitlines()
            pattern = _TOML_PAIR if fmt == "toml" else _YAML_PAIR
            candidates = [n for n, line in enumerate(lines) if pattern.match(line)]
            for n in rng.sample(candidates, rng.randint(1, 2)):
                lines[n] = _text_edit(lines[n], fmt, rng)
            text = "\n".join(lines) + "\n"
        path = out / f"{i:05d}.{fmt}"
        path.write_text(text)
        files.append(path)
    return files


ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"} | {
    "TRAINSPEC_NO_CACHE": "1"
}
"""Both tools run as installed ones do, from bytecode (pip compiles it at install): a machine that
turns bytecode caching off would time the compiling of every edited module instead. trainspec's result
cache is off: the untimed run would fill it, and the timed ones would measure reading it back
(`bench/cache.py` measures the cache)."""


def run(cmd: list[str]) -> tuple[float, int]:
    """Wall time and peak resident memory (KiB, the largest process) of one invocation."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    _, _, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - start, usage.ru_maxrss


def commands(fmt: str, files: list[Path]) -> dict[str, list[str]]:
    family, schema, _, sizes = FORMATS[fmt]
    names = [str(f) for f in files]
    trainspec = shutil.which("trainspec") or "trainspec"
    checker = shutil.which("check-jsonschema") or "check-jsonschema"
    world = ["--world-size", ",".join(map(str, sizes))] if sizes else []
    return {
        "trainspec": [trainspec, "check", "--family", family, *world, *names],
        "check-jsonschema": [checker, "--schemafile", str(ROOT / schema), *names],
    }


def alternating(cmds: dict[str, list[str]], rounds: int) -> tuple[dict[str, list[float]], int]:
    """Each command once per round, in turn; the times of each, and trainspec's peak memory."""
    times: dict[str, list[float]] = {name: [] for name in cmds}
    peak = 0
    for cmd in cmds.values():
        run(cmd)  # untimed: writes the bytecode, warms the file cache
    for _ in range(rounds):
        for name, cmd in cmds.items():
            took, rss = run(cmd)
            times[name].append(took)
            if name == "trainspec":
                peak = max(peak, rss)
    return times, peak


def _parse_only(fmt: str) -> Callable[[str], object]:
    if fmt == "toml":
        return tomllib.loads
    if fmt == "json":
        return json.loads
    loader = yaml.CSafeLoader
    return lambda text: yaml.compose(text, Loader=loader)


def in_process(fmt: str, files: list[Path], rounds: int) -> tuple[float, float]:
    """Median seconds of (trainspec's serial check, parsing alone) of `files`, in this process."""
    from trainspec.engine.runner import Options, check_files

    options = Options(family=FORMATS[fmt][0], world_sizes=FORMATS[fmt][3])
    names = [str(f) for f in files]
    parse = _parse_only(fmt)
    check_files(names[:20], options, jobs=1)  # build the validators
    checks, parses = [], []
    for _ in range(rounds):
        start = time.perf_counter()
        check_files(names, options, jobs=1)
        checks.append(time.perf_counter() - start)
        start = time.perf_counter()
        for f in files:
            with contextlib.suppress(ValueError, yaml.YAMLError):  # an edit that broke the syntax
                parse(f.read_text(encoding="utf-8"))
        parses.append(time.perf_counter() - start)
    return statistics.median(checks), statistics.median(parses)


LOAD = """
import sys, time
import trainspec
start = time.perf_counter()
trainspec.load(sys.argv[1], world_size=12)
first = time.perf_counter()
trainspec.load(sys.argv[1], world_size=12)
print(first - start, time.perf_counter() - first)
"""


def loads(example: str, runs: int) -> tuple[float, float]:
    """Median (first, warm) `trainspec.load` of `example` in fresh interpreters, after `import trainspec`."""
    got = [
        tuple(
            map(
                float,
                subprocess.run(
                    [sys.executable, "-c", LOAD, example],
                    capture_output=True,
                    text=True,
                    check=True,
                    env={**ENV, "PYTHONPATH": str(ROOT / "src")},
                ).stdout.split(),
            )
        )
        for _ in range(runs + 1)
    ][1:]  # the first run writes the bytecode
    return statistics.median(g[0] for g in got), statistics.median(g[1] for g in got)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000", help="numbers of files, comma-separated")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--formats", default="toml,yaml,json")
    parser.add_argument("--with-sweep", action="store_true", help="then run bench/sweep.py (--sweep, plans)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    formats = args.formats.split(",")
    print("| format | files | trainspec (s) | check-jsonschema (s) | trainspec faster by | peak memory (MiB) |")
    print("|---|---|---|---|---|---|")
    parsed: dict[str, tuple[int, float, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in formats:
            for count in sizes:
                files = build(Path(tmp) / f"{fmt}-{count}", fmt, count)
                times, peak = alternating(commands(fmt, files), args.rounds)
                ratios = [c / t for t, c in zip(times["trainspec"], times["check-jsonschema"], strict=True)]
                t, c = statistics.median(times["trainspec"]), statistics.median(times["check-jsonschema"])
                spread = f" ({min(ratios):.1f}–{max(ratios):.1f})" if len(ratios) > 1 else ""
                print(
                    f"| {fmt.upper()} | {count:,} | {t:.2f} | {c:.2f} | "
                    f"{statistics.median(ratios):.1f}x{spread} | {peak / 1024:.0f} |",
                    flush=True,
                )
            first = files[: sizes[0]]
            check, parse = in_process(fmt, first, args.rounds)
            parsed[fmt] = (len(first), check, parse)
        one = build(Path(tmp) / "one", "toml", 1)  # three errors, one of them a TOML date
        example = ROOT / "examples" / "kempnerforge_7b_12gpu.toml"  # valid
        cold = {
            name: alternating(commands("toml", [path]), 15)[0]
            for name, path in (("invalid", one[0]), ("valid", example))
        }
    print("\n| in process (serial) | files | check (s) | parse only (s) | check / parse |\n|---|---|---|---|---|")
    for fmt, (count, check, parse) in parsed.items():
        print(f"| {fmt.upper()} | {count:,} | {check:.3f} | {parse:.3f} | {check / parse:.1f}x |")
    first_load, warm_load = loads(str(example), 9)
    tool = shutil.which("trainspec") or "trainspec"
    sweep = {}
    for sizes_arg in ("12", "1..1024"):
        argv = [tool, "check", "--isolated", str(example), "--world-size", sizes_arg]
        said = subprocess.run(argv, capture_output=True, text=True, check=False).stdout.strip().splitlines()[-1]
        if not said.endswith(f"world size{'s' * ('..' in sizes_arg)} {sizes_arg}"):  # checked at what it claims
            raise SystemExit(f"{' '.join(argv)} did not check at world size {sizes_arg}: {said}")
        sweep[sizes_arg] = statistics.median(run(argv)[0] for _ in range(15))
    print("\n| measure | trainspec | other | ratio |\n|---|---|---|---|")
    for name, times in cold.items():
        t, c = statistics.median(times["trainspec"]), statistics.median(times["check-jsonschema"])
        print(f"| cold start, one {name} file (s) | {t:.3f} | check-jsonschema {c:.3f} | {t / c:.2f}x its time |")
    load = "`trainspec.load` without `model=`, first after `import trainspec` (ms; imports pydantic and the model)"
    print(f"| {load} | {first_load * 1e3:.0f} | warm {warm_load * 1e3:.1f} | |")
    one_size, every = sweep["12"], sweep["1..1024"]
    print(f"| `--world-size 1..1024` (s) | {every:.3f} | `--world-size 12` {one_size:.3f} | {every / one_size:.2f}x |")
    if args.with_sweep and (ROOT / "bench" / "sweep.py").exists():
        return subprocess.call([sys.executable, str(ROOT / "bench" / "sweep.py")])
    return 0


if __name__ == "__main__":
    sys.exit(main())
