"""Regenerate the typed models in generated/ from the canonical schemas in schema/.

    python tools/generate_models.py          # rewrite generated/
    python tools/generate_models.py --check  # fail (exit 1) when generated/ is stale
    python tools/generate_models.py --schema my.schema.json --class-name MyConfig --output my_models.py
                                             # the same options, for a family of your own

The option set is fixed here so every run, on every machine, writes the same
files. Nobody edits generated/ by hand; change the schema and rerun this. A
model refuses unknown keys exactly where its schema does (`additionalProperties:
false`); elsewhere it ignores them, as pydantic does by default.

One thing the generator gets wrong is corrected here, so that the models
refuse what the schema refuses (tests/test_schema_model_agreement.py): an
integer `const` is handed to the generator as equal bounds (`for_generator`).
A key that may be left out, has no default and does not admit null (a
KempnerForge `[vlm]`) is typed `X | None = None` by the generator, so its model
takes null as the key left out: that is what the trainer holds for an absent
section, what a model dumps for it, and how `check_config` and `--set` read it
(`Schema.null_is_absent`).
"""

from __future__ import annotations

import argparse
import difflib
import importlib.util
import json
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path
from typing import Any

from trainspec.spec.versions import read_releases

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_DIR = ROOT / "schema"
OUT_DIR = ROOT / "generated"

# family directory -> (schema file, root class name)
MODELS = {
    "kempnerforge": ("job.schema.json", "JobConfig"),
    "specforge": ("run.schema.json", "RunConfig"),
    "axolotl": ("config.schema.json", "AxolotlConfig"),
}

OPTIONS = [
    "--input-file-type",
    "jsonschema",
    "--output-model-type",
    "pydantic_v2.BaseModel",
    "--target-python-version",
    "3.11",
    "--strict-nullable",
    "--strict-types",
    "str",
    "int",
    "float",
    "bool",
    "--use-annotated",
    "--use-type-alias",
    "--field-constraints",
    # Not --use-default: it keeps a default on a key that a branch of `anyOf` requires, so the
    # branch no longer requires it (a `data.datasets` entry with neither path nor hf_name passed).
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


def generator_requirement() -> str:
    """The generator pinned by trainspec's [test] extra: another version writes other code."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    return next(r for r in extras["test"] if r.startswith("datamodel-code-generator"))


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


NOT_SCHEMAS = frozenset({"default", "examples", "const", "enum"})
"""Keywords whose values are data, not subschemas."""


def for_generator(node: Any) -> Any:
    """The schema as the generator reads it: an integer `const` (under `"type": "integer"`) becomes equal bounds,
    and a mapping whose keys the schema checks by pattern is left to the schema.

    The generator writes a `const` as `Literal[...]`, and pydantic matches a Literal
    by value, even in strict mode: `Literal[-1]` takes -1.0, which the integer type
    refuses. Equal bounds become `StrictInt` with `ge` and `le`, which refuses it.
    """
    if isinstance(node, list):
        return [for_generator(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: value if key in NOT_SCHEMAS else for_generator(value) for key, value in node.items()}
    if "patternProperties" in node:
        # keys the schema checks by pattern (`max_memory`'s GPU numbers): the generator would drop the null the
        # node admits and type YAML's integer keys as text, so the model takes the mapping as it is
        del node["patternProperties"]
        if node.get("additionalProperties") is False:
            del node["additionalProperties"]
    if node.get("type") == "integer":
        for member in [node, *node.get("oneOf", ()), *node.get("anyOf", ())]:
            value = member.get("const")
            if isinstance(value, int) and not isinstance(value, bool):
                del member["const"]
                member["minimum"] = member["maximum"] = value
    return node


def build(source: Path, class_name: str, tmp: str) -> str:
    """The model module for the schema at `source`."""
    schema = json.loads(source.read_text(encoding="utf-8"))
    prepared = Path(tmp) / source.name
    prepared.write_text(json.dumps(for_generator(schema)), encoding="utf-8")
    target = Path(tmp) / "models.py"
    run_generator(prepared, target, class_name, tmp)
    return target.read_text()


def generate() -> dict[str, str]:
    """File name -> text of every generated module.

    The generator runs in a scratch directory so that no project setting
    (such as a formatter's line length found in a pyproject.toml) can change
    its output between runs.
    """
    with tempfile.TemporaryDirectory() as tmp:
        return {
            module: build(SCHEMA_DIR / family / schema_file, class_name, tmp)
            for family, (schema_file, class_name) in MODELS.items()
            for module, schema_file in modules(family, schema_file).items()
        }


def modules(family: str, base_schema: str) -> dict[str, str]:
    """Module file -> schema file: `<family>.py` from the base schema, `<family>_<version>.py` for each later
    version in the family's versions.json (see tools/build_schema_versions.py; a release name's dots become
    underscores: `specforge_0_2_0.py`)."""
    later = read_releases(SCHEMA_DIR / family)[1:]
    return {f"{family}.py": base_schema} | {f"{family}_{r.version.replace('.', '_')}.py": r.schema for r in later}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare instead of writing; exit 1 on drift")
    parser.add_argument("--schema", type=Path, help="generate models for this schema instead of schema/")
    parser.add_argument("--class-name", default="Config", help="root model name (with --schema)")
    parser.add_argument("--output", type=Path, help="output module (with --schema)")
    args = parser.parse_args()
    if importlib.util.find_spec("datamodel_code_generator") is None:
        wanted = generator_requirement()
        print(f"{parser.prog}: needs {wanted}: pip install '{wanted}'", file=sys.stderr)
        return 2
    if args.schema:
        if not args.output:
            parser.error("--schema needs --output")
        with tempfile.TemporaryDirectory() as tmp:
            args.output.write_text(build(args.schema.resolve(), args.class_name, tmp))
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
