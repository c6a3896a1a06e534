"""Draft a family's next release as a version delta on its base, from the two releases' own classes.

    python tools/draft_version.py axolotl 0.19.0                 # base: the newest version listed
    python tools/draft_version.py axolotl 0.19.0 --base 0.18.0 --site 0.19.0=.oracles/axolotl-0.19.0
    python tools/draft_version.py axolotl 0.19.0 --check         # exit 1 when a drafted file is stale

Two releases of a trainer cannot share one Python environment, so each is read in a subprocess whose
`sys.path` puts the folder holding it first (`--site RELEASE=FOLDER`; by default
`.oracles/<distribution>-<release>` when it exists, else the environment running this tool). There the
release's config classes (the base version's drift file, `tests/data/drift/<family>@<base>.json`, names
them; its `validated_as` the class of the same file the loader validates with, when that is a subclass
of the root adding validators; `plugin_args` a glob of further settings models, such as Axolotl's
plugins') are read twice:

- as a schema, drafted by `tools/draft_schema.py` (the root, and each settings model the drift file
  names under `conditional`, against the curated `$defs` entry of that name); the two drafts are
  compared field by field and every difference becomes an operation on the *curated* schema of the
  base version (a new field comes with the draft's description; a changed type, default, value list
  or bound replaces that keyword only; descriptions of fields both releases have are left as
  curated). A difference whose curated keyword does not read as the base draft has it is not patched
  but listed for a person;
- as an inventory of pydantic validators (field and model validators, and the computed fields they
  read, of every class reachable from the root and of the settings models): qualified name, mode and
  a hash of the source, so the report lists each one new, changed (with its source diff) or removed.

What it writes, in this order (each left alone when it exists, except the first two):

1. `schema/<family>/<release>.patch.json`: `$id` first, then the drafted operations;
2. `docs/releases/<family>@<release>.md`: the report the maintainer reviews;
3. the versions.json entry (`base`, `patch`, `schema`, `changes`) and a `Changes` module with an
   empty delta and the typed-model hook, which the maintainer fills with rules for the validators the
   report lists.

Then run the builders (`build_schema_versions.py`, `generate_models.py`, `build_editor_schemas.py`,
`generate_docs.py`). Nothing here knows a family beyond what its drift file and versions.json say.
"""

from __future__ import annotations

import argparse
import difflib
import glob
import hashlib
import importlib.util
import inspect
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from datetime import date
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ROOT / "tools"
KEYWORDS = (
    "type",
    "enum",
    "const",
    "anyOf",
    "default",
    "deprecated",
    "minimum",
    "exclusiveMinimum",
    "maximum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "pattern",
    "multipleOf",
    "uniqueItems",
    "required",
    "additionalProperties",
)
"""The keywords a draft states and a patch carries over (descriptions of existing fields stay curated)."""


# -- in the release's own environment ---------------------------------------------------------------------


def emit(spec: dict[str, Any]) -> dict[str, Any]:
    """The release's drafted schema and validator inventory (run where the release is first on sys.path)."""
    sys.path.insert(0, str(TOOLS))
    from draft_schema import draft
    from family_drift import load_classes

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    root, _ = load_classes(spec["classes"])
    dist = metadata.distribution(spec["classes"]["distribution"])
    validated = getattr(sys.modules[root.__module__], spec.get("validated_as", root.__name__))
    inventory = validators(reachable(validated), _dotted(spec["classes"]["file"]), root.__module__)
    for path in (
        sorted(glob.glob(str(dist.locate_file(spec.get("plugin_args", ""))))) if spec.get("plugin_args") else ()
    ):
        relative = Path(path).relative_to(Path(str(dist.locate_file(""))))
        name = f"_draft_{'_'.join(relative.with_suffix('').parts)}"
        loaded = importlib.util.spec_from_file_location(name, path)
        assert loaded is not None and loaded.loader is not None
        module = importlib.util.module_from_spec(loaded)
        sys.modules[name] = module
        try:
            loaded.loader.exec_module(module)
        except ImportError as exc:  # a settings file that needs a package not installed here
            inventory[f"{_dotted(str(relative))} (not read)"] = {
                "mode": f"ImportError: {exc}",
                "hash": "",
                "source": "",
            }
            continue
        models = [c for c in vars(module).values() if isinstance(c, type) and c.__module__ == name]
        inventory.update(validators(reachable(*models), _dotted(str(relative)), name))
    conditional = {name: draft(load_classes(classes)[0]) for name, classes in spec.get("conditional", {}).items()}
    return {"release": dist.version, "schema": draft(root), "conditional": conditional, "validators": inventory}


def _dotted(file: str) -> str:
    return str(Path(file).with_suffix("")).replace(os.sep, ".")


def reachable(*roots: type) -> list[type]:
    """Every pydantic model class the roots are built of: their bases and the models their fields nest."""
    from pydantic import BaseModel

    seen: list[type] = []

    def visit(cls: Any) -> None:
        if not (isinstance(cls, type) and issubclass(cls, BaseModel)) or cls is BaseModel or cls in seen:
            return
        seen.append(cls)
        for base in cls.__mro__[1:]:
            visit(base)
        for info in cls.model_fields.values():
            for leaf in _leaves(info.annotation):
                visit(leaf)

    for root in roots:
        visit(root)
    return seen


def _leaves(annotation: Any) -> Iterator[Any]:
    import typing

    args = typing.get_args(annotation)
    if not args:
        yield annotation
    for arg in args:
        yield from _leaves(arg)


def validators(classes: list[type], dotted: str, loaded_as: str) -> dict[str, dict[str, str]]:
    """Each field or model validator and computed field the classes declare: qualified name -> mode, source
    hash and source."""
    found: dict[str, dict[str, str]] = {}
    for cls in classes:
        decorators = cls.__pydantic_decorators__  # type: ignore[attr-defined]
        tables = (
            ("model", decorators.model_validators),
            ("field", decorators.field_validators),
            ("computed", decorators.computed_fields),
        )
        for kind, table in tables:
            for decorator in table.values():
                target: Any = decorator.func.fget if isinstance(decorator.func, property) else decorator.func
                func = inspect.unwrap(getattr(target, "__func__", target))
                module = dotted if func.__module__ == loaded_as else func.__module__
                if module.startswith("_draft_"):
                    module = module[len("_draft_") :].replace("_", ".")
                name = f"{module}.{func.__qualname__}"
                try:
                    source = textwrap.dedent(inspect.getsource(func))
                except (OSError, TypeError):
                    source = ""
                mode = f"{kind} {getattr(decorator.info, 'mode', 'field')}"
                if kind == "field":
                    mode += f" ({', '.join(decorator.info.fields)})"
                digest = hashlib.sha256(source.encode()).hexdigest()[:12]
                found[name] = {"mode": mode, "hash": digest, "source": source}
    return found


# -- the maintainer's side ----------------------------------------------------------------------------------


def read_release(spec: dict[str, Any], release: str, site: Path | None) -> dict[str, Any]:
    """`emit` in a subprocess whose sys.path starts with `site` (None: this environment as it is)."""
    paths = [str(site)] if site else []
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*paths, str(ROOT / "src"), str(TOOLS)])}
    code = "import json, sys; from draft_version import emit; print(json.dumps(emit(json.load(sys.stdin))))"
    done = subprocess.run(
        [sys.executable, "-s", "-c", code], input=json.dumps(spec), capture_output=True, text=True, env=env, check=False
    )
    if done.returncode:
        raise SystemExit(f"reading {spec['classes']['distribution']} {release} failed:\n{done.stderr[-3000:]}")
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if found["release"] != release:
        raise SystemExit(
            f"{site or 'this environment'} holds {spec['classes']['distribution']} {found['release']}, not {release}"
        )
    return found


def schema_ops(old: dict[str, Any], new: dict[str, Any], curated: dict[str, Any], at: str = "") -> tuple[list, list]:
    """The JSON Patch operations on `curated` that carry the old -> new draft difference, and the
    differences left to a person (where the curated keyword is not what the old draft says)."""
    ops: list[dict[str, Any]] = []
    review: list[str] = []
    old_props, new_props = old.get("properties", {}), new.get("properties", {})
    curated_props = curated.get("properties", {})
    for name, node in new_props.items():
        if name not in old_props:
            if name in curated_props:
                review.append(f"{at}/properties/{name}: new in the classes, already in the curated schema")
            else:
                ops.append({"op": "add", "path": f"{at}/properties/{_escape(name)}", "value": node})
    for name in old_props:
        if name not in new_props:
            if name in curated_props:
                ops.append({"op": "remove", "path": f"{at}/properties/{_escape(name)}"})
            else:
                review.append(f"{at}/properties/{name}: removed from the classes, not in the curated schema")
    for name in [n for n in old_props if n in new_props]:
        if name in curated_props and isinstance(curated_props[name], dict):
            more, left = schema_ops(
                old_props[name], new_props[name], curated_props[name], f"{at}/properties/{_escape(name)}"
            )
            ops += more
            review += left
    for key in KEYWORDS:
        before, after = old.get(key), new.get(key)
        if before == after:
            continue
        if curated.get(key) != before:
            review.append(
                f"{at or '/'}: {key} {json.dumps(before)} -> {json.dumps(after)} "
                f"(curated: {json.dumps(curated.get(key))})"
            )
        elif after is None:
            ops.append({"op": "remove", "path": f"{at}/{key}"})
        else:
            ops.append({"op": "replace" if key in curated else "add", "path": f"{at}/{key}", "value": after})
    if (
        isinstance(old.get("items"), dict)
        and isinstance(new.get("items"), dict)
        and isinstance(curated.get("items"), dict)
    ):
        more, left = schema_ops(old["items"], new["items"], curated["items"], f"{at}/items")
        ops += more
        review += left
    return ops, review


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


def inventory_diff(old: dict[str, Any], new: dict[str, Any]) -> dict[str, list[str]]:
    return {
        "new": sorted(new.keys() - old.keys()),
        "changed": sorted(k for k in old.keys() & new.keys() if old[k]["hash"] != new[k]["hash"]),
        "removed": sorted(old.keys() - new.keys()),
    }


def report(family: str, base: str, release: str, ops: list, review: list, diff: dict, old: dict, new: dict) -> str:
    lines = [
        f"# {family}@{release} drafted on {family}@{base}",
        "",
        f"Written by `python tools/draft_version.py {family} {release}` from the two releases' own classes;",
        "reviewed by hand: each validator below is mirrored, replaced or dropped by a rule of the version's",
        "`Changes` (or said not to need one).",
        "",
        f"## Schema: {len(ops)} operations in `schema/{family}/{release}.patch.json` (after `$id`)",
        "",
    ]
    lines += [
        f"- `{op['op']}` `{op['path']}`" + (f": `{json.dumps(op['value'])[:160]}`" if "value" in op else "")
        for op in ops
    ]
    lines += ["", f"## Schema differences left to a person ({len(review)})", ""]
    lines += [f"- {r}" for r in review] or ["none"]
    total = {k: len(v) for k, v in diff.items()}
    lines += ["", f"## Validators: {total['new']} new, {total['changed']} changed, {total['removed']} removed", ""]
    for kind in ("new", "changed", "removed"):
        for name in diff[kind]:
            entry = (new if kind != "removed" else old)[name]
            lines.append(f"### {kind}: `{name}` ({entry['mode']}, {entry['hash'] or 'no source'})")
            lines.append("")
            if kind == "changed":
                changed = difflib.unified_diff(
                    old[name]["source"].splitlines(), new[name]["source"].splitlines(), base, release, lineterm=""
                )
                body = "\n".join(changed)
            else:
                body = entry["source"].rstrip()
            if body:
                lines += ["```diff" if kind == "changed" else "```python", body, "```", ""]
    return "\n".join(lines).rstrip() + "\n"


def module_name(release: str) -> str:
    return "version_" + release.replace(".", "_").replace("-", "_")


def skeleton(family: str, base: str, release: str) -> str:
    model = release.replace(".", "_").replace("-", "_")
    return f'''"""{family}@{release}: what it changes on {family}@{base}, by id (schema/{family}/versions.json).

Drafted by tools/draft_version.py; docs/releases/{family}@{release}.md lists the validators to mirror.
"""

from __future__ import annotations

from trainspec.spec.versions import Changes, Delta

CHANGES = Changes(
    rules=Delta(),
    hooks={{"model": "trainspec.generated.{family}_{model}:{family.capitalize()}Config"}},
)
'''


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("family")
    parser.add_argument("release")
    parser.add_argument("--base", help="the version it builds on (default: the newest listed)")
    parser.add_argument("--site", action="append", default=[], help="RELEASE=FOLDER: where a release is installed")
    parser.add_argument("--released", default=date.today().isoformat(), help="its release date (versions.json)")
    parser.add_argument("--check", action="store_true", help="exit 1 when the patch or the report is stale")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    from trainspec.spec.versions import read_releases

    family_dir = ROOT / "schema" / args.family
    releases = read_releases(family_dir)
    base = args.base or next(r.version for r in reversed(releases) if r.version != args.release)
    spec = json.loads((ROOT / "tests" / "data" / "drift" / f"{args.family}@{base}.json").read_text(encoding="utf-8"))
    sites = dict(s.split("=", 1) for s in args.site)
    distribution = spec["classes"]["distribution"]

    def site(release: str) -> Path | None:
        given = sites.get(release)
        folder = Path(given) if given else ROOT / ".oracles" / f"{distribution}-{release}"
        return folder if folder.is_dir() else None

    old = read_release(spec, base, site(base))
    new = read_release(spec, args.release, site(args.release))
    base_release = next(r for r in releases if r.version == base)
    curated = json.loads((family_dir / base_release.schema).read_text(encoding="utf-8"))
    ops, review = schema_ops(old["schema"], new["schema"], curated)
    for name in spec.get("conditional", {}):
        more, left = schema_ops(
            old["conditional"][name], new["conditional"][name], curated["$defs"][name], f"/$defs/{_escape(name)}"
        )
        ops += more
        review += left
    patch = [{"op": "replace", "path": "/$id", "value": f"urn:trainspec:schema:{args.family}@{args.release}"}, *ops]
    diff = inventory_diff(old["validators"], new["validators"])
    written = {
        family_dir / f"{args.release}.patch.json": json.dumps(patch, indent=2, ensure_ascii=False) + "\n",
        ROOT / "docs" / "releases" / f"{args.family}@{args.release}.md": report(
            args.family, base, args.release, ops, review, diff, old["validators"], new["validators"]
        ),
    }
    stale = [p for p, text in written.items() if not p.is_file() or p.read_text(encoding="utf-8") != text]
    if args.check:
        for path in stale:
            print(f"{path.relative_to(ROOT)} is stale: python tools/draft_version.py {args.family} {args.release}")
        return 1 if stale else 0
    for path in stale:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(written[path], encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    listing = family_dir / "versions.json"
    if args.release not in {r.version for r in releases}:
        entries = json.loads(listing.read_text(encoding="utf-8"))["versions"]
        pkg = f"trainspec.families.{args.family}.{module_name(args.release)}"
        stem = base_release.schema.split("@")[0].removesuffix(".schema.json")
        entries.append(
            {
                "version": args.release,
                "released": args.released,
                "follows": f"{args.family.capitalize()} {args.release} (the PyPI release)",
                "base": base,
                "patch": f"{args.release}.patch.json",
                "schema": f"{stem}@{args.release}.schema.json",
                "changes": f"{pkg}:CHANGES",
            }
        )
        listing.write_text(
            '{\n  "versions": [\n' + ",\n".join(f"    {json.dumps(e)}" for e in entries) + "\n  ]\n}\n",
            encoding="utf-8",
        )
        print(f"wrote {listing.relative_to(ROOT)}")
    module = ROOT / "src" / "trainspec" / "families" / args.family / f"{module_name(args.release)}.py"
    if not module.exists():
        module.write_text(skeleton(args.family, base, args.release), encoding="utf-8")
        print(f"wrote {module.relative_to(ROOT)}")
    total = {k: len(v) for k, v in diff.items()}
    print(f"{len(ops)} schema operations, {len(review)} left to review; validators: {total}")
    print(
        "next: python tools/build_schema_versions.py && python tools/generate_models.py && "
        "python tools/build_editor_schemas.py && python tools/generate_docs.py"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
