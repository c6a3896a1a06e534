"""The input formats trainspec reads, in one table every part consults.

A format is one module (`read/<name>.py`: its reader, and what editing asks of it, `Syntax`) and
one line in `FORMATS`; nothing else names a format. Readers pick their parser here, discovery the
extensions, suppressions and directives the comment syntax, detection and `editor annotate` the
schema directive each format's language server honours, and `migrate` whether it can write a file
back. A format's module is imported on first use, so a check imports only the reader it reads with,
and the protocols below are for the type checker only.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from collections import Counter
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any, Protocol

    from trainspec.spec.document import Document, LineEdit, Positions
    from trainspec.spec.paths import Path

    Place = tuple[str, Path, str]
    """What a cursor is in: "key", "table" (a TOML table header) or "value"; the path of the table the key
    goes in (for a value: of the key); what is typed of it so far."""

    class Reader(Protocol):
        """What `check` asks a format's module."""

        def parse(self, file: str, text: str) -> Document:
            """The located Document of `text`, read as the file `file`; ReadError when it cannot be read."""
            ...

    class Syntax(Protocol):
        """What editing asks a format's module: plain text in, plain text out, so the language server,
        `editor`, `plan --apply` and placement never branch on a format."""

        CLOSING: str
        """What ends the top-level mapping on the file's last line (a key the file lacks goes before it), or ""."""
        DIRECTIVE_ANYWHERE: bool
        """The language server reads the schema directive on any comment line, not only in the leading block."""
        EDITOR_SETTINGS: tuple[str, ...]
        """The VS Code settings whose schema associations cover the format's files (`editor.workspace.SETTINGS`)."""
        LANGUAGE_SERVER: str
        """The language server editors run for the format, which the editor schema must suit."""

        def place(self, lines: Sequence[str], line: int, column: int) -> Place | None:
            """What is being typed at a 0-based line and code-point column of a buffer split on `\\n` (a line
            may end in `\\r`); the buffer need not parse. None where neither a key nor a value can start."""
            ...

        def key_text(self, name: str, *, table: bool, section: bool) -> str:
            """A key as completion inserts it, with what follows a key (`table`: in a table header;
            `section`: the key holds a section)."""
            ...

        def value_text(self, value: Any) -> str:
            """A value written in the format, as its loaders read it back."""
            ...

        def value_lead(self, before: str) -> str:
            """What a completed value needs before it when the line so far is `before`."""
            ...

        def entry(self, key: str, value: str) -> str:
            """One line setting `key` (written as it goes in the file) to `value` (written)."""
            ...

        def insertion(self, text: str, positions: Positions, target: Path, line: str) -> tuple[int, str] | None:
            """Where, in `text`, the entry line `line` for `target` goes (an offset) and what to insert there
            (the line, with the table or blocks it needs); None where the format cannot add a line."""
            ...

        def set_values(self, doc: Document, values: Mapping[Path, Any]) -> str:
            """The document's text with each path set to its value, everything else as written; RewriteError
            when that cannot be done without disturbing what is there."""
            ...

        def string_text(self, value: str, replaced: str | None, styles: Callable[[], Counter[str]]) -> str:
            """A string as a quick fix writes it: `replaced` is the first character of the value written where it
            goes (None where none is); `styles()` counts the file's strings by that character ("" for plain)."""
            ...

        LINE_REREAD: bool
        """An edit that stays on one line may be re-read alone (`reread_line`) instead of the whole text."""

        def shares_values(self, text: str) -> bool:
            """A value of `text` may be read in more than one place (YAML anchors, aliases, merge keys): no line
            of it is re-read alone."""
            ...

        def reread_line(
            self,
            doc: Document,
            line: int,
            before: str,
            after: str,
            keys: Mapping[tuple[int, int], Path],
            values: Mapping[tuple[int, int], Sequence[Path]],
        ) -> LineEdit | None:
            """`doc` after its 1-based `line` changed from `before` to `after`, with only that line read again;
            None unless both readings have the same shape and the rest of the document reads the line alike.
            `keys` and `values` give the path of the key, and the paths of the values, starting at each (line,
            column)."""
            ...

    class Tree(Protocol):
        """A document loaded to be edited in place (`trainspec migrate`), keeping what the format can keep."""

        data: Any
        """The config, to change in place."""
        shares_mappings: bool
        """Some mapping takes keys from another or gives its keys to one (a YAML merge key)."""

        def shared(self, path: Path) -> bool:
            """An edit at `path` would land in (or change) another mapping than the one it names."""
            ...

        def dump(self, data: Any) -> str:
            """`data` (this tree's, edited) as the format writes it."""
            ...

        def settle(self) -> None:
            """After the edits: what the format attaches to a key (comments) stays where the text had it."""
            ...

    class Rewriter(Protocol):
        """What `migrate` asks the module of a `rewritable` format."""

        def tree(self, doc: Document) -> Tree:
            """The document loaded to be edited in place; RewriteError when it cannot be."""
            ...


@dataclass(frozen=True)
class InputFormat:
    """One file format.

    - `module`: the module holding its reader (`parse(path, text)` builds a Document) and its `Syntax`.
    - `comment`: what starts a comment (`#`), or None for a format without comments; suppressions, file
      directives and schema directives are comments, so a format without them has none.
    - `schema_directive`: the first-line comment that ties a file to a schema in its language server,
      with `{}` for the schema's path; `directive` recognises one (group 1: the path).
    - `rewritable`: `trainspec migrate` can write a migrated file back in this format (its module is
      then a `Rewriter` too).
    """

    name: str
    extensions: tuple[str, ...]
    module: str
    comment: str | None
    schema_directive: str | None
    directive: re.Pattern[str] | None
    rewritable: bool

    def parser(self) -> Reader:
        return cast("Reader", importlib.import_module(self.module))

    def syntax(self) -> Syntax:
        return cast("Syntax", importlib.import_module(self.module))

    def rewriter(self) -> Rewriter:
        return cast("Rewriter", importlib.import_module(self.module))


TOML = InputFormat(
    "toml", (".toml",), "trainspec.read.toml", "#", "#:schema {}", re.compile(r"#:schema\s+(\S*)"), rewritable=False
)
YAML = InputFormat(
    "yaml",
    (".yaml", ".yml"),
    "trainspec.read.yaml",
    "#",
    "# yaml-language-server: $schema={}",
    re.compile(r"#\s*yaml-language-server:\s*\$schema=(\S*)"),
    rewritable=True,
)
JSON = InputFormat("json", (".json",), "trainspec.read.json", None, None, None, rewritable=True)

FORMATS: dict[str, InputFormat] = {f.name: f for f in (TOML, YAML, JSON)}
BY_EXTENSION: dict[str, InputFormat] = {ext: f for f in FORMATS.values() for ext in f.extensions}
FALLBACK = JSON
"""What a file whose extension names no format is read as."""
OVERRIDE_VALUES = YAML
"""What a `--set` value is read as (`--set a=[1, 2]`, `--set b=null`)."""


def format_of(path: str | PurePath) -> InputFormat:
    """The format a file's extension names (case-insensitive); anything else is read as `FALLBACK`."""
    return known_format(path) or FALLBACK


def known_format(path: str | PurePath) -> InputFormat | None:
    """The format a file's extension names, or None for an extension trainspec does not read."""
    # os.path.splitext finds the suffix PurePath does (a leading dot starts no suffix) at a tenth of the cost
    return BY_EXTENSION.get(os.path.splitext(path)[1].lower())


def extensions(names: Iterable[str]) -> frozenset[str]:
    """The file extensions of the named formats (`{"yaml"}` -> `.yaml`, `.yml`)."""
    return frozenset(ext for name in names for ext in FORMATS[name].extensions)


def in_words(items: Iterable[str], last: str = "or") -> str:
    """`a, b or c`: the formats' names or extensions in a message."""
    found = list(items)
    return f"{', '.join(found[:-1])} {last} {found[-1]}" if len(found) > 1 else "".join(found)


def line_of(lines: Sequence[str], n: int) -> str:
    """Line `n` (from 0) of a buffer as the cursor sees it: without its carriage return, empty past the end."""
    return lines[n].rstrip("\r") if 0 <= n < len(lines) else ""


def unquote(key: str) -> str:
    """A key as written in a header or a path, without the quotes TOML and YAML allow around it."""
    key = key.strip()
    return key[1:-1] if len(key) >= 2 and key[0] == key[-1] and key[0] in "\"'" else key
