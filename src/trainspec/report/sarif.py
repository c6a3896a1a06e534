"""SARIF 2.1.0, as GitHub code scanning reads it.

One run; `tool.driver.rules` describes every rule the results use (id,
short and full description, help text, default level), and each result
points at its file (a URI relative to the working directory, resolved
through the `SRCROOT` base) and region (its start and, where known, its end).
Files without a line are reported on line 1, since code scanning needs a
region to show an alert.

The change a message suggests is in the result's `properties.suggestion` (as the JSON
report writes it); a key renamed in place is also a SARIF `fixes` entry, a replacement of
the key as written on its line. Other suggestions stay properties: a value or a moved key
written in the file's own syntax needs the document, which a report no longer holds.

`helpUri` must be an absolute URL, so it is given only where one is known:
a family's `docs_url` (its reference page), else the package's
`Documentation` project URL (the folder holding docs/reference/*.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import quote, urljoin

from trainspec.report.reporters import checked, relative_path
from trainspec.rules.catalogue import RuleInfo, lookup
from trainspec.spec import __version__
from trainspec.spec.diagnostics import Diagnostic, Move, Severity, suggestion_data
from trainspec.spec.escaping import json_text, terminal
from trainspec.spec.family import Family
from trainspec.spec.result import Result

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"

LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "note"}


def report(results: Iterable[Result], out: TextIO) -> None:
    out.write(json_text(build(checked(results)), indent=2, ensure_ascii=False) + "\n")


def build(results: Sequence[Result]) -> dict[str, Any]:
    rules: dict[str, dict[str, Any]] = {}
    found = []
    for r in sorted(results, key=lambda r: r.file):
        for d in sorted(r.diagnostics, key=Diagnostic.sort_key):
            if d.rule not in rules:
                rules[d.rule] = descriptor(d, lookup(d.rule, r.family), r.family)
            found.append(result(d, list(rules).index(d.rule), r.lines.get(d.line or 0)))
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "trainspec",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "rules": list(rules.values()),
                    }
                },
                "originalUriBaseIds": {"SRCROOT": {"uri": Path.cwd().as_uri() + "/"}},
                "columnKind": "unicodeCodePoints",
                "results": found,
            }
        ],
    }


def descriptor(d: Diagnostic, info: RuleInfo | None, family: Family | None) -> dict[str, Any]:
    """The reportingDescriptor of `d`'s rule (a bare one for an id no catalogue knows)."""
    if info is None:
        text = f"Reported by trainspec as `{d.rule}`."
        return {
            "id": d.rule,
            "shortDescription": {"text": d.rule},
            "fullDescription": {"text": text},
            "help": {"text": text},
            "defaultConfiguration": {"level": LEVELS[d.severity]},
        }
    out: dict[str, Any] = {
        "id": info.id,
        "name": info.id,
        "shortDescription": {"text": info.summary},
        "fullDescription": {"text": info.doc[:1024]},
        "help": {"text": info.doc, "markdown": help_markdown(info)},
        "defaultConfiguration": {"level": LEVELS[info.severity]},
        "properties": {"tags": ["trainspec", info.family, *([info.category.tag] if info.category else [])]},
    }
    page = docs_page(info.family, family)
    if page:
        out["helpUri"] = f"{page}#{quote(info.id)}"
    return out


def help_markdown(info: RuleInfo) -> str:
    """The rule's documentation with its example: the config that breaks it and the fix."""
    example = info.example
    if example is None:
        return info.doc
    lang = example.fmt
    parts = [info.doc.strip()]
    if example.bad is not None:
        parts.append(f"Breaks it:\n\n```{lang}\n{example.bad.rstrip()}\n```")
    parts.append(f"Fixed:\n\n```{lang}\n{example.good.rstrip()}\n```")
    if example.options(True) != example.options(False):
        parts.append(f"`{example.command(True)}`")
    return "\n\n".join(parts)


def docs_page(page: str, family: Family | None) -> str:
    """The absolute URL of reference page `page` (a family name or "engine"), or "" when none is known."""
    if family is not None and family.docs_url:
        return family.docs_url if page == family.name else urljoin(family.docs_url, f"{page}.md")
    base = _documentation_url()
    return urljoin(base.rstrip("/") + "/", f"{page}.md") if base else ""


@cache
def _documentation_url() -> str:
    try:
        urls = metadata.metadata("trainspec").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return ""
    return next((u.split(",", 1)[1].strip() for u in urls if u.split(",", 1)[0].strip().lower() == "documentation"), "")


def _location(
    file: str, line: int | None, column: int | None, end_line: int | None = None, end_column: int | None = None
) -> dict[str, Any]:
    region: dict[str, int] = {"startLine": line or 1}
    if line is not None and column is not None:
        region["startColumn"] = column
        if end_line is not None and end_column is not None and (end_line, end_column) > (line, column):
            region["endLine"] = end_line
            region["endColumn"] = end_column  # SARIF's end column is the one after the region, as ours
    path = relative_path(file)
    if Path(path).is_absolute():
        artifact = {"uri": Path(path).as_uri()}
    else:
        artifact = {"uri": quote(path), "uriBaseId": "SRCROOT"}
    return {"physicalLocation": {"artifactLocation": artifact, "region": region}}


def result(d: Diagnostic, index: int, line: str | None = None) -> dict[str, Any]:
    """The SARIF result of `d`; `line` is the source line it starts on, when the report holds it."""
    message = terminal(f"{d.origin}: {d.message}" if d.origin else d.message)
    out: dict[str, Any] = {
        "ruleId": d.rule,
        "ruleIndex": index,
        "level": LEVELS[d.severity],
        "message": {"text": message},
        "locations": [_location(d.file, d.line, d.column, d.end_line, d.end_column)],
    }
    related = [
        {
            "id": n,
            **_location(d.file, r.line, r.column, r.end_line, r.end_column),
            "message": {"text": terminal(f"{r.config_path}: {r.label}" if r.label else r.config_path)},
        }
        for n, r in enumerate(d.related)
        if r.line is not None
    ]
    if related:
        out["relatedLocations"] = related
    suggestion = suggestion_data(d.suggestion)
    if suggestion is not None:
        fix = _rename(d, line)
        if fix is not None:
            out["fixes"] = [fix]
        out["properties"] = {"suggestion": suggestion}
    return out


_PLAIN_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _rename(d: Diagnostic, line: str | None) -> dict[str, Any] | None:
    """The fix of a key that the diagnostic suggests renaming in place: its text on `line` (the key as
    written, quoted or not: checked, so a diagnostic placed elsewhere gets none) replaced by the new name."""
    move = d.suggestion
    if not isinstance(move, Move) or not d.path or move.to[:-1] != d.path[:-1] or line is None:
        return None
    old, new = d.path[-1], move.to[-1]
    if d.column is None or d.end_line != d.line or d.end_column is None or not isinstance(new, str):
        return None
    written = line[d.column - 1 : d.end_column - 1]
    quote = written[:1] if written[:1] in "\"'" and written[-1:] == written[:1] else ""
    if written != f"{quote}{old}{quote}" or not _PLAIN_KEY.fullmatch(new):
        return None
    location = _location(d.file, d.line, d.column, d.end_line, d.end_column)["physicalLocation"]
    return {
        "description": {"text": terminal(f"Rename `{old}` to `{new}`")},
        "artifactChanges": [
            {
                "artifactLocation": location["artifactLocation"],
                "replacements": [
                    {"deletedRegion": location["region"], "insertedContent": {"text": quote + new + quote}}
                ],
            }
        ],
    }
