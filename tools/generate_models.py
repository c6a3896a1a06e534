"""Regenerate the typed models in generated/ from the canonical schemas in schema/.

    python tools/generate_models.py          # rewrite generated/
    python tools/generate_models.py --check  # fail (exit 1) when generated/ is stale
    python tools/generate_models.py --schema my.schema.json --class-name MyConfig --output my_models.py
                                             # the same options, for a family of your own

The option set is fixed here so every run, on every machine, writes the same
files. Nobody edits generated/ by hand; change the schema and rerun this.
"""

from __future__ import annotations

import argparse
import difflib
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_DIR = ROOT / "schema"
OUT_DIR = ROOT / "generated"

# family directory -> (schema file, root class name)
MODELS = {
    "kempnerforge": ("job.schema.json", "JobConfig"),
    "specforge": ("run.schema.json", "RunConfig"),
}

OPTIONS = [
    "--input-file-type",
    "jsonschema",
    "--output-model-type",
    "pydantic_v2.BaseModel",
    "--target-python-version",
    "3.11",
    "--extra-fields",
    "forbid",
    "--strict-nullable",
    "--strict-types",
    "str",
    "int",
    "float",
    "bool",
    "--use-annotated",
    "--use-type-alias",
    "--field-constraints",
    "--use-default",
    "--use-schema-description",
    "--use-field-description",
    "--use-double-quotes",
    "--set-default-enum-member",
    "--enum-field-as-literal",
    "all",
    "--disable-timestamp",
    "--formatters",
    "builtin",
]


def run_generator(source: Path, target: Path, class_name: str, cwd: str) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "datamodel_code_generator",
            "--input",
            str(source),
            "--output",
            str(target),
            "--class-name",
            class_name,
            *OPTIONS,
        ],
        check=True,
        cwd=cwd,
    )


def generate() -> dict[str, str]:
    """File name -> text of every generated module.

    The generator runs in a scratch directory so that no project setting
    (such as a formatter's line length found in a pyproject.toml) can change
    its output between runs.
    """
    files: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for family, (schema_file, class_name) in MODELS.items():
            source = SCHEMA_DIR / family / schema_file
            target = Path(tmp) / f"{family}.py"
            run_generator(source, target, class_name, tmp)
            files[target.name] = target.read_text()
    return files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare instead of writing; exit 1 on drift")
    parser.add_argument("--schema", type=Path, help="generate models for this schema instead of schema/")
    parser.add_argument("--class-name", default="Config", help="root model name (with --schema)")
    parser.add_argument("--output", type=Path, help="output module (with --schema)")
    args = parser.parse_args()
    if args.schema:
        if not args.output:
            parser.error("--schema needs --output")
        with tempfile.TemporaryDirectory() as tmp:
            run_generator(args.schema.resolve(), args.output.resolve(), args.class_name, tmp)
        return 0
    fresh = generate()
    if not args.check:
        OUT_DIR.mkdir(exist_ok=True)
        for name, text in fresh.items():
            (OUT_DIR / name).write_text(text)
            print(f"wrote generated/{name}")
        return 0
    current = {p.name: p.read_text() for p in OUT_DIR.glob("*.py")}
    stale = False
    for name in sorted(set(fresh) | set(current)):
        if fresh.get(name) != current.get(name):
            stale = True
            diff = difflib.unified_diff(
                (current.get(name) or "").splitlines(keepends=True),
                (fresh.get(name) or "").splitlines(keepends=True),
                f"generated/{name} (in the tree)",
                f"generated/{name} (from schema/)",
                n=1,
            )
            sys.stdout.writelines(list(diff)[:40])
    if stale:
        print("generated/ is stale: run `python tools/generate_models.py` and commit the result", file=sys.stderr)
        return 1
    print("generated/ is up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
