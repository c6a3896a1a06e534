"""JSON with comments and trailing commas (VS Code's settings.json), read with spans and edited in place.

`editor init` adds schema associations to a file the user owns: every byte it
does not change (comments, spacing, key order, the text of strings) must stay.
So the file is parsed into values that know where they start and end, and
`edited` turns the change from the old value to the new one into the smallest
span edits: a new member or item is inserted after the last one (in the
container's own layout), a changed scalar is replaced, and nothing is ever
deleted. The result is parsed again and must hold exactly the new value, or
JsoncError is raised and the caller writes nothing. The parser is strict and
small: the grammar VS Code writes (JSON, `//` and `/* */` comments, trailing
commas; the last of duplicate keys wins), at most `MAX_DEPTH` levels deep.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from trainspec.read.text_lines import line_ending
from trainspec.spec.digits import too_many_digits

MAX_DEPTH = 200
"""Deeper nesting is refused: no settings file needs it, and it would exhaust the parser's stack."""

_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_LITERALS = {"true": True, "false": False, "null": None}
_DECODER = json.JSONDecoder()


class JsoncError(ValueError):
    """The text is not JSON with comments; the message says where."""


@dataclass
class Node:
    """A value and its span `[start, end)`; an object's or array's members, and where it closes."""

    start: int
    end: int
    value: Any
    members: dict[str, Node] = field(default_factory=dict)
    items: list[Node] = field(default_factory=list)
    trailing_comma: int | None = None
    """The offset just after a comma that follows the last member or item."""
    first: int = -1
    """Where the entry starts: its key's opening quote for an object member, else the value."""

    @property
    def children(self) -> list[Node]:
        return list(self.members.values()) if isinstance(self.value, dict) else self.items


def parse(text: str) -> Node | None:
    """The value of `text`, or None when it holds only blanks and comments."""
    parser = _Parser(text)
    at = parser.skip(0)
    if at == len(text):
        return None
    node = parser.value(at, 0)
    end = parser.skip(node.end)
    if end != len(text):
        raise parser.error(end, "more after the value")
    return node


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text

    def error(self, at: int, what: str) -> JsoncError:
        line = self.text.count("\n", 0, at) + 1
        column = at - (self.text.rfind("\n", 0, at) + 1) + 1
        return JsoncError(f"line {line} column {column}: {what}")

    def skip(self, at: int) -> int:
        """The offset of the next token after `at` (blanks and comments skipped)."""
        text = self.text
        while at < len(text):
            if text[at] in " \t\r\n\ufeff":
                at += 1
            elif text.startswith("//", at):
                ends = [i for i in (text.find("\n", at), text.find("\r", at)) if i >= 0]
                at = min(ends) if ends else len(text)
            elif text.startswith("/*", at):
                close = text.find("*/", at + 2)
                if close < 0:
                    raise self.error(at, "a comment that never ends")
                at = close + 2
            else:
                break
        return at

    def value(self, at: int, depth: int) -> Node:
        if depth > MAX_DEPTH:
            raise self.error(at, f"nested deeper than {MAX_DEPTH} levels")
        text = self.text
        c = text[at] if at < len(text) else ""
        if c == "{":
            return self.container(at, depth, "}")
        if c == "[":
            return self.container(at, depth, "]")
        if c == '"':
            return self.string(at)
        number = _NUMBER.match(text, at)
        if number:
            word = number[0]
            try:
                return Node(at, number.end(), float(word) if any(ch in word for ch in ".eE") else int(word))
            except ValueError:  # past Python's 4,300 digits: refused, not an internal error
                raise self.error(at, too_many_digits()) from None
        literal = next((w for w in _LITERALS if text.startswith(w, at)), None)
        if literal is None:
            raise self.error(at, "expected a value" if c else "the text ends where a value should be")
        return Node(at, at + len(literal), _LITERALS[literal])

    def string(self, at: int) -> Node:
        try:
            value, end = _DECODER.raw_decode(self.text, at)
        except json.JSONDecodeError as exc:
            raise self.error(exc.pos, exc.msg) from None
        return Node(at, end, value)

    def container(self, at: int, depth: int, close: str) -> Node:
        node = Node(at, at, {} if close == "}" else [])
        cursor = self.skip(at + 1)
        while cursor < len(self.text) and self.text[cursor] != close:
            if close == "}":
                if self.text[cursor] != '"':
                    raise self.error(cursor, "expected a key in double quotes")
                key = self.string(cursor)
                colon = self.skip(key.end)
                if self.text[colon : colon + 1] != ":":
                    raise self.error(colon, "expected `:` after the key")
                child = self.value(self.skip(colon + 1), depth + 1)
                child.first = key.start
                node.members.pop(key.value, None)  # the last of duplicate keys wins, as in VS Code
                node.members[key.value] = child
                node.value[key.value] = child.value
            else:
                child = self.value(cursor, depth + 1)
                child.first = child.start
                node.items.append(child)
                node.value.append(child.value)
            cursor = self.skip(child.end)
            node.trailing_comma = None
            if self.text[cursor : cursor + 1] == ",":
                node.trailing_comma = cursor + 1
                cursor = self.skip(cursor + 1)
            elif self.text[cursor : cursor + 1] != close:
                raise self.error(cursor, f"expected `,` or `{close}`")
        if cursor >= len(self.text):
            raise self.error(at, f"`{self.text[at]}` is never closed")
        node.end = cursor + 1
        return node


Edit = tuple[int, int, str]


def edited(text: str, root: Node, new: Any) -> str:
    """`text` holding `new` instead of `root.value`, by the smallest span edits; JsoncError if that cannot be."""
    edits = sorted(_edits(text, root, new), reverse=True)
    out = text
    for start, end, replacement in edits:
        out = out[:start] + replacement + out[end:]
    check = parse(out)
    if check is None or check.value != new or type(check.value) is not type(new):
        raise JsoncError("the edited text would not hold the new settings")
    return out


def _edits(text: str, node: Node, new: Any) -> list[Edit]:
    old = node.value
    if old == new and type(old) is type(new):
        return []
    if isinstance(old, dict) and isinstance(new, dict) and old.keys() <= new.keys():
        found = [e for key, child in node.members.items() for e in _edits(text, child, new[key])]
        added = [(json.dumps(k, ensure_ascii=False) + ": ", new[k]) for k in new if k not in old]
        return found + _insert(text, node, added)
    if isinstance(old, list) and isinstance(new, list) and len(new) >= len(old):
        found = [e for child, value in zip(node.items, new, strict=False) for e in _edits(text, child, value)]
        return found + _insert(text, node, [("", value) for value in new[len(old) :]])
    return [(node.start, node.end, _render(new, _indent_at(text, node.start), text))]


def _insert(text: str, node: Node, entries: list[tuple[str, Any]]) -> list[Edit]:
    """New entries (a member's `"key": ` or an item's "", and the value) after the container's last one,
    laid out as the container is: on its one line, or one entry a line at its members' indentation."""
    if not entries:
        return []
    newline = line_ending(text)
    if not any(c in text[node.start : node.end] for c in "\r\n"):
        block = ", ".join(prefix + json.dumps(value, ensure_ascii=False) for prefix, value in entries)
        if not node.children:
            return [(node.start + 1, node.start + 1, block)]
        if node.trailing_comma:
            return [(node.trailing_comma, node.trailing_comma, " " + block + ",")]
        return [(node.children[-1].end, node.children[-1].end, ", " + block)]
    indent = _member_indent(text, node)
    block = ("," + newline + indent).join(prefix + _render(value, indent, text) for prefix, value in entries)
    last = node.children[-1].end if node.children else node.start + 1
    after = node.trailing_comma or last
    line_end = _line_end(text, after)
    rest = text[after:line_end].strip()
    at = line_end if not rest or rest.startswith("//") else after
    entry = newline + indent + block + ("," if node.trailing_comma else "")
    if node.trailing_comma or not node.children:
        return [(at, at, entry)]
    return [(last, last, "," + entry)] if at == last else [(last, last, ","), (at, at, entry)]


def _render(value: Any, indent: str, text: str) -> str:
    """`value` as JSON laid out like `text`: its indentation unit and line break, from column `indent` on."""
    return json.dumps(value, indent=_unit(text), ensure_ascii=False).replace("\n", line_ending(text) + indent)


def _line_start(text: str, at: int) -> int:
    return max(text.rfind("\n", 0, at), text.rfind("\r", 0, at)) + 1


def _line_end(text: str, at: int) -> int:
    ends = [i for i in (text.find("\n", at), text.find("\r", at)) if i >= 0]
    return min(ends) if ends else len(text)


def _indent_at(text: str, at: int) -> str:
    """The blanks that start the line holding offset `at`."""
    line = text[_line_start(text, at) : at]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _member_indent(text: str, node: Node) -> str:
    """Where the container's entries start their lines (one unit in from its own line when none does)."""
    for child in node.children:
        before = text[_line_start(text, child.first) : child.first]
        if not before.strip(" \t"):
            return before
    return _indent_at(text, node.start) + _unit(text)


def _unit(text: str) -> str:
    """One level of indentation as the file writes it: a tab, or the smallest run of leading spaces (4 if none)."""
    indents = [m[1] for m in re.finditer(r"(?:^|[\r\n])([ \t]+)\S", text)]
    if any(i.startswith("\t") for i in indents):
        return "\t"
    return " " * min((len(i) for i in indents), default=4)
