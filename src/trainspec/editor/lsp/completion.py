"""Completion of keys and of allowed values, with their documentation, from the family's schema.

The place is read from the text around the cursor (the TOML table header
above it, the YAML keys its indentation nests it in, the JSON objects open
before it), because a buffer being typed into often does not parse. The schema branch of a union is chosen by
the last config of the buffer that did.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Any

from lsprotocol import types as lsp

from trainspec.editor.lsp.text import Source
from trainspec.families import Family
from trainspec.paths import Path
from trainspec.read.yaml import resolve_plain, yaml_1_1
from trainspec.validate.schema import Node, get

_TOML_HEADER = re.compile(r"\s*\[(\[)?\s*([^\]]+?)\s*\]")
_TOML_VALUE = re.compile(r"\s*([\w.\"-]+)\s*=\s*(\S*)$")
_TOML_KEY = re.compile(r"\s*([\w.-]*)$")
_TOML_TABLE = re.compile(r"\s*\[\[?\s*([\w.-]*)$")
_YAML_VALUE = re.compile(r"(\s*)(?:-\s+)?([\w.-]+):(?:\s+(\S*))?$")
_YAML_KEY = re.compile(r"(\s*)(-\s+)?([\w-]*)$")
_YAML_LINE = re.compile(r"(-\s+)?([^\s:#'\"][^:#]*?|\"[^\"]*\"|'[^']*'):(?:\s|$)")


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
    """Items for the 0-based code-point position; `config` picks union branches (may be None), and keys
    whose paths are `written` are not offered again. With `snippets` (the client takes them), a key is
    inserted with its default as a placeholder to accept or type over, as taplo does."""
    before = source.line(line)[:column]
    if fmt == "toml":
        found = _toml(source, line, before)
    elif fmt == "yaml":
        found = _yaml(source, line, before)
    else:
        found = _json(source.text[: source.offset(line, column)])
    if found is None:
        return []
    kind, path, typed = found
    if kind == "value":
        items = list(_values(family, path, config, fmt))
    else:
        items = [i for i in _keys(family, path, config, fmt, kind, snippets) if (*path, i.label) not in written]
    start = source.position(line, column - len(typed))
    end = source.position(line, column)
    space = " " if kind == "value" and fmt == "yaml" and before.endswith(":") else ""  # `key:` just typed
    for item in items:
        text = space + (item.insert_text or item.label)
        item.text_edit = lsp.TextEdit(range=lsp.Range(start=start, end=end), new_text=text)
        # what is typed is matched against what is inserted (`"se` against `"seq_len"`), placeholder aside
        item.filter_text = item.filter_text or text
        item.insert_text = None
    return items


def _toml(source: Source, line: int, before: str) -> tuple[str, Path, str] | None:
    table: Path = ()
    for n in range(line - 1, -1, -1):
        m = _TOML_HEADER.match(source.line(n))
        if m:
            table = tuple(_unquote(p) for p in m.group(2).split("."))
            if m.group(1):
                table = (*table, 0)
            break
    if (m := _TOML_TABLE.match(before)) is not None:
        parts = m.group(1).split(".")
        return "table", tuple(parts[:-1]), parts[-1]
    if (m := _TOML_VALUE.match(before)) is not None:
        return "value", (*table, *(_unquote(p) for p in m.group(1).split("."))), m.group(2)
    if (m := _TOML_KEY.match(before)) is not None:
        parts = m.group(1).split(".")
        return "key", (*table, *parts[:-1]), parts[-1]
    return None


def _yaml(source: Source, line: int, before: str) -> tuple[str, Path, str] | None:
    own = len(before) - len(before.lstrip())
    item: Path = (0,) if before.lstrip().startswith("- ") else ()
    if (m := _YAML_VALUE.match(before)) is not None:
        return "value", (*_yaml_parent(source, line, own), *item, m.group(2)), m.group(3) or ""
    if (m := _YAML_KEY.match(before)) is not None:
        return "key", (*_yaml_parent(source, line, own), *item), m.group(3)
    return None


def _yaml_parent(source: Source, line: int, indent: int) -> Path:
    """The keys (and list items) holding a YAML line whose content starts `indent` columns in."""
    path: list[str | int] = []
    for n in range(line - 1, -1, -1):
        if indent == 0:
            break
        text = source.line(n)
        own = len(text) - len(text.lstrip())
        if not text.strip() or text.lstrip().startswith("#") or own >= indent:
            continue
        m = _YAML_LINE.match(text[own:])
        if m is not None and own + len(m.group(1) or "") < indent:  # the key whose block holds the line
            path.insert(0, _unquote(m.group(2)))
        if text[own:].startswith("-"):
            path.insert(0, 0)
        indent = own
    return tuple(path)


@dataclass
class _Frame:
    """An open JSON object or array, and where the scan is inside it."""

    array: bool
    key: str | None = None
    index: int = 0
    state: str = "key"
    """"key" (a key may start), "colon", "value" (a value may start), "after" (a value ended)."""


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*("?)|[{}\[\],:]|[^\s{}\[\],:"]+|\s+')


def _json(text: str) -> tuple[str, Path, str] | None:
    """Where the end of `text` (the JSON before the cursor) is: a key or a value, at which path."""
    stack: list[_Frame] = []
    typed = ""
    for m in _JSON_TOKEN.finditer(text):
        token, top = m.group(), stack[-1] if stack else None
        typed = ""
        if token in "{[" and token:
            if top is not None:
                top.state = "after"
            stack.append(_Frame(array=token == "[", state="value" if token == "[" else "key"))
        elif token in "}]" and token:
            if stack:
                stack.pop()
        elif token == "," and top is not None:
            top.index += top.array
            top.state, top.key = ("value", top.key) if top.array else ("key", None)
        elif token == ":" and top is not None:
            top.state = "value"
        elif token.startswith('"') and not m.group(1) and m.end() == len(text):
            typed = token  # an unterminated string under the cursor
        elif not token.isspace() and top is not None:
            if not top.array and top.state == "key" and token.startswith('"'):
                top.key, top.state = json.loads(token), "colon"
            elif m.end() == len(text) and top.state == "value":
                typed = token
            else:
                top.state = "after"
    if not stack or stack[-1].state not in ("key", "value"):
        return None
    path = tuple(0 if f.array else f.key or "" for f in stack[:-1])
    top = stack[-1]
    if top.state == "key":
        return "key", path, typed
    return "value", (*path, 0 if top.array else top.key or ""), typed


def _unquote(key: str) -> str:
    key = key.strip()
    return key[1:-1] if len(key) >= 2 and key[0] == key[-1] and key[0] in "\"'" else key


def _node(family: Family, path: Path, config: Any) -> Node | None:
    return family.schema.node_at(path, config if isinstance(config, dict) else {})


def _keys(family: Family, path: Path, config: Any, fmt: str, kind: str, snippets: bool) -> Iterator[lsp.CompletionItem]:
    schema = family.schema
    node = _node(family, path, config)
    if node is None:
        return
    instance = get(config, path) if isinstance(config, dict) else None
    props = schema.properties(node, instance) or schema.properties(node, instance, every=True)
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


def _escape(text: str) -> str:
    """`text` as the literal text of a snippet placeholder."""
    return re.sub(r"([$}\\])", r"\\\1", text)


def _key_insert(name: str, fmt: str, *, table: bool, section: bool) -> str:
    if fmt == "json":
        return f"{json.dumps(name)}: "
    if fmt == "toml":
        return name if table else f"{name} = "
    return f"{name}:" if section else f"{name}: "


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
    """A value as the format writes it; a YAML string is quoted when a loader would read it otherwise."""
    if fmt == "yaml" and isinstance(value, str):
        plain = resolve_plain(value) == value and yaml_1_1(value) == value and value.strip() == value
        return value if plain and value else json.dumps(value)
    if fmt == "toml" and value is None:
        return '""'
    text = json.dumps(value, ensure_ascii=False)
    if fmt == "yaml" and isinstance(value, float) and re.fullmatch(r"-?\d+e[-+]?\d+", text):
        return text.replace("e", ".0e", 1)  # YAML 1.1 (PyYAML) reads `1e-05` as a string
    return text


def _default(family: Family, node: Node) -> Any:
    return next((sub["default"] for sub in family.schema.branches(node) if "default" in sub), None)


def _detail(types: set[str], default: Any) -> str:
    text = " | ".join(sorted(types)) or "any"
    return f"{text} (default {json.dumps(default)})" if default is not None else text


def _doc(family: Family, spec: Node) -> lsp.MarkupContent | None:
    for sub in family.schema.branches(spec):
        text = sub.get("markdownDescription") or sub.get("description")
        if text:
            return lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=str(text))
    return None
