"""Record what `trainspec check` prints over the benchmark's sets and the corpus, and compare a later run with it.

    python bench/same_output.py record DIR [--sizes 1000] [--formats toml,yaml,json]
    python bench/same_output.py compare DIR

`record` builds the benchmark's configs (`bench/run.py`'s sets, about half with mistakes) under
DIR/sets, copies the corpus there, and writes, for each run below, its exit status, standard output
and standard error to DIR/out. `compare` runs the same commands again (the code may have changed
since; the sets are reused as they are) and names every run whose exit status or bytes differ; exit
status 1 when any does. A change meant to make trainspec faster must leave every recording byte for
byte as it was.

The runs: each set as `bench/run.py` checks it (`--family F`, KempnerForge at `--world-size 8`), in
the text and json formats, with the default `--jobs` and with `--jobs 1`; the corpus (a copy of
`tests/corpus/`, each family at its files' world sizes, project configuration ignored) in every
format. Commands run in DIR/sets with relative file names, so the outputs name neither DIR nor the
checkout. The `trainspec` on PATH runs them; set PYTHONPATH to check a source tree.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run import CORPUS, FORMATS, build  # noqa: E402  (bench/run.py builds the sets)

FORMATS_OUT = ("text", "json")
CORPUS_FORMATS = ("text", "json", "github", "sarif", "junit")


def _corpus_runs(sets: Path) -> dict[str, list[str]]:
    """The corpus files (copied to `sets`) by the options they are checked with: KempnerForge's at the world
    size each file names (4 when none), SpecForge's at the size each states."""
    import re

    runs: dict[str, list[str]] = {}
    for folder in sorted(p for p in (sets / "corpus").iterdir() if p.is_dir()):
        family = folder.name.replace("-", "@")
        for file in sorted(folder.rglob("*.*ml")):
            size = re.search(r"(\d+)gpu", file.name)
            key = f"--family {family}" + (f" --world-size {size[1] if size else 4}" if "kempner" in family else "")
            runs.setdefault(key, []).append(os.path.relpath(file, sets))
    return runs


def commands(sets: Path) -> dict[str, tuple[list[str], Path]]:
    """name -> (argv, working directory) of every recorded run."""
    trainspec = shutil.which("trainspec") or "trainspec"
    found: dict[str, tuple[list[str], Path]] = {}
    for folder in sorted(p for p in sets.iterdir() if p.is_dir() and p.name != "corpus"):
        fmt = folder.name.partition("-")[0]
        family, _, _, sizes = FORMATS[fmt]
        world = ["--world-size", ",".join(map(str, sizes))] if sizes else []
        names = sorted(os.path.join(folder.name, f) for f in os.listdir(folder))
        for out in FORMATS_OUT:
            for jobs in ([], ["--jobs", "1"]):
                name = f"{folder.name}.{out}{'.serial' if jobs else ''}"
                found[name] = ([trainspec, "check", "--family", family, *world, "--format", out, *jobs, *names], sets)
    for n, (options, files) in enumerate(_corpus_runs(sets).items()):
        for out in CORPUS_FORMATS:
            argv = [trainspec, "check", "--isolated", *options.split(), "--format", out, *files]
            found[f"corpus-{n}.{out}"] = (argv, sets)
    return found


def _run(argv: list[str], cwd: Path) -> dict[str, object]:
    # Checking, not replaying: a stored result would make both versions print the same bytes.
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100", "TRAINSPEC_NO_CACHE": "1"}
    done = subprocess.run(argv, cwd=cwd, capture_output=True, env=env, check=False)
    return {"status": done.returncode, "stdout": done.stdout.decode(), "stderr": done.stderr.decode()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=["record", "compare"])
    parser.add_argument("dir", type=Path)
    parser.add_argument("--sizes", default="1000", help="record: numbers of files per format, comma-separated")
    parser.add_argument("--formats", default="toml,yaml,json", help="record: input formats")
    args = parser.parse_args()
    sets, out = args.dir / "sets", args.dir / "out"
    if args.action == "record":
        for fmt in args.formats.split(","):
            for count in map(int, args.sizes.split(",")):
                build(sets / f"{fmt}-{count}", fmt, count)
        shutil.copytree(CORPUS, sets / "corpus", dirs_exist_ok=True)
        out.mkdir(parents=True, exist_ok=True)
    differ = []
    for name, (argv, cwd) in commands(sets).items():
        got = _run(argv, cwd)
        recorded = out / f"{name}.json"
        if args.action == "record":
            recorded.write_text(json.dumps(got))
            print(f"recorded {name}: exit {got['status']}, {len(str(got['stdout']))} characters", flush=True)
        elif not recorded.is_file():
            differ.append(name)
            print(f"{name}: not recorded", flush=True)
        elif json.loads(recorded.read_text()) != got:
            differ.append(name)
            print(f"{name}: DIFFERS", flush=True)
        else:
            print(f"{name}: same", flush=True)
    if args.action == "compare":
        print(f"{len(differ)} of {len(commands(sets))} runs differ" + (f": {', '.join(differ)}" if differ else ""))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
