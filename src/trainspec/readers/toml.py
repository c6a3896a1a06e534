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
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import replace
from typing import Any

import rtoml

from ..diagnostics import Diagnostic
from ..digits import in_digit_limit, too_many_digits
from ..document import Document, LineIndex, Positions, Span
from ..paths import Path
from . import ReadError, file_error, syntax

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


def _tables_in_order(text: str) -> bool:
    """No table's header after a header below it (`[a]` after `[a.b]`): rtoml puts such a table
    where its header is, tomllib where the header below it made it. Quoted names are not compared."""
    below: set[str] = set()
    for m in _HEADER.finditer("\n" + text):
        name = "".join(m[1].split())
        if name in below or '"' in name or "'" in name:
            return False
        parts = name.split(".")
        below.update(".".join(parts[:n]) for n in range(1, len(parts)))
    return True


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
    return tomllib.loads(text)


def parse(file: str, text: str) -> Document:
    try:
        data = _loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        m = _AT.search(message)
        line, col = (int(m.group(1)), int(m.group(2))) if m else (None, None)
        reason = _AT.sub("", message).strip().rstrip(".")
        if reason.endswith("(at end of document)"):
            reason = reason.removesuffix("(at end of document)").strip()
            line, col = text.count("\n") + 1, len(text) - text.rfind("\n")
        raise ReadError(file_error(file, "syntax-error", syntax.toml(reason, text, line), line, col)) from None
    except ValueError:  # tomllib's int() of a decimal integer too long to read
        raise ReadError(_too_long(file, text, _long_integer(text))) from None
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
    return file_error(file, "syntax-error", too_many_digits(), pos.line if pos else None, pos.column if pos else None)


def locate(text: str) -> Positions:
    return _Scanner(text).run()


class _Scanner:
    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0
        self.pos = LineIndex(text).pos
        self.out: Positions = {}
        self.array_len: dict[Path, int] = {}
        self.key_end = 0
        """Where the last key read ends."""

    def record(self, path: Path, key: int | None, value: int | None, end: int | None = None) -> None:
        """The first place `path` is written; `end` closes both its key and its value (a header)."""
        if path not in self.out:
            self.out[path] = Span(
                self.pos(key) if key is not None else None,
                self.pos(value) if value is not None else None,
                self.pos(self.key_end if end is None else end) if key is not None else None,
                self.pos(end) if end is not None and value is not None else None,
            )

    def close(self, path: Path, value: int, end: int) -> None:
        """Record where the value of `path`, written at `value`, ends (if this is its first place)."""
        span = self.out.get(path)
        if span is not None and span.value == self.pos(value) and span.value_end is None:
            self.out[path] = replace(span, value_end=self.pos(end))

    def run(self) -> Positions:
        table: Path = ()
        s = self.s
        while True:
            self.skip(newlines=True)
            if self.i >= len(s):
                return self.out
            start = self.i
            if s.startswith("[[", start):
                self.i += 2
                keys = self.keys()
                self.i += 2  # ]]
                base = (*self.resolve(keys[:-1], start, self.i), keys[-1])
                index = self.array_len.get(base, 0)
                self.array_len[base] = index + 1
                self.record(base, start, start, self.i)
                table = (*base, index)
                self.record(table, None, start, self.i)
            elif s[start] == "[":
                self.i += 1
                keys = self.keys()
                self.i += 1  # ]
                table = self.resolve(keys, start, self.i)
                self.record(table, start, start, self.i)
            else:
                self.pair(table)

    def resolve(self, keys: list[str], start: int, end: int) -> Path:
        """Map header keys to a path, stepping into the latest element of arrays of tables."""
        path: Path = ()
        for key in keys:
            path = (*path, key)
            self.record(path, start, start, end)
            if path in self.array_len:
                path = (*path, self.array_len[path] - 1)
        return path

    def skip(self, newlines: bool) -> None:
        s, n = self.s, len(self.s)
        while self.i < n:
            c = s[self.i]
            if c in " \t" or (newlines and c in "\r\n"):
                self.i += 1
            elif c == "#":
                end = s.find("\n", self.i)
                self.i = n if end < 0 else end
            else:
                return

    def keys(self) -> list[str]:
        keys = []
        while True:
            self.skip(newlines=False)
            keys.append(self.key())
            self.key_end = self.i
            self.skip(newlines=False)
            if self.i < len(self.s) and self.s[self.i] == ".":
                self.i += 1
                continue
            return keys

    def key(self) -> str:
        s = self.s
        if s[self.i] in "\"'":
            start = self.i
            self.string()
            raw = s[start : self.i]
            return tomllib.loads(f"k = {raw}")["k"]  # the library decodes escapes
        m = _BARE.match(s, self.i)
        assert m is not None, "tomllib accepted the text, so a key is here"
        self.i = m.end()
        return m.group()

    def pair(self, table: Path) -> None:
        key_start = self.i
        keys = self.keys()
        self.i += 1  # =
        self.skip(newlines=False)
        for n in range(1, len(keys)):
            self.record(table + tuple(keys[:n]), key_start, None)
        self.value(table + tuple(keys), key_start)

    def value(self, path: Path, key_start: int | None) -> None:
        start = self.i
        self.record(path, key_start, start)
        self.scan_value(path)
        self.close(path, start, self.i)

    def scan_value(self, path: Path) -> None:
        s = self.s
        start = self.i
        c = s[start]
        if c == "[":
            self.i += 1
            index = 0
            while True:
                self.skip(newlines=True)
                if s[self.i] == "]":
                    self.i += 1
                    return
                self.value((*path, index), None)
                index += 1
                self.skip(newlines=True)
                if s[self.i] == ",":
                    self.i += 1
        elif c == "{":
            self.i += 1
            while True:
                self.skip(newlines=False)
                if s[self.i] == "}":
                    self.i += 1
                    return
                self.pair(path)
                self.skip(newlines=False)
                if s[self.i] == ",":
                    self.i += 1
        elif c in "\"'":
            self.string()
        else:
            m = _SCALAR_END.search(s, self.i)
            # dates may hold one inner space ("1979-05-27 07:32:00")
            end = m.start() if m else len(s)
            if m and s[end] == " " and re.match(r"\d\d:", s[end + 1 : end + 4]):
                m2 = _SCALAR_END.search(s, end + 1)
                end = m2.start() if m2 else len(s)
            self.i = end

    def string(self) -> None:
        s = self.s
        quote = s[self.i]
        if s.startswith(quote * 3, self.i):
            delim = quote * 3
            self.i += 3
            while True:
                if quote == '"' and s[self.i] == "\\":
                    self.i += 2
                    continue
                if s.startswith(delim, self.i):
                    self.i += 3
                    while self.i < len(s) and s[self.i] == quote:  # up to two quotes may close it
                        self.i += 1
                    return
                self.i += 1
        self.i += 1
        while s[self.i] != quote:
            self.i += 2 if quote == '"' and s[self.i] == "\\" else 1
        self.i += 1
