"""Axolotl's rewrite of `fsdp_config` keys written with the deprecated `fsdp_` prefix, as a migration.

Before it validates `fsdp_config`, Axolotl's loader strips the prefix from every key that starts
with `fsdp_` (except `fsdp_version`), with a warning, so `fsdp_offload_params: true` is read as
`offload_params: true` and checked as one (`OptimizationValidationMixin.check_fsdp_config_kwargs_prefix`).
Moving the keys before the schema runs lets trainspec check their values where the loader does, and
point at the line the user wrote. Like the loader, it removes every `fsdp_` in such a key, and of two
keys that end up the same the later one wins.

`migrate_fsdp_prefix` is written against mutable mappings, so it serves `trainspec check` (plain
dicts) and `trainspec migrate` (ruamel.yaml's round-trip maps, where a renamed key keeps its place).
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

from trainspec.spec.diagnostics import Diagnostic, Severity
from trainspec.spec.document import Document
from trainspec.spec.family import Notice
from trainspec.spec.paths import Path
from trainspec.spec.wording import show

PREFIX_MIGRATED = "fsdp-config-prefix"
SECTION = "fsdp_config"


def plain_key(key: str) -> str:
    """The key the loader reads `key` as."""
    return key.replace("fsdp_", "")


def is_prefixed(key: Any) -> bool:
    return isinstance(key, str) and key.startswith("fsdp_") and key != "fsdp_version"


def _rename(mapping: MutableMapping[Any, Any], old: str, new: str) -> None:
    """Rename a key in place; a round-trip map keeps its place (and the comments around it)."""
    index = list(mapping).index(old)
    comments = getattr(getattr(mapping, "ca", None), "items", {})  # a round-trip map's comments, by key
    comment = comments.pop(old, None)
    value = mapping.pop(old)
    insert = getattr(mapping, "insert", None)
    if insert is not None:
        insert(index, new, value)
    else:
        mapping[new] = value
    if comment is not None:
        comments[new] = comment
        end_of_line = comment[2] if len(comment) > 2 else None
        if end_of_line is not None and hasattr(end_of_line, "column"):
            end_of_line.column = max(end_of_line.column - (len(old) - len(new)), 0)  # keep the gap before it


def migrate_fsdp_prefix(doc: Document) -> list[Diagnostic]:
    """The family's Migration: strip the prefix in `doc.data` and re-home the moved values' positions."""
    config = doc.data.get(SECTION) if isinstance(doc.data, MutableMapping) else None
    if not isinstance(config, MutableMapping):
        return []
    keys = list(config)
    last = {plain_key(k) if is_prefixed(k) else k: i for i, k in enumerate(keys)}
    out = []
    for key in keys:
        if not is_prefixed(key):
            continue
        new = plain_key(key)
        old_path: Path = (SECTION, key)
        new_path: Path = (SECTION, new)
        message = f"fsdp_config.{key}: the fsdp_ prefix is deprecated (Axolotl strips it)"
        winner = keys[last[new]]
        if winner != key:
            later = f"fsdp_config.{winner} = {show(config[winner])}"
            message += f", and {later}, written later, wins over it; remove fsdp_config.{key}"
            del config[key]
        else:
            if new in config:
                message += f"; it replaces fsdp_config.{new} = {show(config[new])} written before it"
                del config[new]
            message += f"; write fsdp_config.{new}"
            _rename(config, key, new)
            doc.move(old_path, new_path)
        pos = doc.where(old_path) if winner != key else doc.where(new_path)
        out.append(
            Diagnostic(
                doc.file,
                pos.line if pos else None,
                pos.column if pos else None,
                old_path,
                PREFIX_MIGRATED,
                Severity.WARNING,
                message,
            )
        )
    return out


NOTICES = {
    PREFIX_MIGRATED: Notice(
        Severity.WARNING,
        (SECTION,),
        "A key under `fsdp_config` is written with the `fsdp_` prefix, which Axolotl has deprecated.\n\n"
        "Axolotl's loader strips the prefix before it checks the section (`fsdp_offload_params` is read as\n"
        "`offload_params`); trainspec does the same before checking, and says which key it became.\n"
        "`trainspec migrate FILE` rewrites the keys without the prefix.\n\n"
        "Mirrors `OptimizationValidationMixin.check_fsdp_config_kwargs_prefix`.",
    )
}
"""The migration's id, documented for `trainspec rules` and `explain`."""
