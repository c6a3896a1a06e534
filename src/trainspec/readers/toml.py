"""TOML: parsed by the standard library, located by a small scanner.

`tomllib` parses and checks the syntax (duplicate keys and tables included),
but keeps no positions. The scanner below walks the already-valid text once,
only when a diagnostic needs a place, and records where every key and value
starts. An integer too long for Python to write in decimal is a syntax error
(see `digits.in_digit_limit`), found in the text by a small tokenizer.
"""

from __future__ import annotations

import re
import tomllib

from ..diagnostics import Diagnostic
from ..digits import in_digit_limit, too_many_digits
from ..document import Document, LineIndex, Positions, Span
from ..paths import Path
from . import ReadError, file_error

_AT = re.compile(r"\(at line (\d+), column (\d+)\)")
_BARE = re.compile(r"[A-Za-z0-9_-]+")
_SCALAR_END = re.compile(r"[,\]}\s#]")


def parse(file: str, text: str) -> Document:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        m = _AT.search(message)
        line, col = (int(m.group(1)), int(m.group(2))) if m else (None, None)
        message = _AT.sub("", message).strip().rstrip(".")
        raise ReadError(file_error(file, "syntax-error", f"invalid TOML: {message}", line, col)) from None
    except ValueError:  # tomllib's int() of a decimal integer too long to read
        raise ReadError(_too_long(file, text, _long_integer(text))) from None
    if _RADIX.search(text) and (found := _long_integer(text)):  # 0x/0o/0b ones are read whatever their length
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

    def record(self, path: Path, key: int | None, value: int | None) -> None:
        if path not in self.out:
            self.out[path] = Span(
                self.pos(key) if key is not None else None,
                self.pos(value) if value is not None else None,
            )

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
                base = (*self.resolve(keys[:-1], start), keys[-1])
                index = self.array_len.get(base, 0)
                self.array_len[base] = index + 1
                self.record(base, start, start)
                table = (*base, index)
                self.record(table, None, start)
            elif s[start] == "[":
                self.i += 1
                table = self.resolve(self.keys(), start)
                self.i += 1  # ]
                self.record(table, start, start)
            else:
                self.pair(table)

    def resolve(self, keys: list[str], start: int) -> Path:
        """Map header keys to a path, stepping into the latest element of arrays of tables."""
        path: Path = ()
        for key in keys:
            path = (*path, key)
            self.record(path, start, start)
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
        s = self.s
        start = self.i
        self.record(path, key_start, start)
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
