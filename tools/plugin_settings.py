"""The settings a trainer's plugins add to its config, found in the installed distribution and drafted.

    python tools/draft_schema.py --plugins axolotl/integrations --distribution axolotl \
        --into schema/axolotl/config.schema.json

A plugin here is a class, in a package under the folder, whose `get_input_args` returns the dotted
path of its settings model as a literal; the loader merges that model into its config when
`plugins:` lists the class. The sources are read as text (a plugin's module may import packages the
machine lacks); only each settings model's own file is run, by path. Each model becomes
`$defs/<Model>`, and one `allOf` entry applies it when `plugins` lists the class under any name the
loader resolves to it: the module that defines it, the package that re-exports it, and both without
the folder's package prefix, which the loader adds when a name does not import as written.

With `--into`, the canonical schema is rewritten in place: every plugin's `$defs` entry and `allOf`
entry are replaced, and a description already written there (curated for people) is kept.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from draft_schema import draft  # beside this script
from family_drift import load_classes


@dataclass(frozen=True)
class Plugin:
    """A plugin class: the names `plugins:` may list it by (the usual one first) and its settings model."""

    names: tuple[str, ...]
    model: str
    model_file: str  # relative to the distribution's root


def discover(distribution: str, folder: str) -> list[Plugin]:
    """Every plugin under `folder` of the installed distribution, by package name."""
    root = Path(str(metadata.distribution(distribution).locate_file("")))
    base = root / folder
    package = folder.strip("/").replace("/", ".")
    found = []
    for sub in sorted(p for p in base.iterdir() if (p / "__init__.py").is_file()):
        modules = {f: ast.parse(f.read_text(encoding="utf-8")) for f in sorted(sub.glob("*.py"))}
        for file, tree in modules.items():
            for cls, target in _plugin_classes(tree):
                module = f"{package}.{sub.name}" + ("" if file.stem == "__init__" else f".{file.stem}")
                homes = [module]
                if file.stem != "__init__" and _reexports(modules[sub / "__init__.py"], cls):
                    homes.insert(0, f"{package}.{sub.name}")
                names = [f"{home}.{cls}" for home in homes]
                names += [name.removeprefix(f"{package}.") for name in names]
                model = target.rsplit(".", 1)[1]
                model_file = next(f for f, t in modules.items() if _defines(t, model))
                found.append(Plugin(tuple(names), model, model_file.relative_to(root).as_posix()))
    return found


def _plugin_classes(tree: ast.Module) -> list[tuple[str, str]]:
    """(class, settings model path) of each class whose `get_input_args` returns a literal path."""
    out = []
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        for item in node.body:
            if isinstance(item, ast.FunctionDef) and item.name == "get_input_args":
                for ret in ast.walk(item):
                    value = ret.value if isinstance(ret, ast.Return) else None
                    if isinstance(value, ast.Constant) and isinstance(value.value, str):
                        out.append((node.name, value.value))
    return out


def _reexports(tree: ast.Module, name: str) -> bool:
    return any(
        isinstance(n, ast.ImportFrom) and any((a.asname or a.name) == name for a in n.names) for n in tree.body
    ) or _defines(tree, name)


def _defines(tree: ast.Module, name: str) -> bool:
    return any(isinstance(n, ast.ClassDef) and n.name == name for n in tree.body)


def settings_schema(distribution: str, plugin: Plugin) -> dict[str, Any]:
    """The drafted object schema of a plugin's settings model (no `$schema`, no title)."""
    model, _ = load_classes({"distribution": distribution, "file": plugin.model_file, "class": plugin.model})
    node = draft(model)
    for key in ("$schema", "title"):
        node.pop(key, None)
    return node


def condition(plugin: Plugin, ref: str) -> dict[str, Any]:
    """The `allOf` entry that applies `ref` when `plugins` lists the plugin by one of its names."""
    listed = {"type": "array", "contains": {"enum": list(plugin.names)}}
    return {"if": {"required": ["plugins"], "properties": {"plugins": listed}}, "then": {"$ref": ref}}


def merge(schema: dict[str, Any], drafted: dict[str, dict[str, Any]], plugins: list[Plugin]) -> dict[str, Any]:
    """`schema` with each plugin's definition and condition replaced, descriptions already written kept."""
    defs = dict(schema.get("$defs", {}))
    refs = {f"#/$defs/{p.model}" for p in plugins}
    kept = [e for e in schema.get("allOf", ()) if e.get("then", {}).get("$ref") not in refs]
    for plugin in plugins:
        defs[plugin.model] = _keep_descriptions(drafted[plugin.model], defs.get(plugin.model, {}))
    out = {k: v for k, v in schema.items() if k not in ("allOf", "$defs")}
    out["allOf"] = kept + [condition(p, f"#/$defs/{p.model}") for p in plugins]
    out["$defs"] = defs
    return out


def _keep_descriptions(new: Any, old: Any) -> Any:
    if not isinstance(new, dict) or not isinstance(old, dict):
        return new
    out = {k: _keep_descriptions(v, old.get(k)) for k, v in new.items()}
    if "description" in old:
        out["description"] = old["description"]
    if isinstance(new.get("properties"), dict):
        out["properties"] = {
            name: _keep_descriptions(spec, old.get("properties", {}).get(name))
            for name, spec in new["properties"].items()
        }
    return out


def run(distribution: str, folder: str, into: Path | None) -> str:
    """The plugins' definitions and conditions as JSON, or the schema `into` rewritten (its new text)."""
    plugins = discover(distribution, folder)
    drafted = {p.model: settings_schema(distribution, p) for p in plugins}
    if into is None:
        fragment = {"allOf": [condition(p, f"#/$defs/{p.model}") for p in plugins], "$defs": drafted}
        return json.dumps(fragment, indent=2, ensure_ascii=False) + "\n"
    schema = json.loads(into.read_text(encoding="utf-8"))
    text = json.dumps(merge(schema, drafted, plugins), indent=2, ensure_ascii=False) + "\n"
    into.write_text(text, encoding="utf-8")
    return text
