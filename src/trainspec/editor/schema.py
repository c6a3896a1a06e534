"""The schema editors load for a family, derived from its canonical schema.

The canonical schema (Draft 2020-12) is the validator of record. Editors load
a derived file that keeps every check but is written the way both language
servers read it fully. Measured (tests/test_editor_lsp.py, docs/editors.md):
taplo (TOML) behaves like draft-07 whatever `$schema` says: it ignores
keywords beside a `$ref`, every keyword newer than draft-07, and an `x-taplo`
beside a `$ref`; yaml-language-server reads keywords beside a `$ref` only
because `$schema` says 2020-12, and then completes too few keys in a section
whose `$ref` has siblings and whose definition has `allOf`. So a `$ref` with
siblings becomes `allOf: [{"$ref": ...}]` beside them, and the keywords a
server would silently skip are refused. What validates does not change.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from trainspec.spec.errors import TrainspecError
from trainspec.spec.formats import FORMATS

NEWER_THAN_DRAFT_07 = frozenset(
    {
        "$anchor",
        "$dynamicAnchor",
        "$dynamicRef",
        "$recursiveAnchor",
        "$recursiveRef",
        "$vocabulary",
        "dependentRequired",
        "dependentSchemas",
        "prefixItems",
        "unevaluatedItems",
        "unevaluatedProperties",
        "minContains",
        "maxContains",
    }
)
"""2019-09/2020-12 keywords taplo never enforces (measured for the ones a config schema would use)."""


class NotEditorSafe(TrainspecError, ValueError):
    """The canonical schema uses something an editor's language server would silently ignore."""


def _bare_space_class(pattern: str) -> bool:
    """`\\s` or `\\S` outside a character class: taplo's language server then drops every check of
    the schema (measured with @taplo/lsp 0.8.0); inside a class (`[^\\s,]`) it works."""
    depth = 0
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            if depth == 0 and pattern[i + 1 : i + 2] in ("s", "S"):
                return True
            i += 2
            continue
        if c == "[":
            depth += 1
        elif c == "]" and depth:
            depth -= 1
        i += 1
    return False


def _convert(node: Any, where: str, taplo: bool) -> Any:
    if isinstance(node, list):
        return [_convert(v, f"{where}/{i}", taplo) for i, v in enumerate(node)]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in NEWER_THAN_DRAFT_07:
            raise NotEditorSafe(f"{where}/{key}: taplo ignores {key!r}; write it with draft-07 keywords")
        if taplo and key == "pattern" and isinstance(value, str) and _bare_space_class(value):
            raise NotEditorSafe(
                f"{where}/pattern: taplo's language server drops the whole schema over a bare "
                f"\\s or \\S; write [\\s] or [^\\s] instead"
            )
        out[key] = _convert(value, f"{where}/{key}", taplo)
    if "$ref" in out:
        if taplo and "x-taplo" in out:
            raise NotEditorSafe(
                f"{where}/x-taplo: taplo ignores x-taplo beside a $ref; put it on the referenced definition"
            )
        if len(out) > 1:
            out = {"allOf": [{"$ref": out.pop("$ref")}], **out}
    return out


def editor_schema(
    canonical: dict[str, Any], formats: frozenset[str] | set[str], legacy_keys: dict[str, str] | None = None
) -> dict[str, Any]:
    """The editor form of a canonical schema for files in the named `formats`; raises NotEditorSafe.
    What only taplo drops is refused only when one of the formats is served by taplo.

    Legacy keys (old path -> new path) are offered as deprecated properties
    that name the new place, instead of plain unknown keys.
    """
    taplo = any(fmt in FORMATS and FORMATS[fmt].syntax().LANGUAGE_SERVER == "taplo" for fmt in formats)
    schema = dict(_convert(canonical, "", taplo=taplo))
    for old, new in (legacy_keys or {}).items():
        parent, _, key = old.rpartition(".")
        message = f"Legacy key: it moved to `{new}`; `trainspec migrate FILE` rewrites it."
        _object_at(schema, parent)["properties"][key] = {
            "deprecated": True,
            "deprecationMessage": message,
            "description": message,
            "markdownDescription": message,
        }
    return schema


def _object_at(schema: dict[str, Any], dotted: str) -> dict[str, Any]:
    """The object schema (a `$defs` entry, followed through refs) that holds the keys of `dotted`."""
    node = schema
    for part in [p for p in dotted.split(".") if p]:
        node = _resolve(schema, node)["properties"][part]
    return _resolve(schema, node)


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "properties" not in node:
        ref = node.get("$ref") or next(s["$ref"] for s in node.get("allOf", ()) if "$ref" in s)
        node = schema
        for part in ref.lstrip("#").split("/")[1:]:
            node = node[part]
    return node


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def editor_schema_text(family_name: str) -> str:
    """The editor schema of a registered family, as the file `editors/schemas/` holds."""
    from trainspec.families import get_family

    family = get_family(family_name)
    canonical = copy.deepcopy(family.schema.root)  # with a project overlay's patch applied
    return render(editor_schema(canonical, family.formats, dict(family.legacy_keys)))
