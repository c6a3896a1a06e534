"""Round-trip YAML editing for `trainspec migrate` and `plan --apply`, with ruamel.yaml.

ruamel.yaml's round-trip mode is the maintained YAML library that keeps
comments, key order, quoting and scalar spelling through a load/dump cycle,
so only the keys an edit moves or sets change. It is imported only when a
YAML file is rewritten (`read.yaml.tree`, `read.yaml.set_values`), never on
the check path.
"""

from __future__ import annotations

import difflib
import io
import itertools
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import CommentMark, YAMLError
from ruamel.yaml.tokens import CommentToken

from trainspec.spec.errors import RewriteError

__all__ = ["RoundTrip", "YAMLError", "keep_trailing_comments", "mappings", "merged", "round_trip"]

INDENTS = list(itertools.product((2, 4), ((2, 0), (4, 2), (3, 1), (4, 0)), (False, True)))
"""(mapping indent, (sequence indent, dash offset), explicit `---`) settings tried on the original file."""


def _yaml(mapping: int, sequence: int, offset: int, explicit_start: bool) -> YAML:
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 1 << 16  # never re-wrap long lines
    yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
    yaml.explicit_start = explicit_start
    return yaml


def round_trip(text: str) -> YAML:
    """The emitter settings that reproduce `text` most closely (exactly, for consistently indented files)."""
    best: tuple[int, YAML] | None = None
    for mapping, (sequence, offset), start in INDENTS:
        yaml = _yaml(mapping, sequence, offset, start)
        try:
            out = io.StringIO()
            yaml.dump(yaml.load(text), out)
        except YAMLError:
            continue
        changed = sum(1 for line in difflib.ndiff(text.splitlines(), out.getvalue().splitlines()) if line[0] in "+-")
        if best is None or changed < best[0]:
            best = (changed, yaml)
        if not changed:
            break
    return best[1] if best is not None else _yaml(2, 2, 0, False)


Snapshot = list[tuple[CommentedMap, list[Any], dict[Any, Any], Any, Any]]


class RoundTrip:
    """A YAML text loaded to be edited in place and written back as it was written (`formats.Tree`).

    The emitter settings are the ones that reproduce the text (`round_trip`); a
    snapshot of every mapping, taken before any edit, lets `settle` put comment
    blocks back where the text had them (`keep_trailing_comments`).
    """

    def __init__(self, text: str) -> None:
        self.yaml = round_trip(text)
        try:
            self.data: Any = self.yaml.load(text)
        except YAMLError as exc:
            raise RewriteError(str(exc)) from exc
        self.before = mappings(self.data)
        self.shares_mappings = any(mapping.merge for mapping, *_ in self.before)

    def shared(self, path: tuple[str | int, ...]) -> bool:
        return merged(self.data, path)

    def dump(self, data: Any) -> str:
        out = io.StringIO()
        self.yaml.dump(data, out)
        return out.getvalue()

    def settle(self) -> None:
        keep_trailing_comments(self.before)


def mappings(node: Any, parent: Any = None, at: Any = None) -> Snapshot:
    """Every round-trip mapping of the tree (keys, values, and where it sits), before a migration edits it."""
    found: Snapshot = []
    if isinstance(node, CommentedMap):
        found.append((node, list(node), dict(node), parent, at))
        for key, child in node.items():
            found.extend(mappings(child, node, key))
    elif isinstance(node, CommentedSeq):
        for index, child in enumerate(node):
            found.extend(mappings(child, node, index))
    return found


def keep_trailing_comments(before: Snapshot) -> None:
    """Keep the comment lines that followed a removed key, or ended a mapping that got new keys, in place.

    ruamel stores the full-line comments after an entry on that entry (on the
    last entry inside it, for a nested value), so they would leave with a
    moved value. They belong to what follows, so they are re-attached to the
    entry that now precedes them.
    """
    for mapping, keys, values, parent, at in reversed(before):  # inner mappings first: they feed their parents
        for i, key in enumerate(keys):
            if key in mapping and mapping[key] is values[key]:
                continue
            block = _take_tail(mapping, key, values[key])
            previous = next((k for k in reversed(keys[:i]) if k in mapping), None)
            following = next((k for k in keys[i + 1 :] if k in mapping), None)
            if not block:
                continue
            if previous is not None:
                _add_tail(mapping, previous, block)
            elif following is not None:
                _add_before(mapping, following, block)
            elif mapping:
                _add_tail(mapping, list(mapping)[-1], block)
            elif isinstance(parent, CommentedMap):
                _after_emptied(parent, at, block)
        survivors = [k for k in keys if k in mapping]
        if survivors and list(mapping)[-1] != survivors[-1]:
            block = _take_tail(mapping, survivors[-1], mapping[survivors[-1]])
            if block:
                _add_tail(mapping, list(mapping)[-1], block)


def _after_emptied(parent: CommentedMap, at: Any, block: str) -> None:
    """Comments that followed the last key of a now empty mapping: before the parent's next key."""
    keys = list(parent)
    position = keys.index(at)
    if position + 1 < len(keys):
        _add_before(parent, keys[position + 1], block)
    elif position > 0:
        _add_tail(parent, keys[position - 1], block)


def _add_before(mapping: CommentedMap, key: Any, block: str) -> None:
    lines = block.splitlines()
    indent = next((len(line) - len(line.lstrip()) for line in lines if line.strip()), 0)
    text = "\n".join(line.strip().removeprefix("#").removeprefix(" ") for line in lines)
    mapping.yaml_set_comment_before_after_key(key, before=text, indent=indent)


def _tail_entry(container: Any, key: Any, value: Any) -> tuple[list[Any] | None, int, Any, Any]:
    """The comment slot after the last line of `value` (stored at `container[key]`, or stored there before)."""
    while isinstance(value, (CommentedMap, CommentedSeq)) and len(value):
        container, key = value, list(value)[-1] if isinstance(value, CommentedMap) else len(value) - 1
        value = container[key]
    slot = 2 if isinstance(container, CommentedMap) else 0
    return container.ca.items.get(key), slot, container, key


def _take_tail(container: Any, key: Any, value: Any) -> str:
    """Detach and return the full-line comments after an entry (keeping its end-of-line comment)."""
    entry, slot, _, _ = _tail_entry(container, key, value)
    token = entry[slot] if entry else None
    if token is None:
        return ""
    first, _, rest = token.value.partition("\n")
    if not rest:
        return ""
    if first.strip():
        token.value = first + "\n"
    else:
        entry[slot] = None  # type: ignore[index]
    return str(rest)


def _add_tail(container: Any, key: Any, block: str) -> None:
    entry, slot, owner, last = _tail_entry(container, key, container[key])
    if entry is None:
        entry = owner.ca.items.setdefault(last, [None, None, None, None])
    if entry[slot] is None:
        entry[slot] = CommentToken("\n" + block, CommentMark(0), None)
    else:
        entry[slot].value += block


def merged(tree: Any, path: tuple[str | int, ...]) -> bool:
    """Whether the mapping holding `path` takes keys from a YAML merge key (`<<: *anchor`) or gives its
    keys to one: an edit there would land in (or change) another mapping than the one it names."""
    sources = {id(source) for mapping, *_ in mappings(tree) for source in mapping.merge}
    node = tree
    for step in path[:-1]:
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            return False
    return isinstance(node, CommentedMap) and (bool(node.merge) or id(node) in sources)
