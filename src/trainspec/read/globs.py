"""Globs and directory walks that a hostile pattern or tree cannot make endless.

Patterns come from project configurations and the command line, trees from
whatever a pull request holds, so:

- Matching takes time linear in the path for any pattern: `Glob` runs the
  pattern as a set of states over the path's characters (no backtracking), so
  `**/**/**/…` costs what `**/` costs.
- One symbolic-link policy for walks and globs alike: a symbolic link to a file
  is a file; a symbolic link to a directory is not entered (as `os.walk` and
  Python 3.13's `Path.glob` do by default), so a link to `/` or to `.` in a
  repository neither leaks files from outside it nor loops. A directory named
  itself (a command-line argument) is walked even when it is a link.
- Each directory is entered once, by (st_dev, st_ino), whatever mounts do.
- A directory that cannot be listed is reported to the caller (`Walk.unreadable`),
  never passed over in silence.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

_MAGIC = "*?["


def is_glob(text: str) -> bool:
    return any(c in text for c in _MAGIC)


@dataclass(frozen=True)
class _Token:
    kind: str  # "char", "one", "class", "star", "any", "skip"
    text: str = ""
    ranges: tuple[tuple[str, str], ...] = ()
    negate: bool = False
    jump: int = 0


class Glob:
    """A glob relative to a root: `*` and `?` stay within a folder, `**` crosses folders, `**/` may
    match nothing, `[...]` (`[!...]`) is a character class; a leading `./` and a trailing `/` are
    dropped. `fullmatch` takes a `/`-separated path and time linear in its length."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        text = (pattern.rstrip("/") or pattern).removeprefix("./")
        tokens: list[_Token] = []
        i = 0
        while i < len(text):
            if text.startswith("**/", i):
                tokens += [_Token("skip", jump=3), _Token("any"), _Token("char", "/")]
                i += 3
            elif text.startswith("**", i):
                tokens.append(_Token("any"))
                i += 2
            elif text[i] == "*":
                tokens.append(_Token("star"))
                i += 1
            elif text[i] == "?":
                tokens.append(_Token("one"))
                i += 1
            elif text[i] == "[" and "]" in text[i + 2 :]:
                end = text.index("]", i + 2)  # `[]a]`: a `]` right after the `[` is a member
                inner = text[i + 1 : end]
                negate = inner.startswith("!")
                tokens.append(_Token("class", ranges=_ranges(inner[negate:]), negate=negate))
                i = end + 1
            else:
                tokens.append(_Token("char", text[i]))
                i += 1
        self._tokens = tuple(tokens)

    def __repr__(self) -> str:
        return f"Glob({self.pattern!r})"

    def fullmatch(self, path: str) -> bool:
        states = self._closure({0})
        for c in path:
            states = self._closure({n for s in states for n in self._step(s, c)})
            if not states:
                return False
        return len(self._tokens) in states

    def _closure(self, states: set[int]) -> set[int]:
        """`states` with every state reachable without reading a character (a `*` or `**` matching nothing)."""
        todo, seen = list(states), set(states)
        while todo:
            s = todo.pop()
            if s == len(self._tokens):
                continue
            token = self._tokens[s]
            nxt = s + token.jump if token.kind == "skip" else s + 1 if token.kind in ("star", "any") else None
            extra = (s + 1,) if token.kind == "skip" else ()
            for n in (nxt, *extra):
                if n is not None and n not in seen:
                    seen.add(n)
                    todo.append(n)
        return seen

    def _step(self, s: int, c: str) -> tuple[int, ...]:
        if s == len(self._tokens):
            return ()
        token = self._tokens[s]
        kind = token.kind
        if kind == "char":
            return (s + 1,) if c == token.text else ()
        if kind == "one":
            return (s + 1,) if c != "/" else ()
        if kind == "class":
            inside = any(low <= c <= high for low, high in token.ranges)
            return (s + 1,) if c != "/" and inside != token.negate else ()
        if kind == "star":
            return (s,) if c != "/" else ()
        if kind == "any":
            return (s,)
        return ()

    def regex(self) -> str:
        """The glob as a regular expression (ECMA-262, unanchored) for `GlobSet`: the same paths, and no
        construct that backtracks."""
        out, i, tokens = [], 0, self._tokens
        while i < len(tokens):
            token = tokens[i]
            if token.kind == "skip":  # always `skip, any, /`: `**/` may match nothing
                out.append(r"(?:[\s\S]*/)?")
                i += 3
                continue
            out.append(_TOKEN_REGEX.get(token.kind) or _class_regex(token))
            i += 1
        return "".join(out)


_TOKEN_REGEX = {"one": "[^/]", "star": "[^/]*", "any": r"[\s\S]*"}


def _literal(c: str) -> str:
    """One character as a regex matches it: ASCII punctuation as a hexadecimal escape (valid in every
    dialect, inside a class too), anything else as itself."""
    return f"\\x{ord(c):02x}" if c.isascii() and not c.isalnum() else c


def _class_regex(token: _Token) -> str:
    if token.kind == "char":
        return _literal(token.text)
    ranges = []
    for low, high in token.ranges:  # a class never matches `/`: split a range around it
        parts = [(low, high)] if not low <= "/" <= high else [(low, "."), ("0", high)]
        ranges += [f"{_literal(a)}-{_literal(b)}" if a != b else _literal(a) for a, b in parts if a <= b]
    if token.negate:
        return f"[^{''.join(ranges)}/]"
    return f"[{''.join(ranges)}]" if ranges else "[^\\s\\S]"


class GlobSet:
    """Several globs matched at once: one regular expression run by Rust's `regex` engine (through
    jsonschema-rs, already a dependency), in time linear in the path however many globs there are.
    A project's `exclude` and each entry's `paths` are compiled once, not matched one glob at a time per
    file (3,000 globs over 300 files took minutes)."""

    def __init__(self, globs: tuple[Glob, ...]) -> None:
        self.globs = globs
        self._match: Callable[[str], bool] | None = None
        if globs:
            try:
                import jsonschema_rs

                pattern = "^(?:" + "|".join(g.regex() for g in globs) + ")$"
                self._match = jsonschema_rs.validator_for({"pattern": pattern}).is_valid
            except Exception:  # past the engine's size limit: each glob on its own, as linear
                self._match = None

    def fullmatch(self, path: str) -> bool:
        if self._match is not None:
            return bool(self._match(path))
        return any(g.fullmatch(path) for g in self.globs)


def _ranges(inner: str) -> tuple[tuple[str, str], ...]:
    """The (first, last) character ranges of a class body: `a-z0` is (a, z), (0, 0)."""
    out, i = [], 0
    while i < len(inner):
        if i + 2 < len(inner) and inner[i + 1] == "-":
            out.append((inner[i], inner[i + 2]))
            i += 3
        else:
            out.append((inner[i], inner[i]))
            i += 1
    return tuple(out)


@dataclass
class Walk:
    """A walk of one directory tree under the policy above; `unreadable` collects (directory, reason);
    `on_folder` is told of each folder before the walk lists it (the result cache records folders so)."""

    skip_dir: Callable[[str], bool] = lambda name: name.startswith(".")
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    on_folder: Callable[[str], None] | None = None
    _seen: set[tuple[int, int]] = field(default_factory=set)

    def files(self, top: str, max_depth: int | None = None) -> Iterator[tuple[str, bool]]:
        """(path, is a directory) of every entry below `top`, in os.walk's order (a folder's files, sorted,
        then each of its folders, sorted, and what is below it), down to `max_depth` levels below `top`."""
        yield from self._walk(top, 0, max_depth)

    def _walk(self, folder: str, depth: int, max_depth: int | None) -> Iterator[tuple[str, bool]]:
        try:
            st = os.stat(folder)
            if (st.st_dev, st.st_ino) in self._seen:
                return
            self._seen.add((st.st_dev, st.st_ino))
            if self.on_folder is not None:
                self.on_folder(folder)
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            self.unreadable.append((folder, exc.strerror or str(exc)))
            return
        folders = []
        for entry in entries:
            path = os.path.join(folder, entry.name)
            kind = _kind(entry, path)
            if kind == "file":
                yield path, False
            elif kind == "dir" and not self.skip_dir(entry.name):
                folders.append(path)
        for path in folders:  # as os.walk: a folder's files, then its folders
            yield path, True
            if max_depth is None or depth + 1 < max_depth:
                yield from self._walk(path, depth + 1, max_depth)


def _kind(entry: os.DirEntry[str], path: str) -> str:
    """ "dir", "file" (anything else, a special file included: reading it says what it is) or "link-dir"
    (a symbolic link to a directory, never entered)."""
    try:
        if entry.is_symlink():
            return "link-dir" if stat.S_ISDIR(os.stat(path).st_mode) else "file"
        return "dir" if entry.is_dir(follow_symlinks=False) else "file"
    except OSError:
        return "file"  # a dangling link: reading it says so


def glob_argument(pattern: str, unreadable: list[tuple[str, str]]) -> Iterator[tuple[str, bool]]:
    """`glob_below` from the pattern's leading folders without wildcards, paths named as the pattern names them."""
    parts = pattern.replace(os.sep, "/").split("/")
    fixed = 0
    while fixed < len(parts) - 1 and not is_glob(parts[fixed]):
        fixed += 1
    top = "/".join(parts[:fixed]) or ("/" if pattern.startswith("/") else "")
    for path, is_dir in glob_below(top or ".", "/".join(parts[fixed:]), unreadable):
        yield (path if top else os.path.relpath(path)), is_dir


def glob_below(top: str, pattern: str, unreadable: list[tuple[str, str]]) -> Iterator[tuple[str, bool]]:
    """(path, is a directory) of the entries below `top` that `pattern` (relative to it) matches, sorted
    within each folder, under the walk policy above. As with `glob`, a hidden name matches only when the
    pattern has a part starting with `.`; folders it cannot list go to `unreadable`."""
    parts = pattern.split("/")
    hidden = any(p.startswith(".") for p in parts)
    walk = Walk(skip_dir=(lambda name: False) if hidden else (lambda name: name.startswith(".")), unreadable=unreadable)
    matcher = Glob(pattern)
    depth = None if any("**" in p for p in parts) else len(parts)
    if not os.path.isdir(top):
        return
    for path, is_dir in walk.files(top, depth):
        rel = os.path.relpath(path, top).replace(os.sep, "/")
        if matcher.fullmatch(rel) and (hidden or not any(p.startswith(".") for p in rel.split("/"))):
            yield path, is_dir
