"""A first JSON Schema for a new family, drafted from the trainer's own config classes.

    python tools/draft_schema.py my_trainer.config:TrainConfig > draft.schema.json
    python tools/draft_schema.py --distribution my-trainer --file my_trainer/config.py TrainConfig
    python tools/draft_schema.py --distribution axolotl --plugins axolotl/integrations \
        --into schema/axolotl/config.schema.json

The classes are read the way `tools/family_drift.py` reads them (pydantic models
and dataclasses, as declared, never instantiated), and its table of field rows
is turned back into a nested Draft 2020-12 schema: each field's JSON types,
default, allowed values, constraints and description (pydantic's
`Field(description=...)` or `json_schema_extra={"description": ...}`, after the reason a
`Field(deprecated=...)` gives, with `deprecated: true`), the
required fields of each object, and `additionalProperties: false` only where the
class refuses unknown keys. The draft is where curation starts (titles and
descriptions for people, editor annotations), and the drift tool then keeps the
curated schema and the classes together. Nothing here knows a family.

With `--plugins FOLDER`, the settings models of the plugins under that folder of the
distribution are drafted instead, each applied only when `plugins:` lists its plugin
(`plugin_settings.py`); `--into` rewrites them in a canonical schema, curated
descriptions kept.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

from family_drift import CONSTRAINTS, Row, _closed, class_rows, load_classes  # beside this script

DIALECT = "https://json-schema.org/draft/2020-12/schema"


def draft(root: type, title: str = "") -> dict[str, Any]:
    """The schema of `root` (a pydantic model or a dataclass) and every class it nests."""
    rows = class_rows(root)
    schema: dict[str, Any] = {"$schema": DIALECT, "title": title or root.__name__}
    if root.__doc__ and root.__doc__.strip():
        schema["description"] = " ".join(root.__doc__.split())
    schema.update(_object(rows, "", closed=_closed(root)))
    return schema


def _children(rows: dict[str, Row], path: str) -> list[str]:
    """The names of the fields directly under `path`, in the order the classes declare them."""
    prefix = f"{path}." if path else ""
    return [p[len(prefix) :] for p in rows if p.startswith(prefix) and "." not in p[len(prefix) :].replace("[]", "")]


def _object(rows: dict[str, Row], path: str, *, closed: bool) -> dict[str, Any]:
    names = [n for n in _children(rows, path) if not n.endswith("[]")]
    node: dict[str, Any] = {"type": "object", "properties": {}}
    for name in names:
        here = f"{path}.{name}" if path else name
        node["properties"][name] = _field(rows, here)
    required = [n for n in names if rows[f"{path}.{n}" if path else n].get("required")]
    if required:
        node["required"] = required
    if closed:
        node["additionalProperties"] = False
    return node


def _field(rows: dict[str, Row], path: str) -> dict[str, Any]:
    row = rows[path]
    node: dict[str, Any] = {}
    said = " ".join(row[k].strip() for k in ("deprecated", "description") if row.get(k))
    if said:
        node["description"] = said
    if row.get("deprecated"):
        node["deprecated"] = True
    kinds = row.get("type", [])
    if kinds:
        node["type"] = kinds[0] if len(kinds) == 1 else kinds
    if "branches" in row:  # a union whose members allow different values: one branch each
        node["anyOf"] = [_branch(b) for b in row["branches"]] + ([{"type": "null"}] if "null" in kinds else [])
    else:
        node.update({k: row[k] for k in ("enum", *CONSTRAINTS) if k in row})
    if "default" in row and not row.get("required"):
        node["default"] = row["default"]
    if "object" in kinds and _children(rows, path):
        section = _object(rows, path, closed=bool(row.get("closed")))
        node["properties"] = section["properties"]
        node.update({k: section[k] for k in ("required", "additionalProperties") if k in section})
    if "array" in kinds and f"{path}[]" in rows:
        node["items"] = _field(rows, f"{path}[]")
    return node


def _branch(branch: Row) -> dict[str, Any]:
    """One member of a union: its values when it lists them, else its type, with its constraints."""
    kinds = branch["type"]
    node: dict[str, Any] = {"enum": branch["enum"]} if "enum" in branch else {}
    if "enum" not in branch and kinds:
        node["type"] = kinds[0] if len(kinds) == 1 else kinds
    node.update({k: branch[k] for k in CONSTRAINTS if k in branch})
    return node


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("target", nargs="?", help="module:Class, or the class name with --distribution and --file")
    parser.add_argument("--distribution", help="read the class from a file inside this installed distribution")
    parser.add_argument("--file", help="the file, relative to the distribution's root (with --distribution)")
    parser.add_argument("--title", default="", help="the schema's title (default: the class name)")
    parser.add_argument("--plugins", help="draft the plugins' settings under this folder of --distribution")
    parser.add_argument("--into", type=Path, help="with --plugins: the canonical schema to rewrite in place")
    args = parser.parse_args()
    if args.plugins:
        if not args.distribution:
            parser.error("--plugins needs --distribution")
        from plugin_settings import run  # beside this script

        text = run(args.distribution, args.plugins, args.into)
        sys.stdout.write(f"wrote {args.into}\n" if args.into else text)
        return 0
    if not args.target:
        parser.error("a target class is needed")
    if args.distribution:
        spec = {"distribution": args.distribution, "file": args.file, "class": args.target}
    else:
        module, _, name = args.target.partition(":")
        if importlib.util.find_spec(module) is None:
            parser.error(f"cannot import {module!r}")
        spec = {"module": module, "class": name}
    root, _ = load_classes(spec)
    json.dump(draft(root, args.title), sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
