"""The input formats trainspec reads, in one table every part consults.

Readers pick their parser here, discovery the extensions, suppressions and
directives the comment syntax, detection and `editor annotate` the schema
directive each format's language server honours, and `migrate` whether it
can write a file back.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePath
from types import ModuleType


@dataclass(frozen=True)
class InputFormat:
    """One file format.

    - `reader`: the module under `trainspec.read` whose `parse(path, text)` builds a Document.
    - `comments`: the format has `#` comments (suppressions, file directives, schema directives).
    - `schema_directive`: the first-line comment that ties a file to a schema in its language server,
      with `{}` for the schema's path; `directive` recognises one (group 1: the path).
    - `rewritable`: `trainspec migrate` can write a migrated file back in this format.
    """

    name: str
    extensions: tuple[str, ...]
    reader: str
    comments: bool
    schema_directive: str | None
    directive: re.Pattern[str] | None
    rewritable: bool

    def parser(self) -> ModuleType:
        return importlib.import_module(f"trainspec.read.{self.reader}")


TOML = InputFormat("toml", (".toml",), "toml", True, "#:schema {}", re.compile(r"#:schema\s+(\S*)"), rewritable=False)
YAML = InputFormat(
    "yaml",
    (".yaml", ".yml"),
    "yaml",
    True,
    "# yaml-language-server: $schema={}",
    re.compile(r"#\s*yaml-language-server:\s*\$schema=(\S*)"),
    rewritable=True,
)
JSON = InputFormat("json", (".json",), "json", False, None, None, rewritable=True)

FORMATS: dict[str, InputFormat] = {f.name: f for f in (TOML, YAML, JSON)}
BY_EXTENSION: dict[str, InputFormat] = {ext: f for f in FORMATS.values() for ext in f.extensions}


def format_of(path: str | PurePath) -> InputFormat:
    """The format a file's extension names (case-insensitive); anything else is read as JSON."""
    return known_format(path) or JSON


def known_format(path: str | PurePath) -> InputFormat | None:
    """The format a file's extension names, or None for an extension trainspec does not read."""
    # os.path.splitext finds the suffix PurePath does (a leading dot starts no suffix) at a tenth of the cost
    return BY_EXTENSION.get(os.path.splitext(path)[1].lower())


def extensions(names: Iterable[str]) -> frozenset[str]:
    """The file extensions of the named formats (`{"yaml"}` -> `.yaml`, `.yml`)."""
    return frozenset(ext for name in names for ext in FORMATS[name].extensions)
