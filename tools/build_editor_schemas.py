"""Build the schemas editors load, and their catalog, from the canonical schemas in schema/.

    python tools/build_editor_schemas.py          # rewrite editors/schemas/ and editors/catalog.json
    python tools/build_editor_schemas.py --check  # fail (exit 1) when they are stale
    python tools/build_editor_schemas.py --base-url https://host/path/ --out DIR
                                                  # a catalog with absolute URLs, for publishing

One file per family, `editors/schemas/<family>.schema.json`: the draft-07 form
of the canonical schema that taplo and yaml-language-server both read fully
(see trainspec.editor.schema). The catalog is in SchemaStore's format;
its URLs are relative to the catalog unless --base-url is given.
Nobody edits editors/schemas/ or the catalog by hand; change schema/ and rerun this.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_DIR = ROOT / "schema"
OUT_DIR = ROOT / "editors"
CATALOG_SCHEMA = "https://json.schemastore.org/schema-catalog.json"


def build(base_url: str) -> dict[str, str]:
    """Every file this tool owns, relative to editors/, with its text.

    Each family version gets `schemas/<family>@<version>.schema.json`; `schemas/<family>.schema.json`
    is its newest version (what the plain family name means, and what the catalog lists).
    """
    from trainspec.editor.schema import editor_schema, render
    from trainspec.editor.workspace import default_globs
    from trainspec.families import every_version, stem
    from trainspec.spec.resources import schema_dir

    files: dict[str, str] = {}
    entries = []
    builtin = [f for f in every_version().values() if str(f.schema_file).startswith(str(schema_dir()))]
    for family in sorted(builtin, key=lambda f: f.id):
        canonical = json.loads(family.schema_file.read_text(encoding="utf-8"))
        text = render(editor_schema(canonical, family.formats, dict(family.legacy_keys)))
        if family.version:
            files[f"schemas/{family.id}.schema.json"] = text
        if stem(family) == family.name:  # the newest version
            name = f"schemas/{family.name}.schema.json"
            files[name] = text
            entries.append(
                {
                    "name": canonical["title"],
                    "description": family.description or canonical["description"],
                    "fileMatch": default_globs(family),
                    "url": base_url + name,
                }
            )
    files["catalog.json"] = render({"$schema": CATALOG_SCHEMA, "version": 1, "schemas": entries})
    return files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare instead of writing; exit 1 on drift")
    parser.add_argument("--base-url", default="./", help="prefix of the catalog's schema URLs (default: ./)")
    parser.add_argument("--out", type=Path, default=OUT_DIR, help="output directory (default: editors/)")
    args = parser.parse_args()
    files = build(args.base_url)
    if args.check:
        stale = [
            name
            for name, text in files.items()
            if not (args.out / name).exists() or (args.out / name).read_text(encoding="utf-8") != text
        ]
        for name in stale:
            print(f"stale: {(args.out / name).as_posix()}", file=sys.stderr)
        if stale:
            print("run: python tools/build_editor_schemas.py", file=sys.stderr)
            return 1
        print("editors/ is up to date")
        return 0
    for name, text in files.items():
        path = args.out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
