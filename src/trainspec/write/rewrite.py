"""Write plain values into a config file, keeping everything else as written (`trainspec plan --apply`).

The file's format writes them (`formats.Syntax.set_values`): TOML is edited
as text, YAML goes through ruamel.yaml's round trip keeping every line the
edit leaves alone, JSON has no comments to keep and is rewritten with
two-space indents.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trainspec.read.files import parse
from trainspec.spec.formats import FORMATS
from trainspec.spec.paths import Path


def set_values(file: str, text: str, values: Mapping[Path, Any]) -> str:
    """`text` with each path set to its value (booleans, numbers, text, null); RewriteError when the file
    cannot take them without disturbing what is there."""
    doc = parse(file, text)
    return FORMATS[doc.format].syntax().set_values(doc, values)
