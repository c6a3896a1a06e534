"""TOML: parsed by the standard library, located by a small scanner.

`tomllib` parses and checks the syntax (duplicate keys and tables included),
but keeps no positions. The scanner below walks the already-valid text once,
only when a diagnostic needs a place, and records where every key and value
starts. An integer too long for Python to write in decimal is a syntax error
(see `digits.in_digit_limit`), found in the text by a small tokenizer.

rtoml (compiled) parses about ten times faster than tomllib. It also reads
TOML 1.1, which tomllib refuses, and gives offset date-times its own time-zone
class, so it parses only text that holds none of what sets the two apart;
tomllib reads the rest, and says what is wrong with text rtoml refuses.

What editing asks of TOML (`formats.Syntax`) follows the reader: the key or
value typed at a cursor (in the table the header above it opens), keys and
values as TOML writes them, where a new entry goes, and values set in a
file's text where the scanner found them.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import rtoml

from trainspec.read import syntax
from trainspec.read.files import file_error
from trainspec.spec.codes import FILE_NOT_READABLE, SYNTAX_ERROR
from trainspec.spec.diagnostics import Diagnostic
from trainspec.spec.digits import in_digit_limit, too_many_digits
from trainspec.spec.document import Document, LineEdit, LineIndex, Located, Offsets, Pos, Positions, ReadError, Span
from trainspec.spec.errors import RewriteError
from trainspec.spec.formats import line_of, unquote
from trainspec.spec.limits import KEY_PARTS
from trainspec.spec.paths import Path, format_path, with_value
from trainspec.spec.result import Outcome
from trainspec.spec.wording import show

if TYPE_CHECKING:
    from trainspec.spec.formats import Place

_AT = re.compile(r"\(at line (\d+), column (\d+)\)")
_BARE = re.compile(r"[A-Za-z0-9_-]+")
_SCALAR_END = re.compile(r"[,\]}\s#]")


_TIME = re.compile(r":(?<=\d:)\d")
"""A time (TOML 1.1 lets it leave out the seconds; rtoml gives an offset another class than tomllib's)."""
_STRING_OR_COMMENT = re.compile(
    r'"""(?:\\.|[^\\])*?"""(?:""?)?|\'\'\'.*?\'\'\'(?:\'\'?)?|"(?:\\.|[^"\\\n])*+"|\'[^\'\n]*+\'|#[^\n]*+',
    re.S,
)
_TRAILING_COMMA = re.compile(r",\s*}")


def _inline_tables_of_1_0(text: str) -> bool:
    """Each inline table on one line and without a trailing comma, as TOML 1.0 (tomllib) has them.

    With strings and comments left out, a table that goes on past its line leaves the line
    with more `{` than `}`.
    """
    if "{" not in text:
        return True
    code = _STRING_OR_COMMENT.sub("", text)
    return not _TRAILING_COMMA.search(code) and all(line.count("{") == line.count("}") for line in code.split("\n"))


_HEADER = re.compile(r"\n[ \t]*\[\[?([^\]\n]*)\]")
_HEADER_PART = re.compile(r"""[ \t]*+([A-Za-z0-9_-]++|"[^"\\\n]*+"|'[^'\n]*+')[ \t]*+(\.?)""")
"""One part of a table's name (quoted without escapes), and the dot after it."""


def _tables_in_order(text: str) -> bool:
    """No table's header after a header below it (`[a]` after `[a.b]`): rtoml puts such a table
    where its header is, tomllib where the header below it made it. A name with an escape is not compared."""
    below: set[tuple[str, ...]] = set()
    for m in _HEADER.finditer("\n" + text):
        parts = _header_parts(m[1])
        if parts is None or parts in below:
            return False
        below.update(parts[:n] for n in range(1, len(parts)))
    return True


def _header_parts(name: str) -> tuple[str, ...] | None:
    """The keys of a table's name (`a."b.c"` is a, b.c); None for one this reading does not take."""
    parts: list[str] = []
    i = 0
    while True:
        m = _HEADER_PART.match(name, i)
        if m is None:
            return None
        part = m[1]
        parts.append(part[1:-1] if part[0] in "\"'" else part)
        i = m.end()
        if not m[2]:
            return tuple(parts) if i == len(name) else None


def _rtoml_reads_as_tomllib(text: str) -> bool:
    """Nothing in `text` that rtoml reads otherwise: TOML 1.1 (the `\\e` and `\\x` escapes, times
    without seconds, inline tables over several lines), times with an offset, a byte-order mark,
    tables in another order.

    (An integer past rtoml's range it refuses; tomllib then reads it.)
    """
    for only_tomllib in ("\ufeff", "\\e", "\\x"):
        if only_tomllib in text:
            return False
    return not _TIME.search(text) and _inline_tables_of_1_0(text) and _tables_in_order(text)


def _loads(text: str) -> dict[str, Any]:
    """The data of TOML text, exactly as tomllib reads it."""
    if _rtoml_reads_as_tomllib(text):
        try:
            data: dict[str, Any] = rtoml.loads(text)
            return data
        except rtoml.TomlParsingError:
            pass  # tomllib says what is wrong, and where
    import tomllib  # imported only for text rtoml does not read as it does

    return tomllib.loads(text)


_PART = r"""(?:[A-Za-z0-9_-]++|"(?:\\.|[^"\\\n])*+"|'[^'\n]*+')"""
_DOTTED_KEY = re.compile(rf"{_PART}(?:[ \t]*+\.[ \t]*+{_PART})++")


def _within_key_parts(file: str, text: str) -> None:
    """ReadError for a dotted key or table header longer than `limits.KEY_PARTS`: tomllib keeps every
    prefix of a key, so 20,000 parts (130 KB) would take 1.6 GB. Counted in the text, before parsing
    (a dotted value inside a string may count too, which only makes the bound stricter)."""
    limit = KEY_PARTS.value
    if text.count(".") <= limit:
        return
    for m in _DOTTED_KEY.finditer(text):
        parts = m[0].count(".") + 1
        if parts > limit:
            line = text.count("\n", 0, m.start()) + 1
            message = KEY_PARTS.exceeded(f"a dotted key of {parts:,} parts")
            column = m.start() - text.rfind("\n", 0, m.start())
            raise ReadError(file_error(file, FILE_NOT_READABLE.id, message, line, column), Outcome.OVER_LIMIT)


def _decode_error(exc: ValueError) -> bool:
    """Whether tomllib refused the text (it is imported only to read it, so then it is imported)."""
    tomllib = sys.modules.get("tomllib")
    return tomllib is not None and isinstance(exc, tomllib.TOMLDecodeError)


def parse(file: str, text: str) -> Document:
    _within_key_parts(file, text)
    try:
        data = _loads(text)
    except ValueError as exc:
        if not _decode_error(exc):  # tomllib's int() of a decimal integer too long to read
            raise ReadError(_too_long(file, text, _long_integer(text))) from None
        message = str(exc)
        m = _AT.search(message)
        line, col = (int(m.group(1)), int(m.group(2))) if m else (None, None)
        reason = _AT.sub("", message).strip().rstrip(".")
        if reason.endswith("(at end of document)"):
            reason = reason.removesuffix("(at end of document)").strip()
            line, col = text.count("\n") + 1, len(text) - text.rfind("\n")
        raise ReadError(file_error(file, SYNTAX_ERROR.id, syntax.toml(reason, text, line), line, col)) from None
    # 0x/0o/0b integers are read whatever their length
    if ("0x" in text or "0o" in text or "0b" in text) and _RADIX.search(text) and (found := _long_integer(text)):
        raise ReadError(_too_long(file, text, found))
    return Document(file, "toml", text, data, lambda: locate(text))


_RADIX = re.compile(r"\b0[xob]")
_SKIPPED_OR_INTEGER = re.compile(
    r'"""(?:\\.|[^\\])*?"""|\'\'\'.*?\'\'\'|"(?:\\.|[^"\\\n])*+"|\'[^\'\n]*+\'|#[^\n]*+'
    r"|(?<![\w.+-])(0x[0-9A-Fa-f](?:_?[0-9A-Fa-f])*+|0o[0-7](?:_?[0-7])*+|0b[01](?:_?[01])*+|[+-]?\d(?:_?\d)*+)"
    r"(?![\w.:+-])",
    re.S,
)
"""A string or comment (matched only to be skipped), or an integer as TOML writes one (group 1)."""


def _long_integer(text: str) -> re.Match[str] | None:
    """The first integer too long to write in decimal (see `digits.in_digit_limit`)."""
    for m in _SKIPPED_OR_INTEGER.finditer(text):
        if m[1]:
            try:
                in_digit_limit(int(m[1], 0 if m[1][1:2] in ("x", "o", "b") else 10))
            except ValueError:
                return m
    return None


def _too_long(file: str, text: str, found: re.Match[str] | None) -> Diagnostic:
    pos = LineIndex(text).pos(found.start(1)) if found else None
    return file_error(file, SYNTAX_ERROR.id, too_many_digits(), pos.line if pos else None, pos.column if pos else None)


def locate(text: str) -> Positions:
    return _Scanner(text).run()


# The scanner reads text tomllib (or rtoml) accepted, so these need not reject anything.
_BLANK = re.compile(r"(?:[ \t\r\n]++|#[^\n]*+)*+")
"""Spaces, newlines and comments: what may come between statements and array items."""
_SPACE = re.compile(r"(?:[ \t]++|#[^\n]*+)*+")
_KEY = re.compile(r'[A-Za-z0-9_-]++|"(?:\\.|[^"\\])*+"|\'[^\']*+\'', re.S)
_VALUE = (
    r'"""(?:\\.|[^\\])*?"""(?:"*+)|\'\'\'.*?\'\'\'(?:\'*+)|"(?:\\.|[^"\\])*+"|\'[^\']*+\''
    # a number, boolean or date, which may hold one inner space ("1979-05-27 07:32:00")
    r"|[^,\]}\s#]*+(?: (?=\d\d:)[^,\]}\s#]*+)?"
)
_SCALAR = re.compile(_VALUE, re.S)
"""A string, number, boolean or date: a value that is not an array or inline table."""
_STATEMENT = re.compile(
    _BLANK.pattern + r"(?:"
    rf"([A-Za-z0-9_-]++)[ \t]*+=[ \t]*+((?![\[{{])(?:{_VALUE}))"  # key = value
    r"|(\[\[?)([A-Za-z0-9_-]++(?:\.[A-Za-z0-9_-]++)*+)\]\]?"  # [table] or [[array.of.tables]]
    r")?",
    re.S,
)
"""What comes before the next statement, and the statement if it is plain: a bare key and a value that is not
an array or inline table, or a header of bare keys. Most lines are one of these, read in one match."""


def _past(pattern: re.Pattern[str], s: str, i: int) -> int:
    """Where `pattern`, which also matches the empty string, ends when matched at `i`."""
    m = pattern.match(s, i)
    assert m is not None
    return m.end()


def _key(raw: str) -> str:
    """A key as written: quoted keys without escapes stand for their text, the rest tomllib decodes."""
    if raw[0] == "'" or (raw[0] == '"' and "\\" not in raw):
        return raw[1:-1]
    if raw[0] == '"':
        import tomllib

        key: str = tomllib.loads(f"k = {raw}")["k"]
        return key
    return raw


class _Scanner:
    """Walks TOML text once, recording the first place each path is written.

    Each statement, key and value is one regex match; it records character offsets, which become lines
    and columns only for the paths asked about (`Located`).
    """

    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0
        self.index = LineIndex(text)
        self.out: dict[Path, Offsets] = {}
        self.array_len: dict[Path, int] = {}

    def run(self) -> Positions:
        s, n, out = self.s, len(self.s), self.out
        statement = _STATEMENT.match
        table: Path = ()
        while True:
            m = statement(s, self.i)
            assert m is not None, "it matches the empty string too"
            kind = m.lastindex
            self.i = m.end()
            if kind == 2:  # key = value
                path = (*table, m[1])
                if path not in out:
                    key, key_end = m.span(1)
                    out[path] = (key, m.start(2), key_end, self.i)
            elif kind == 4:
                table = self.table(m[4].split("."), m.start(3), self.i, array=len(m[3]) == 2)
            elif self.i >= n:
                return Located(out, self.index)
            elif s[self.i] != "[":
                self.pair(table)
            else:
                start = self.i
                array = s.startswith("[[", start)
                self.i += 2 if array else 1
                keys = self.keys()[0]
                self.i += 2 if array else 1  # ] or ]]
                table = self.table(keys, start, self.i, array)

    def table(self, keys: list[str], start: int, end: int, array: bool) -> Path:
        """The path of the table a [header] or [[header]] from `start` to `end` opens; records its keys,
        each (if first written here) with the header as both its key and its value."""
        out, array_len = self.out, self.array_len
        header: Offsets = (start, start, end, end)
        path: Path = ()
        for n, key in enumerate(keys, 1):
            path += (key,)
            if path not in out:
                out[path] = header
            if path in array_len and (n < len(keys) or not array):  # into its latest table
                path += (array_len[path] - 1,)
        if array:
            array_len[path] = index = array_len.get(path, 0) + 1
            path += (index - 1,)
            header = (None, start, None, end)
        if path not in out:
            out[path] = header
        return path

    def keys(self) -> tuple[list[str], int]:
        """The parts of the (dotted) key at the cursor, and where its last part ends; moves past them."""
        s = self.s
        keys = []
        while True:
            m = _KEY.match(s, _past(_SPACE, s, self.i))
            assert m is not None, "tomllib accepted the text, so a key is here"
            keys.append(_key(m.group()))
            self.i = _past(_SPACE, s, m.end())
            if not s.startswith(".", self.i):
                return keys, m.end()
            self.i += 1

    def pair(self, table: Path) -> None:
        key_start = self.i
        keys, key_end = self.keys()
        self.i = _past(_SPACE, self.s, self.i + 1)  # past =
        if len(keys) > 1:
            dotted = (key_start, None, key_end, None)
            for n in range(1, len(keys)):
                self.out.setdefault(table + tuple(keys[:n]), dotted)
        self.value(table + tuple(keys), key_start, key_end)

    def value(self, path: Path, key: int | None, key_end: int | None) -> None:
        """Scan the value at the cursor, recording it if first written here; its key (if any) is at `key`."""
        s, out = self.s, self.out
        start = self.i
        first = path not in out
        if s[start] not in "[{":
            self.i = _past(_SCALAR, s, start)
            if first:
                out[path] = (key, start, key_end, self.i)
            return
        if first:  # recorded before what it holds, so paths keep the order of the text
            out[path] = (key, start, key_end, None)
        self.i += 1
        if s[start] == "[":
            index = 0
            while True:
                self.i = _past(_BLANK, s, self.i)
                if s[self.i] == "]":
                    break
                self.value((*path, index), None, None)
                index += 1
                self.i = _past(_BLANK, s, self.i)
                if s[self.i] == ",":
                    self.i += 1
        else:
            while True:
                self.i = _past(_SPACE, s, self.i)
                if s[self.i] == "}":
                    break
                self.pair(path)
                self.i = _past(_SPACE, s, self.i)
                if s[self.i] == ",":
                    self.i += 1
        self.i += 1
        if first:
            out[path] = (*out[path][:3], self.i)


# -- editing: what completion, quick fixes and `plan --apply` ask of TOML (`formats.Syntax`) -----------------------
# Patterns as text: `re` compiles them on first use, so a check, which never edits, does not pay for them.

CLOSING = ""
DIRECTIVE_ANYWHERE = False
"""taplo reads `#:schema` only in the leading comment block."""
EDITOR_SETTINGS: tuple[str, ...] = ("evenBetterToml.schema.associations",)
LANGUAGE_SERVER = "taplo"

_HEADER_LINE = r"\s*\[(\[)?\s*([^\]]+?)\s*\]"
_TYPED_VALUE = r"\s*([\w.\"-]+)\s*=\s*(\S*)$"
_TYPED_KEY = r"\s*([\w.-]*)$"
_TYPED_TABLE = r"\s*\[\[?\s*([\w.-]*)$"


def place(lines: Sequence[str], line: int, column: int) -> Place | None:
    """The key or value typed at the cursor: in the table the header above it opens."""
    before = line_of(lines, line)[:column]
    table: Path = ()
    for n in range(line - 1, -1, -1):
        m = re.match(_HEADER_LINE, line_of(lines, n))
        if m:
            table = tuple(unquote(p) for p in m.group(2).split("."))
            if m.group(1):
                table = (*table, 0)
            break
    if (m := re.match(_TYPED_TABLE, before)) is not None:
        parts = m.group(1).split(".")
        return "table", tuple(parts[:-1]), parts[-1]
    if (m := re.match(_TYPED_VALUE, before)) is not None:
        return "value", (*table, *(unquote(p) for p in m.group(1).split("."))), m.group(2)
    if (m := re.match(_TYPED_KEY, before)) is not None:
        parts = m.group(1).split(".")
        return "key", (*table, *parts[:-1]), parts[-1]
    return None


def key_text(name: str, *, table: bool, section: bool) -> str:
    return name if table else f"{name} = "


def value_text(value: Any) -> str:
    """A value as TOML writes it; TOML has no null, so None is the empty string."""
    return '""' if value is None else json.dumps(value, ensure_ascii=False)


def value_lead(before: str) -> str:
    return ""


def entry(key: str, value: str) -> str:
    return f"{key} = {value}"


def insertion(text: str, positions: Positions, target: Path, line: str) -> tuple[int, str] | None:
    """A top-level key before the first table; a table's key after its header; else a new table at the end."""
    parent = target[:-1]
    lines = text.split("\n")
    starts = LineIndex(text).starts
    if not parent:
        header = next((n for n in range(len(lines)) if lines[n].lstrip().startswith("[")), None)
        return (starts[header] if header is not None else len(text)), line + "\n"
    span = positions.get(parent)
    if span is not None and span.key is not None and line_of(lines, span.key.line - 1).lstrip().startswith("["):
        return (starts[span.key.line] if span.key.line < len(starts) else len(text)), line + "\n"
    table = ".".join(p if _BARE.fullmatch(p) else f'"{p}"' for p in map(str, parent))
    return len(text), f"\n[{table}]\n{line}\n"


def set_values(doc: Document, values: Mapping[Path, Any]) -> str:
    """TOML is edited as text: a written value is replaced where the reader found it, a missing key goes
    after the last line of its table (or into a new table at the end)."""
    text, positions = doc.text, doc.positions
    lines = text.splitlines(keepends=True)
    newline = "\r\n" if "\r\n" in text else "\n"
    appended: dict[Path, list[str]] = {}
    inserts: dict[int, list[str]] = {}  # after line n (1-based), these lines
    for path, value in values.items():
        written, table = positions.get(path), path[:-1]
        new = f"{path[-1]} = {_written(value)}"
        if written is not None:
            start, end = written.value, written.value_end
            if start is None or end is None or start.line != end.line:
                raise RewriteError(f"`{format_path(path)}` spans lines; set it by hand")
            old = lines[start.line - 1]
            lines[start.line - 1] = old[: start.column - 1] + _written(value) + old[end.column - 1 :]
        elif table in positions and _is_header(lines, positions[table]):
            inserts.setdefault(_last_line(positions, table), []).append(new)
        elif table in positions or not table:
            raise RewriteError(f"`{format_path(table) or 'the top level'}` is not a [table] header; set it by hand")
        else:
            appended.setdefault(table, []).append(new)
    out: list[str] = []
    for n, old in enumerate(lines, 1):
        out.append(old)
        if n in inserts:
            if not old.endswith("\n"):
                out[-1] += newline
            out.extend(added + newline for added in inserts[n])
    for table, entries in appended.items():
        if out and not out[-1].endswith("\n"):
            out[-1] += newline
        out.append(f"{newline}[{format_path(table)}]{newline}")
        out.extend(added + newline for added in entries)
    return "".join(out)


def _is_header(lines: list[str], span: Span) -> bool:
    return span.key is not None and lines[span.key.line - 1].lstrip().startswith("[")


def _last_line(positions: Positions, table: Path) -> int:
    """The last line a table's own entries use (its header line when it has none)."""
    found = 0
    for path, span in positions.items():
        if path[: len(table)] == table:
            found = max(found, *(p.line for p in (span.key, span.value, span.value_end) if p is not None))
    return found


def _written(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    raise RewriteError(f"cannot write {value!r} into TOML here")


def string_text(value: str, replaced: str | None, styles: Callable[[], Counter[str]]) -> str:
    """A literal string (`'...'`) stays one where the new value can be one; else a basic string."""
    return f"'{value}'" if replaced == "'" and "'" not in value and value.isprintable() else show(value)


LINE_REREAD = True


def shares_values(text: str) -> bool:
    return False


def reread_line(
    doc: Document,
    line: int,
    before: str,
    after: str,
    keys: Mapping[tuple[int, int], Path],
    values: Mapping[tuple[int, int], Sequence[Path]],
) -> LineEdit | None:
    """A `key = value` line (a bare or quoted key, a value that is no table, date or time), or a comment or
    blank line."""
    if before.lstrip().startswith("[") or after.lstrip().startswith("["):
        return None  # a table header
    try:
        then, now = parse(doc.file, before), parse(doc.file, after)
    except ReadError:
        return None
    if not then.data and not now.data:
        return LineEdit(doc.data, {})
    if len(then.data) != 1 or then.data.keys() != now.data.keys():
        return None
    (key,) = then.data
    old, new = then.data[key], now.data[key]
    if not _shaped_alike(old, new):
        return None
    where = then.positions[(key,)].key
    path = keys.get((line, where.column)) if where is not None else None
    if path is None or path[-1] != key or now.positions[(key,)].key != where:
        return None
    for rel, span in then.positions.items():
        if doc.positions.get((*path, *rel[1:])) != _on_line(span, line):
            return None  # the line alone is not read as the document reads it
    moved = {(*path, *rel[1:]): _on_line(span, line) for rel, span in now.positions.items()}
    return LineEdit(with_value(doc.data, path, new), moved)


def _shaped_alike(a: Any, b: Any) -> bool:
    """Two values with the same paths inside: scalars, or lists of as many values each alike; no tables,
    dates or times."""
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_shaped_alike(x, y) for x, y in zip(a, b, strict=True))
    scalars = (str, int, float, bool)
    return isinstance(a, scalars) and isinstance(b, scalars)


def _on_line(span: Span, line: int) -> Span:
    """A span read on the first line of a text alone, as on `line` of the document."""

    def at(pos: Pos | None) -> Pos | None:
        return None if pos is None else Pos(line, pos.column)

    return Span(at(span.key), at(span.value), at(span.key_end), at(span.value_end))


if TYPE_CHECKING:  # the type checker holds this module to what the engine asks of a format
    from trainspec.read import toml as _this
    from trainspec.spec.formats import Reader, Syntax

    _asked: tuple[Reader, Syntax] = (_this, _this)
