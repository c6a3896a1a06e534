"""Build each family version's complete canonical schema from the base schema and the version patches.

    python tools/build_schema_versions.py          # write schema/<family>/<file>@<version>.schema.json
    python tools/build_schema_versions.py --check  # fail (exit 1) when one is stale

A family with versions keeps `schema/<family>/versions.json` (read through
`trainspec.spec.versions`, as the run time reads it): its versions, oldest first.
The first names the hand-written base schema; every later one names its base
version, a JSON Patch (RFC 6902, applied with the `jsonpatch` library) against
that base, and the complete schema this tool writes from them. Each version is thus a whole,
self-contained schema (editors and the validator read it as it is), while
what changed between two versions is written once, in the patch. Nobody edits
a built version by hand; change the base or a patch and rerun this.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import jsonpatch

from trainspec.spec.versions import VersionError, read_releases

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_DIR = ROOT / "schema"


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def build(schema_dir: Path = SCHEMA_DIR) -> dict[Path, str]:
    """Every built schema file, by path, with its text."""
    out: dict[Path, str] = {}
    for family_dir in sorted(p for p in schema_dir.iterdir() if p.is_dir()):
        releases = read_releases(family_dir)
        if not releases:
            continue
        schemas = {releases[0].version: json.loads((family_dir / releases[0].schema).read_text(encoding="utf-8"))}
        for release in releases[1:]:
            patch = json.loads((family_dir / release.patch).read_text(encoding="utf-8"))
            schemas[release.version] = jsonpatch.apply_patch(schemas[release.base], patch)
            out[family_dir / release.schema] = render(schemas[release.version])
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare instead of writing; exit 1 on drift")
    args = parser.parse_args()
    try:
        built = build()
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
        print(f"a version patch does not apply: {exc}", file=sys.stderr)
        return 1
    except VersionError as exc:
        print(exc, file=sys.stderr)
        return 1
    stale = [p for p, text in built.items() if not p.is_file() or p.read_text(encoding="utf-8") != text]
    if args.check:
        for path in stale:
            print(f"{path.relative_to(ROOT)} is stale", file=sys.stderr)
        if stale:
            print("run: python tools/build_schema_versions.py", file=sys.stderr)
            return 1
        print(f"schema versions are up to date ({len(built)} built)")
        return 0
    for path in stale:
        path.write_text(built[path], encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
