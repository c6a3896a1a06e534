"""Completion of keys and of allowed values, with their documentation, from the family's schema.

The place is read from the text around the cursor by the buffer's format (`formats.Syntax.place`:
the TOML table header above it, the YAML keys its indentation nests it in, the JSON objects open
before it), because a buffer being typed into often does not parse; the format also writes the keys
and values offered. The schema branch of a union is chosen by the last config of the buffer that did.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterator
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from trainspec.editor.lsp.text import Source
from trainspec.spec.family import Family
from trainspec.spec.formats import FORMATS
from trainspec.spec.paths import Path
from trainspec.spec.schema import Node, get, named_types

if TYPE_CHECKING:
    from trainspec.spec.formats import Syntax


def complete(
    family: Family,
    source: Source,
    fmt: str,
    line: int,
    column: int,
    config: Any,
    written: Collection[Path] = frozenset(),
    snippets: bool = False,
) -> list[lsp.CompletionItem]:
    """Items for the 0-based code-point position in a buffer of the format named `fmt`; `config` picks union
    branches (may be None), and keys whose paths are `written` are not offered again. With `snippets` (the
    client takes them), a key is inserted with its default as a placeholder to accept or type over, as taplo
    does."""
    syntax = _syntax(fmt)
    found = syntax.place(source.lines, line, column)
    if found is None:
        return []
    kind, path, typed = found
    if kind == "value":
        items = list(_values(family, path, config, fmt))
    else:
        items = [i for i in _keys(family, path, config, fmt, kind, snippets) if (*path, i.label) not in written]
    start = source.position(line, column - len(typed))
    end = source.position(line, column)
    space = syntax.value_lead(source.line(line)[:column]) if kind == "value" else ""  # `key:` just typed
    for item in items:
        text = space + (item.insert_text or item.label)
        item.text_edit = lsp.TextEdit(range=lsp.Range(start=start, end=end), new_text=text)
        # what is typed is matched against what is inserted (`"se` against `"seq_len"`), placeholder aside
        item.filter_text = item.filter_text or text
        item.insert_text = None
    return items


def _node(family: Family, path: Path, config: Any) -> Node | None:
    return family.schema.node_at(path, config if isinstance(config, dict) else {})


def _keys(family: Family, path: Path, config: Any, fmt: str, kind: str, snippets: bool) -> Iterator[lsp.CompletionItem]:
    schema = family.schema
    node = _node(family, path, config)
    if node is None:
        return
    instance = get(config, path) if isinstance(config, dict) else None
    props = schema.properties(node, instance) or schema.properties(node, instance, every=True)
    unmet = _unmet_conditions(family, node, instance)
    props = {name: spec for name, spec in props.items() if name not in unmet}
    for n, (name, spec) in enumerate(props.items()):
        types = schema.types(spec)
        section = types == {"object"} or types == {"object", "null"}
        if kind == "table" and not section:
            continue
        # a legacy key the schema still lists (the loader reads it) is offered last, as deprecated
        legacy = ".".join(map(str, (*path, name))) in family.legacy_keys
        deprecated = legacy or any(sub.get("deprecated") for sub in schema.branches(spec))
        text = _key_insert(name, fmt, table=kind == "table", section=section)
        default = _default(family, spec)
        snippet = snippets and kind == "key" and not section and default is not None
        yield lsp.CompletionItem(
            label=name,
            kind=lsp.CompletionItemKind.Module if section else lsp.CompletionItemKind.Property,
            detail=_detail(schema.types(spec), default),
            documentation=_doc(family, spec),
            insert_text=f"{text}${{1:{_escape(_literal(default, fmt))}}}" if snippet else text,
            insert_text_format=lsp.InsertTextFormat.Snippet if snippet else None,
            filter_text=text if snippet else None,
            sort_text=f"{int(deprecated)}{n:04d}",
            tags=[lsp.CompletionItemTag.Deprecated] if deprecated else None,
        )


def _unmet_conditions(family: Family, node: Node, instance: Any) -> set[str]:
    """Keys only a conditional adds (an Axolotl plugin's settings, when `plugins` lists it) whose condition the
    config does not meet, as yaml-language-server leaves them out; none when the buffer's config is unknown."""
    if not isinstance(instance, dict):
        return set()
    import jsonschema_rs

    schema = family.schema
    always = {n for sub in schema.branches(node, instance, conditional=False) for n in sub.get("properties", {})}
    unmet: set[str] = set()
    for sub in schema.branches(node, instance):
        if "if" not in sub or "then" not in sub:
            continue
        try:
            holds = jsonschema_rs.Draft202012Validator(sub["if"]).is_valid(instance)
        except (ValueError, TypeError):  # a condition that refers elsewhere, or a value it cannot judge
            continue
        if not holds:
            unmet.update(n for b in schema.branches(sub["then"], instance) for n in b.get("properties", {}))
    return unmet - always


def _escape(text: str) -> str:
    """`text` as the literal text of a snippet placeholder."""
    return re.sub(r"([$}\\])", r"\\\1", text)


def _key_insert(name: str, fmt: str, *, table: bool, section: bool) -> str:
    return _syntax(fmt).key_text(name, table=table, section=section)


def _values(family: Family, path: Path, config: Any, fmt: str) -> Iterator[lsp.CompletionItem]:
    schema = family.schema
    node = _node(family, path, config)
    if node is None:
        return
    default = _default(family, node)
    seen: list[Any] = []
    for sub in schema.branches(node, every=True):
        values = list(sub.get("enum", ())) + ([sub["const"]] if "const" in sub else [])
        notes = sub.get("markdownEnumDescriptions") or sub.get("enumDescriptions") or []
        for i, value in enumerate(values):
            if value in seen or isinstance(value, dict | list):
                continue
            seen.append(value)
            note = notes[i] if i < len(notes) and "enum" in sub else sub.get("description", "")
            yield _value_item(value, fmt, len(seen), note, value == default and default is not None)
    for sub in schema.branches(node, every=True):  # not an enum, but names the usual values
        for value in sub.get("examples", ()):
            if value not in seen and not isinstance(value, dict | list):
                seen.append(value)
                yield _value_item(value, fmt, len(seen), str(sub.get("description", "")), value == default)
    if "boolean" in schema.types(node):
        for value in (True, False):
            if value not in seen:
                seen.append(value)
                yield _value_item(value, fmt, len(seen), "", value == default)


def _value_item(value: Any, fmt: str, n: int, note: str, is_default: bool) -> lsp.CompletionItem:
    text = _literal(value, fmt)
    return lsp.CompletionItem(
        label=text,
        kind=lsp.CompletionItemKind.EnumMember,
        detail="default" if is_default else None,
        documentation=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=note) if note else None,
        insert_text=text,
        sort_text=f"{n:04d}",
        preselect=is_default or None,
    )


def _literal(value: Any, fmt: str) -> str:
    """A value as the format writes it (quoted where a loader would read the text otherwise)."""
    return _syntax(fmt).value_text(value)


def _syntax(fmt: str) -> Syntax:
    return FORMATS[fmt].syntax()


def _default(family: Family, node: Node) -> Any:
    return next((sub["default"] for sub in family.schema.branches(node) if "default" in sub), None)


def _detail(types: set[str], default: Any) -> str:
    text = " | ".join(named_types(sorted(types))) or "any"
    return f"{text} (default {json.dumps(default)})" if default is not None else text


def _doc(family: Family, spec: Node) -> lsp.MarkupContent | None:
    for sub in family.schema.branches(spec):
        text = sub.get("markdownDescription") or sub.get("description")
        if text:
            return lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=str(text))
    return None
