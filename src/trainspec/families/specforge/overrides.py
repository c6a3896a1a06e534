"""SpecForge's own dotted overrides, as its loader applies them (reference §6.1).

They edit the loaded config (every default filled, the role resolved), key by
key: every step but the last must be a mapping, the last key must exist, there
are no list indices, and the value is kept as text unless the current value is
a list or mapping and the text starts with `[` or `{` (then it is read as YAML).
The final validation converts text as pydantic does (`"7"` -> 7). trainspec's
`--set` is kinder (null, lists on null fields, paths into null sections); this
says where SpecForge itself would refuse the launch.
"""

from __future__ import annotations

from typing import Any

from trainspec.spec.dialect import pydantic_lax
from trainspec.spec.overrides import Override
from trainspec.spec.paths import Path


def apply_overrides(family: Any, config: dict[str, Any], overrides: Any) -> tuple[dict[str, Any] | None, list[Any]]:
    """(the config SpecForge ends with, [(override, why SpecForge refuses it)])."""
    refused: list[tuple[Override, str]] = []
    for override in overrides:
        if override.python:
            continue  # KempnerForge's form: not SpecForge's command line
        path_text, eq, value = override.text.partition("=")
        if not eq:
            continue  # trainspec reports it already
        why = _apply(family, config, tuple(path_text.split(".")), value)
        if why:
            refused.append((override, f"`{path_text}`: {why}"))
    return config, refused


def _apply(family: Any, config: dict[str, Any], path: Path, value: str) -> str:
    node: Any = config
    for n, part in enumerate(path[:-1]):
        node = node.get(part) if isinstance(node, dict) else None
        if not isinstance(node, dict):
            where = ".".join(map(str, path[: n + 1]))
            return f"SpecForge's overrides cannot reach it: `{where}` is not a section of the loaded config (null?)"
    key = path[-1]
    if not isinstance(node, dict) or key not in node:
        return "SpecForge's overrides need a key the loaded config has (and take no [N] list indices)"
    current = node[key]
    if isinstance(current, (list, dict)) and value.lstrip()[:1] in ("[", "{"):
        import yaml  # here, not at the top: a KempnerForge check would import it for nothing

        try:
            node[key] = yaml.safe_load(value)
        except yaml.YAMLError as exc:
            return f"SpecForge cannot read the value as YAML ({exc.__class__.__name__})"
        return ""
    if value.strip() in NULL_SPELLINGS:
        why = _null_refused(family, config, path, value.strip())
        if why:
            return why
    node[key] = _as_validation_converts(family, config, path, value)
    return ""


NULL_SPELLINGS = frozenset({"null", "Null", "NULL", "~"})
"""YAML's spellings of null, which `--set` reads as null; SpecForge's overrides keep each as text (§6.2)."""


def _null_refused(family: Any, config: dict[str, Any], path: Path, text: str) -> str:
    """Why `text` meant as null fails a field that takes null but not that text: SpecForge never reads null."""
    field = family.schema.node_at(path, config)
    types = frozenset(family.schema.types(field)) if field is not None else frozenset()
    if "null" not in types or pydantic_lax(types, text)[0]:
        return ""
    return (
        f'SpecForge keeps an override\'s value as text, so `{text}` is the string "{text}", not null, and the field '
        f"refuses it; SpecForge's overrides cannot set null: write `{path[-1]}: null` in the file instead"
    )


def _as_validation_converts(family: Any, config: dict[str, Any], path: Path, text: str) -> Any:
    """The text as SpecForge's (lax) validation converts it for the field's type, else the text."""
    field = family.schema.node_at(path, config)
    if field is None:
        return text
    accepted, converted = pydantic_lax(frozenset(family.schema.types(field)), text)
    return converted if accepted else text
