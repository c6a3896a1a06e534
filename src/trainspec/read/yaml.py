"""YAML, read by YAML 1.2 core-schema rules, with a position for every node.

PyYAML resolves plain scalars by YAML 1.1 (`1e-4` is a string there, `on` a
boolean). Editors and other validators follow YAML 1.2, so we let PyYAML
(its C parser when present) build only the node tree, with every plain
scalar left unresolved, and resolve scalars here. Only plain data is accepted:
explicit tags other than the core ones are refused, duplicate keys are
errors rather than silently keeping the last value, and so is an integer too
long for Python to write in decimal (`in_digit_limit`).

What editing asks of YAML (`formats.Syntax`) follows the reader: the key or
value typed at a cursor (under the keys its indentation nests it in), keys
and values written so either YAML version reads them back, where a new entry
goes, and values set or keys moved through ruamel.yaml's round trip
(`write.yaml_roundtrip`, imported only then).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import yaml

from trainspec.read import syntax
from trainspec.read.files import file_error
from trainspec.spec.codes import DUPLICATE_KEY, SYNTAX_ERROR, UNSUPPORTED_YAML
from trainspec.spec.diagnostics import Diagnostic, Related, Severity
from trainspec.spec.digits import in_digit_limit, too_many_digits
from trainspec.spec.document import Document, LineEdit, LineIndex, Pos, Positions, ReadError, Span, Unreadable
from trainspec.spec.errors import RewriteError
from trainspec.spec.formats import line_of, unquote
from trainspec.spec.limits import VALUES
from trainspec.spec.paths import Path, with_value
from trainspec.spec.result import Outcome

if TYPE_CHECKING:
    from trainspec.spec.formats import Place, Tree

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_PLAIN = "tag:trainspec:plain"
_CORE = "tag:yaml.org,2002:"

_NULL = re.compile(r"~|null|Null|NULL|")
_TRUE = re.compile(r"true|True|TRUE")
_FALSE = re.compile(r"false|False|FALSE")
_INT = re.compile(r"[-+]?[0-9]+")
_OCT = re.compile(r"0o[0-7]+")
_HEX = re.compile(r"0x[0-9a-fA-F]+")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_INF = re.compile(r"[-+]?\.(inf|Inf|INF)")
_NAN = re.compile(r"\.(nan|NaN|NAN)")
_FLOW = re.compile(r"while parsing a flow (sequence|mapping)")
_SAME_IN_1_1 = re.compile(r"[-+]?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?")
"""Decimal integers and plain decimals read alike by YAML 1.1 and 1.2 (no leading zero, exponent or `_`)."""


_YAML_1_1 = yaml.resolver.Resolver()
_YAML_1_1_VALUES = yaml.constructor.SafeConstructor()


def yaml_1_1(text: str) -> Any:
    """What PyYAML's safe loader (YAML 1.1) makes of a plain scalar: `017` is 15, `off` false, `1e-4` text."""
    tag = _YAML_1_1.resolve(yaml.ScalarNode, text, (True, False))
    construct = _YAML_1_1_VALUES.yaml_constructors.get(tag)
    if tag == _CORE + "str" or construct is None:  # `=` and `<<` resolve to tags a value never has
        return text
    try:
        return construct(_YAML_1_1_VALUES, yaml.ScalarNode(tag, text))
    except ValueError:
        return Unreadable(text)


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and (a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b)))


class _Loader(_BaseLoader):  # type: ignore[misc, valid-type]
    """Builds nodes only; plain scalars keep a marker tag so we resolve them by YAML 1.2."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        if kind is yaml.ScalarNode and implicit[0]:
            return _PLAIN
        return str(super().resolve(kind, value, implicit))


_MAYBE_NOT_TEXT = frozenset("0123456789+-.~nNtTfF")


def resolve_plain(text: str) -> Any:
    """The YAML 1.2 core-schema value of a plain (unquoted) scalar.

    ValueError for an integer too long to write in decimal (see `in_digit_limit`).
    """
    if text and text[0] not in _MAYBE_NOT_TEXT:
        return text  # most values are names and paths: no pattern can match them
    if _NULL.fullmatch(text):
        return None
    if _TRUE.fullmatch(text):
        return True
    if _FALSE.fullmatch(text):
        return False
    if _INT.fullmatch(text):
        return int(text)
    if _OCT.fullmatch(text):
        return in_digit_limit(int(text[2:], 8))
    if _HEX.fullmatch(text):
        return in_digit_limit(int(text[2:], 16))
    if _FLOAT.fullmatch(text):
        return float(text)
    if _INF.fullmatch(text):
        return -math.inf if text.startswith("-") else math.inf
    if _NAN.fullmatch(text):
        return math.nan
    return text


MAX_DEPTH = 500
"""Deeper flow nesting than any config has; libyaml's recursive composer would crash on far deeper input."""


def _too_deep(text: str) -> bool:
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return False  # the common case, decided by two C-speed counts
    depth = 0
    for char in text:
        depth += char in "[{"
        depth -= char in "]}"
        if depth > MAX_DEPTH:
            return True
    return False


def parse(file: str, text: str) -> Document:
    if _too_deep(text):
        raise ReadError(
            file_error(
                file,
                SYNTAX_ERROR.id,
                f"the document nests more than {MAX_DEPTH} levels deep; no config is this deep",
            )
        )
    _count_values(file, text)
    try:
        nodes = list(yaml.compose_all(text, Loader=_Loader))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "cannot parse"
        opened = exc.context_mark
        if opened is not None and mark is not None and opened.line < mark.line and _FLOW.match(exc.context or ""):
            # an unclosed `[` or `{`: the mistake is on its line, not where the parser gave up
            bracket = text.split("\n")[opened.line][opened.column : opened.column + 1] or "["
            mark, problem = opened, f"`{bracket}` is never closed ({problem} on line {mark.line + 1})"
        line, col = (mark.line + 1, mark.column + 1) if mark else (None, None)
        message = (
            syntax.yaml(problem, text, line, col) if line and col else f"invalid YAML: {problem}; {syntax.STOPPED}"
        )
        raise ReadError(file_error(file, SYNTAX_ERROR.id, message, line, col)) from None
    except yaml.YAMLError as exc:
        raise ReadError(file_error(file, SYNTAX_ERROR.id, f"invalid YAML: {exc}")) from None
    if len(nodes) > 1:
        mark = nodes[1].start_mark
        raise ReadError(
            file_error(
                file,
                SYNTAX_ERROR.id,
                "the file holds more than one YAML document; a config is a single document",
                mark.line + 1,
                mark.column + 1,
            )
        )
    builder = _Builder(file)
    try:
        data = builder.build(nodes[0], ()) if nodes else None
    except _TooLarge:
        found = "expands to more values (aliases repeating aliases?)" if builder.repeated else "holds more values"
        raise _too_many(file, found) from None
    document = Document(file, "yaml", text, data, builder.positions, builder.problems)
    document.yaml_1_1 = builder.yaml_1_1
    return document


def _pos(mark: Any) -> Pos:
    return Pos(mark.line + 1, mark.column + 1)


def _count_values(file: str, text: str) -> None:
    """Refuse a document of more than `limits.VALUES` values before it is composed: PyYAML builds a node
    for each (about 7 µs) and trainspec then reads each (about 20 µs), so a mebibyte of `1, 1, 1, …`
    would take ten seconds. Counting the parser's events costs a tenth of that, and stops at the limit.
    A syntax error ends the count; composing reports it."""
    limit, count = VALUES.value, 0
    if 2 * len(text) + 16 <= limit:
        return  # each value event takes a byte of the text at least (tests/test_limits.py): none can be over
    try:
        for event in yaml.parse(text, Loader=_Loader):
            if isinstance(event, _VALUE_EVENTS):
                count += 1
                if count > limit:
                    raise _too_many(file, "holds more values")
    except yaml.YAMLError:
        return


_VALUE_EVENTS = (yaml.ScalarEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent, yaml.AliasEvent)


def _too_many(file: str, found: str) -> ReadError:
    return ReadError(
        file_error(
            file, UNSUPPORTED_YAML.id, VALUES.exceeded(f"the document {found}") + "; a config is never that large"
        ),
        Outcome.TOO_LARGE,
    )


class _TooLarge(Exception):
    pass


class _Builder:
    def __init__(self, file: str) -> None:
        self.file = file
        self.count = 0
        self.placed: dict[Path, tuple[Any, Any]] = {}
        """(key node or None, value node) of each path, the first built there: `positions` from them."""
        self.problems: list[Diagnostic] = []
        self.yaml_1_1: dict[Path, Any] = {}
        self.limit = VALUES.value
        self.built: set[int] = set()
        self.repeated = False
        """Whether a list or mapping was built twice (an alias to it): what the message over the limit says."""

    def build(self, node: Any, path: Path, key: Any = None) -> Any:
        self.count += 1
        if self.count > self.limit:
            raise _TooLarge
        if isinstance(node, yaml.CollectionNode):
            self.repeated = self.repeated or id(node) in self.built
            self.built.add(id(node))
        if path not in self.placed:
            self.placed[path] = (key, node)
        if isinstance(node, yaml.MappingNode):
            return self.mapping(node, path)
        if isinstance(node, yaml.SequenceNode):
            self.expect_tag(node, "seq", path)
            return [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
        return self.scalar(node, path)

    def mapping(self, node: Any, path: Path) -> dict[str, Any]:
        self.expect_tag(node, "map", path)
        out: dict[str, Any] = {}
        seen: dict[str, Any] = {}
        merged: list[Any] = []
        for key_node, value_node in node.value:
            if key_node.tag == _PLAIN and key_node.value == "<<":
                merged.append(value_node)
                continue
            key = self.scalar(key_node, path) if isinstance(key_node, yaml.ScalarNode) else None
            if not isinstance(key, str):
                key = self.key_text(key_node, key, path)
                if key is None:
                    continue
            if key in seen:
                first = seen[key].start_mark
                self.problems.append(
                    Diagnostic(
                        self.file,
                        key_node.start_mark.line + 1,
                        key_node.start_mark.column + 1,
                        (*path, key),
                        DUPLICATE_KEY.id,
                        Severity.ERROR,
                        f"duplicate key `{key}` (first written at line {first.line + 1}); keep one of them",
                        related=(self.first_written(seen[key], (*path, key)),),
                        end_line=key_node.end_mark.line + 1,
                        end_column=key_node.end_mark.column + 1,
                    )
                )
                continue
            seen[key] = key_node
            out[key] = self.build(value_node, (*path, key), key_node)
        for source in merged:  # YAML merge keys: explicit keys win, earlier merges win
            for item in source.value if isinstance(source, yaml.SequenceNode) else [source]:
                if isinstance(item, yaml.MappingNode):
                    for k, v in self.mapping(item, path).items():
                        out.setdefault(k, v)
        return out

    def positions(self) -> Positions:
        """Where each path's key and value start and end: made when a diagnostic first needs a place (most
        checked files need none), from the nodes kept of each path."""
        return {
            path: Span(
                _pos(key.start_mark) if key is not None else None,
                _pos(node.start_mark),
                _pos(key.end_mark) if key is not None else None,
                _pos(node.end_mark),
            )
            for path, (key, node) in self.placed.items()
        }

    @staticmethod
    def first_written(key_node: Any, path: Path) -> Related:
        """Where a key that is written again was first written."""
        start, end = key_node.start_mark, key_node.end_mark
        return Related(path, start.line + 1, start.column + 1, end.line + 1, end.column + 1, "first written here")

    def key_text(self, key_node: Any, key: Any, path: Path) -> str | None:
        """Scalar keys that read as numbers or booleans are kept as the text written."""
        if isinstance(key_node, yaml.ScalarNode):
            return str(key_node.value)
        self.problems.append(
            Diagnostic(
                self.file,
                key_node.start_mark.line + 1,
                key_node.start_mark.column + 1,
                path,
                SYNTAX_ERROR.id,
                Severity.ERROR,
                "a mapping key must be a plain string, not a list or mapping",
            )
        )
        return None

    def scalar(self, node: Any, path: Path) -> Any:
        try:
            return self.resolve(node, path)
        except ValueError:  # an integer too long to write in decimal
            self.refuse(node, path, too_many_digits(), rule=SYNTAX_ERROR.id)
            return node.value

    def resolve(self, node: Any, path: Path) -> Any:
        tag, value = node.tag, node.value
        if tag == _PLAIN:
            resolved = resolve_plain(value)
            if value and value[0] in _YAML_1_1.yaml_implicit_resolvers and not _SAME_IN_1_1.fullmatch(value):
                older = yaml_1_1(value)
                if not _same(older, resolved):
                    self.yaml_1_1[path] = older
            return resolved
        if tag in ("!", _CORE + "str"):
            return value
        if tag == _CORE + "null":
            return None
        resolved = resolve_plain(value)
        is_int = isinstance(resolved, int) and not isinstance(resolved, bool)
        if tag == _CORE + "int" and is_int:
            return resolved
        if tag == _CORE + "float" and (is_int or isinstance(resolved, float)):
            return float(resolved)
        if tag == _CORE + "bool" and isinstance(resolved, bool):
            return resolved
        self.refuse(
            node, path, f"tag {tag!r} with value {value!r} is not plain data; write a plain value without the tag"
        )
        return value

    def expect_tag(self, node: Any, kind: str, path: Path) -> None:
        if node.tag not in (_CORE + kind, "!"):
            self.refuse(node, path, f"tag {node.tag!r} is not plain data; remove it")

    def refuse(self, node: Any, path: Path, message: str, rule: str = UNSUPPORTED_YAML.id) -> None:
        mark = node.start_mark
        self.problems.append(Diagnostic(self.file, mark.line + 1, mark.column + 1, path, rule, Severity.ERROR, message))


# -- editing: what completion, quick fixes, `plan --apply` and `migrate` ask of YAML (`formats.Syntax`) ------------
# Patterns as text: `re` compiles them on first use, so a check, which never edits, does not pay for them.

CLOSING = ""
DIRECTIVE_ANYWHERE = True
"""yaml-language-server reads its modeline on any comment line."""
EDITOR_SETTINGS: tuple[str, ...] = ("yaml.schemas",)
LANGUAGE_SERVER = "yaml-language-server"

_TYPED_VALUE = r"(\s*)(?:-\s+)?([\w.-]+):(?:\s+(\S*))?$"
_TYPED_KEY = r"(\s*)(-\s+)?([\w-]*)$"
_KEY_LINE = r"(-\s+)?([^\s:#'\"][^:#]*?|\"[^\"]*\"|'[^']*'):(?:\s|$)"


def place(lines: Sequence[str], line: int, column: int) -> Place | None:
    """The key or value typed at the cursor: under the keys its indentation nests it in."""
    before = line_of(lines, line)[:column]
    own = len(before) - len(before.lstrip())
    item: Path = (0,) if before.lstrip().startswith("- ") else ()
    if (m := re.match(_TYPED_VALUE, before)) is not None:
        return "value", (*_parent(lines, line, own), *item, m.group(2)), m.group(3) or ""
    if (m := re.match(_TYPED_KEY, before)) is not None:
        return "key", (*_parent(lines, line, own), *item), m.group(3)
    return None


def _parent(lines: Sequence[str], line: int, indent: int) -> Path:
    """The keys (and list items) holding a line whose content starts `indent` columns in."""
    path: list[str | int] = []
    for n in range(line - 1, -1, -1):
        if indent == 0:
            break
        text = line_of(lines, n)
        own = len(text) - len(text.lstrip())
        if not text.strip() or text.lstrip().startswith("#") or own >= indent:
            continue
        m = re.match(_KEY_LINE, text[own:])
        if m is not None and own + len(m.group(1) or "") < indent:  # the key whose block holds the line
            path.insert(0, unquote(m.group(2)))
        if text[own:].startswith("-"):
            path.insert(0, 0)
        indent = own
    return tuple(path)


def key_text(name: str, *, table: bool, section: bool) -> str:
    return f"{name}:" if section else f"{name}: "


def value_text(value: Any) -> str:
    """A string is quoted when a loader would read it otherwise (`on`: a YAML 1.1 boolean, `1e-4`: a YAML 1.2
    number); a float in exponent form gets a point, which YAML 1.1 needs to read it as a number."""
    if isinstance(value, str):
        plain = resolve_plain(value) == value and yaml_1_1(value) == value and value.strip() == value
        return value if plain and value else json.dumps(value)
    text = json.dumps(value, ensure_ascii=False)
    if isinstance(value, float) and re.fullmatch(r"-?\d+e[-+]?\d+", text):
        return text.replace("e", ".0e", 1)  # YAML 1.1 (PyYAML) reads `1e-05` as a string
    return text


def value_lead(before: str) -> str:
    """A space after a `key:` just typed: `key:value` is one plain scalar."""
    return " " if before.endswith(":") else ""


def entry(key: str, value: str) -> str:
    return f"{key}: {value}"


def insertion(text: str, positions: Positions, target: Path, line: str) -> tuple[int, str] | None:
    """After the key of the deepest written mapping holding `target`, indented as its keys are, with the
    mappings missing below it opened; at the end of the file when none is written."""
    parent = target[:-1]
    written = next((parent[:n] for n in range(len(parent), 0, -1) if parent[:n] in positions), ())
    missing = parent[len(written) :]
    at = len(text)
    indent = 0
    if written:
        key = positions[written].key
        if key is None:
            return None
        children = [
            s.key.column - 1
            for p, s in positions.items()
            if len(p) == len(written) + 1 and p[: len(written)] == written and s.key is not None
        ]
        indent = min(children) if children else key.column - 1 + 2
        starts = LineIndex(text).starts
        at = starts[key.line] if key.line < len(starts) else len(text)
    lines = [" " * (indent + 2 * n) + f"{part}:" for n, part in enumerate(missing)]
    lines.append(" " * (indent + 2 * len(missing)) + line)
    return at, "\n".join(lines) + "\n"


def set_values(doc: Document, values: Mapping[Path, Any]) -> str:
    """Through ruamel.yaml's round trip: every line the edit leaves alone is kept byte for byte."""
    from trainspec.read.plain_data import put
    from trainspec.read.text_lines import keep_original_lines

    try:
        tree = _tree(doc.text)
    except RewriteError as exc:
        raise RewriteError(f"cannot read the file for rewriting: {exc}") from exc
    baseline = tree.dump(tree.data)
    for path, value in values.items():
        put(tree.data, path, value)
    return keep_original_lines(doc.text, baseline, tree.dump(tree.data))


def tree(doc: Document) -> Tree:
    """The document as ruamel.yaml's round trip loads it: comments, key order, quoting and spelling kept."""
    return _tree(doc.text)


def _tree(text: str) -> Tree:
    from trainspec.read.yaml_roundtrip import RoundTrip

    return RoundTrip(text)


def string_text(value: str, replaced: str | None, styles: Callable[[], Counter[str]]) -> str:
    """A value that replaces another keeps that one's quoting: plain when YAML reads the new value plain as
    the same string (not `on`, `1e-4` or `null`), else in the quotes most of the file's quoted strings use; a
    quoted value keeps its quotes. Where nothing is written, the file's most common way of writing strings."""
    if replaced in _QUOTES:
        return _quoted(value, replaced)
    found = styles()
    if not replaced:  # nothing written there: as most of the file's strings
        most = found.most_common(1)
        if most and most[0][0] in _QUOTES:
            return _quoted(value, most[0][0])
    if value_text(value) == value:
        return value
    return _quoted(value, "'" if found["'"] > found['"'] else '"')


_QUOTES = ("'", '"')


def _quoted(value: str, quote: str) -> str:
    if quote == "'" and value.isprintable():
        return "'" + value.replace("'", "''") + "'"
    return json.dumps(value, ensure_ascii=False)  # JSON's escapes are YAML's double-quoted ones


# -- an edit of one line, re-read alone (the language server, after a keystroke) --------------------------------

LINE_REREAD = True
# Patterns as text: `re` compiles them on first use, so a check, which never edits, does not pay for them.
_STR = _CORE + "str"
_SEQ = _CORE + "seq"
_MAP = _CORE + "map"
_MARKER = r"---|\.\.\.|%"
"""A line starting so is a document marker or a directive."""
_SHARED = r"(?m:^|[\s\[\]{},])[&*][^\s,\[\]{}]|<<"
"""An anchor, alias or merge key (or text that looks like one: then the whole document is parsed)."""


def shares_values(text: str) -> bool:
    return re.search(_SHARED, text) is not None


def reread_line(
    doc: Document,
    line: int,
    before: str,
    after: str,
    keys: Mapping[tuple[int, int], Path],
    values: Mapping[tuple[int, int], Sequence[Path]],
) -> LineEdit | None:
    """Both readings of the line composed alone must have the same shape (the same keys, collections, styles
    and tags); then each changed scalar is resolved as the whole document resolves it."""
    if re.search(_SHARED, after) or re.match(_MARKER, before) or re.match(_MARKER, after):
        return None
    try:
        then, now = yaml.compose(before, Loader=_Loader), yaml.compose(after, Loader=_Loader)
    except yaml.YAMLError:
        return None
    pairs: list[tuple[Any, Any, bool]] = []
    if not _alike(then, now, pairs, key=False):
        return None
    data = doc.data
    readings = dict(doc.yaml_1_1)
    moved: dict[Path, Span] = {}
    builder = _Builder(doc.file)
    for old, new, is_key in pairs:
        where = (line, old.start_mark.column + 1)
        scalar = isinstance(old, yaml.ScalarNode)
        path = keys.get(where) if is_key else _value_at(values.get(where, ()), data, scalar)
        if path is None:
            return None
        span = moved.get(path) or doc.positions[path]
        start, end = Pos(line, new.start_mark.column + 1), Pos(line, new.end_mark.column + 1)
        if is_key:
            moved[path] = Span(start, span.value, end, span.value_end)
            continue
        moved[path] = Span(span.key, start, span.key_end, end)
        if scalar and old.value != new.value:
            if any(p.path == path for p in doc.problems):
                return None  # a problem found in the value read before (too many digits): read it all again
            readings.pop(path, None)
            value = builder.scalar(new, path)
            if builder.problems:
                return None
            data = with_value(data, path, value)
    readings.update(builder.yaml_1_1)
    return LineEdit(data, moved, readings)


def _alike(a: Any, b: Any, pairs: list[tuple[Any, Any, bool]], *, key: bool) -> bool:
    """Whether two readings of a line have the same shape: then each pair of scalars (and flow
    collections) that differ in value or place goes into `pairs`, with whether it is a key."""
    if a is None or b is None:
        return a is None and b is None
    if type(a) is not type(b) or a.tag != b.tag:
        return False
    moved = (a.start_mark.column, a.end_mark.column) != (b.start_mark.column, b.end_mark.column)
    if isinstance(a, yaml.ScalarNode):
        if a.style != b.style or not _untagged(a) or (key and a.value != b.value):
            return False
        if moved or a.value != b.value:
            pairs.append((a, b, key))
        return True
    if key or a.flow_style != b.flow_style or len(a.value) != len(b.value):
        return False
    if a.flow_style and moved:
        pairs.append((a, b, key))
    elif not a.flow_style and a.start_mark.column != b.start_mark.column:
        return False  # a block collection's place is its first entry's, which is not followed here
    if isinstance(a, yaml.SequenceNode):
        return a.tag == _SEQ and all(_alike(x, y, pairs, key=False) for x, y in zip(a.value, b.value, strict=True))
    return a.tag == _MAP and all(
        _alike(ka, kb, pairs, key=True) and _alike(va, vb, pairs, key=False)
        for (ka, va), (kb, vb) in zip(a.value, b.value, strict=True)
    )


def _untagged(node: Any) -> bool:
    """A scalar with no tag of its own: plain, or quoted (a block scalar never fits on one line)."""
    return (node.tag == _PLAIN and not node.style) or (node.tag == _STR and node.style in _QUOTES)


def _value_at(paths: Sequence[Path], data: Any, scalar: bool) -> Path | None:
    """Of the paths whose value starts at one place, the scalar's (or the flow collection's)."""
    for path in paths:
        value = data
        try:
            for part in path:
                value = value[part]
        except (KeyError, IndexError, TypeError):
            continue
        if isinstance(value, dict | list) != scalar:
            return path
    return None


if TYPE_CHECKING:  # the type checker holds this module to what the engine asks of a format
    from trainspec.read import yaml as _this
    from trainspec.spec.formats import Reader, Rewriter, Syntax

    _asked: tuple[Reader, Syntax, Rewriter] = (_this, _this, _this)
