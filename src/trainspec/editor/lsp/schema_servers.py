"""What a schema server beside trainspec reports for a buffer, so that nothing is said twice.

yaml-language-server, taplo and VS Code's JSON support report every syntax error and duplicate
key of the files they serve, and, for a file tied to one of trainspec's schemas, every problem
that schema describes (unknown and missing keys, wrong types, values out of range or not allowed).
The client says which formats a schema server serves (`schemaServers`; the VS Code extension
finds the YAML and Even Better TOML extensions, and VS Code serves JSON itself); a file is tied to
a schema by a directive in it (`# yaml-language-server: $schema=...`, `#:schema ...`, a `$schema`
key) or by the editor's schema settings when the client sends them (`yaml.schemas`,
`json.schemas`, `evenBetterToml.schema.associations`). The `rulesOnly` setting, when given,
decides for every file instead.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from trainspec.editor.workspace import glob_regex
from trainspec.read.detect import schema_reference
from trainspec.rules.catalogue import family_rules
from trainspec.spec.codes import DUPLICATE_KEY, SYNTAX_ERROR, Flag, has_flag
from trainspec.spec.diagnostics import Diagnostic
from trainspec.spec.document import Document
from trainspec.spec.family import Family
from trainspec.spec.formats import format_of

PARSER_REPORTS = frozenset({SYNTAX_ERROR.id, DUPLICATE_KEY.id})
"""What a schema server's parser reports in every file it serves, tied to a schema or not."""
Association = tuple[str, str, str]
"""(how the pattern matches: "glob" or "regex", the pattern, the schema it ties files to)."""


class Left(enum.Enum):
    """What trainspec leaves to the schema server of a buffer."""

    NOTHING = "nothing"
    PARSER = "parser"
    """Syntax errors and duplicate keys, which the server's own parser reports in any file."""
    SCHEMA = "schema"
    """Everything the schema server reports for a file tied to the family's schema: completion too."""


def left(
    rules_only: bool | None,
    servers: frozenset[str],
    associations: tuple[Association, ...],
    file: str,
    doc: Document | None,
    family: Family | None,
) -> Left:
    """What to leave to the schema server of `file` (`doc` as parsed, None when it does not parse)."""
    if rules_only is not None:
        return Left.SCHEMA if rules_only else Left.NOTHING
    if format_of(file).name not in servers:
        return Left.NOTHING
    if doc is None or family is None:
        return Left.PARSER
    reference = schema_reference(doc)
    if reference is not None:
        return Left.SCHEMA if names(reference, family) else Left.PARSER
    for kind, pattern, schema in associations:
        if names(schema, family) and _matches(kind, pattern, file):
            return Left.SCHEMA
    return Left.PARSER


def without_left(found: list[Diagnostic], what: Left, family: Family | None) -> list[Diagnostic]:
    """`found` without what the schema server reports (`what`)."""
    if what is Left.NOTHING:
        return found
    if what is Left.PARSER:
        return [d for d in found if d.rule not in PARSER_REPORTS]
    schema = {r.id for r in family_rules(family) if r.source == "schema"} if family else set()
    return [d for d in found if not has_flag(d.rule, Flag.SCHEMA_SERVERS_REPORT) and d.rule not in schema]


def names(reference: str, family: Family) -> bool:
    """Whether a schema reference is to the family's schema: its id, or a file `trainspec editor` writes
    (`kempnerforge.schema.json`, `specforge@0.2.0.schema.json`) wherever it lies."""
    if family.schema.id and reference.strip().lower() == family.schema.id.lower():
        return True
    name = PurePosixPath(re.split(r"[?#]", reference.replace("\\", "/"))[0]).name.lower()
    return re.sub(r"@[^/]*?(?=\.schema\.json$)", "", name) == f"{family.name.lower()}.schema.json"


def _matches(kind: str, pattern: str, file: str) -> bool:
    path = file.replace("\\", "/")
    try:
        if kind == "regex":  # taplo: against the document's URI
            uri = PurePosixPath(path).as_uri() if path.startswith("/") else path
            return re.match(pattern, uri) is not None
        if pattern.startswith("!"):  # a glob that excludes files ties none
            return False
        glob = pattern.removeprefix("./").lstrip("/")
        return re.match(glob_regex(glob), "/" + path.lstrip("/")) is not None
    except (re.error, ValueError):
        return False


def associations(raw: Mapping[str, Any]) -> tuple[Association, ...]:
    """The schema associations of a client's settings: `yaml.schemas` (schema: glob or globs),
    `json.schemas` (entries with `fileMatch` and `url`) and `evenBetterToml.schema.associations`
    (URI regex: schema), each as a section (`{"yaml": {"schemas": ...}}`) or a dotted key."""
    out: list[Association] = []
    yaml = _setting(raw, "yaml", "schemas")
    if isinstance(yaml, Mapping):
        for schema, globs in yaml.items():
            for glob in [globs] if isinstance(globs, str) else globs if isinstance(globs, list) else []:
                if isinstance(schema, str) and isinstance(glob, str):
                    out.append(("glob", glob, schema))
    json = _setting(raw, "json", "schemas")
    for entry in json if isinstance(json, list) else []:
        if isinstance(entry, Mapping) and isinstance(entry.get("url"), str):
            matches = entry.get("fileMatch")
            for glob in matches if isinstance(matches, list) else []:
                if isinstance(glob, str):
                    out.append(("glob", glob, entry["url"]))
    toml = _setting(raw, "evenBetterToml", "schema", "associations")
    if isinstance(toml, Mapping):
        out += [("regex", k, v) for k, v in toml.items() if isinstance(k, str) and isinstance(v, str)]
    return tuple(out)


def _setting(raw: Mapping[str, Any], *parts: str) -> Any:
    dotted = raw.get(".".join(parts))
    if dotted is not None:
        return dotted
    node: Any = raw
    for part in parts:
        if not isinstance(node, Mapping):
            return None
        node = node.get(part)
    return node
