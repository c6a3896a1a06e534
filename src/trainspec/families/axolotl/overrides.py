"""Axolotl's own overrides, as `axolotl.cli.config.load_cfg(config, **overrides)` applies them.

They edit the file as read, before any validation: `key=value` sets a top-level key,
`parent.child=value` (the command line's `--parent.child`, `parent__child` as a keyword) one key of
a section, which becomes a mapping when it was null or not one. Nothing deeper, and no list
index, is reachable. With `strict: true` in the file, an override of a key the file does not
set is ignored. A value is text converted by `_coerce_value`: to the type of the value it
replaces (bool, int, float; anything else stays text), else read as `true`/`yes`, `false`/`no`,
`null`/`none`/`~`, an int, a float or text. trainspec's `--set` reads values as YAML and by the
field's type; where Axolotl ends with something it refuses, or ignores the override, that is an
error (`override-refused-by-loader`).
"""

from __future__ import annotations

from typing import Any

from trainspec.spec.overrides import Override
from trainspec.spec.paths import parse_path


def apply_overrides(family: Any, config: dict[str, Any], overrides: Any) -> tuple[dict[str, Any] | None, list[Any]]:
    """(the config Axolotl validates, [(override, why Axolotl does not apply it)])."""
    refused: list[tuple[Override, str]] = []
    strict = bool(config.get("strict"))
    written = set(config)
    for override in overrides:
        if override.python:
            continue  # KempnerForge's `--PATH=VALUE` form, not a `--set`
        path_text, eq, value = override.text.partition("=")
        if not eq:
            continue  # trainspec reports it already
        why = _apply(config, path_text, value, strict, written)
        if why:
            refused.append((override, f"`{path_text}`: {why}"))
    return config, refused


def _apply(config: dict[str, Any], path_text: str, value: str, strict: bool, written: set[str]) -> str:
    try:
        path = parse_path(path_text)
    except ValueError:
        return ""  # trainspec reports it already
    if len(path) > 2 or not all(isinstance(part, str) for part in path):
        return "Axolotl's overrides set a top-level key or one key of a section (`parent.child`), nothing deeper"
    top = str(path[0])
    if strict and top not in written:
        return f"with `strict: true` in the file, Axolotl ignores an override of `{top}`, which the file does not set"
    if len(path) == 1:
        config[top] = coerce(value, config.get(top))
        return ""
    if not isinstance(config.get(top), dict):
        config[top] = {}  # Axolotl replaces a null or non-mapping section (and warns about the latter)
    child = str(path[1])
    config[top][child] = coerce(value, config[top].get(child))
    return ""


def coerce(text: str, current: Any) -> Any:
    """The value Axolotl makes of an override's text, given the value it replaces (None: none)."""
    if current is not None:
        if isinstance(current, bool):
            return text.lower() in ("true", "1", "yes")
        for kind in (int, float):
            if isinstance(current, kind):
                try:
                    return kind(text)
                except ValueError:
                    return text
        return text
    lower = text.lower()
    if lower in ("true", "yes"):
        return True
    if lower in ("false", "no"):
        return False
    if lower in ("null", "none", "~"):
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text
