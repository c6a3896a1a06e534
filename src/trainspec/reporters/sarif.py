"""SARIF 2.1.0, as GitHub code scanning reads it.

One run; `tool.driver.rules` describes every rule the results use (id,
short and full description, help text and link, default level), and each
result points at its file (a URI relative to the working directory, resolved
through the `SRCROOT` base) and line. Files without a line are reported on
line 1, since code scanning needs a region to show an alert.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import quote

from .. import __version__
from ..catalogue import ENGINE, RuleInfo, lookup
from ..checker import Result
from ..diagnostics import Diagnostic, Severity
from . import relative_path

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
DOCS_URI = "docs/reference/"
"""Where helpUri points when a family has no `docs_url`: the reference docs, relative to the trainspec repository."""

LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "note"}


def report(results: Sequence[Result], out: TextIO) -> None:
    json.dump(build(results), out, indent=2, ensure_ascii=False)
    out.write("\n")


def build(results: Sequence[Result]) -> dict[str, Any]:
    rules: dict[str, dict[str, Any]] = {}
    found = []
    for r in sorted(results, key=lambda r: r.file):
        for d in sorted(r.diagnostics, key=Diagnostic.sort_key):
            if d.rule not in rules:
                rules[d.rule] = descriptor(d, lookup(d.rule, r.family), r.family.docs_url if r.family else "")
            found.append(result(d, list(rules).index(d.rule)))
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "trainspec",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": list(rules.values()),
            }},
            "originalUriBaseIds": {"SRCROOT": {"uri": Path.cwd().as_uri() + "/"}},
            "columnKind": "unicodeCodePoints",
            "results": found,
        }],
    }


def descriptor(d: Diagnostic, info: RuleInfo | None, docs_url: str) -> dict[str, Any]:
    """The reportingDescriptor of `d`'s rule (a bare one for an id no catalogue knows)."""
    if info is None:
        text = f"Reported by trainspec as `{d.rule}`."
        return {"id": d.rule, "shortDescription": {"text": d.rule}, "fullDescription": {"text": text},
                "help": {"text": text}, "defaultConfiguration": {"level": LEVELS[d.severity]}}
    page = docs_url or f"{DOCS_URI}{info.family}.md"
    return {
        "id": info.id,
        "name": info.id,
        "shortDescription": {"text": info.summary},
        "fullDescription": {"text": info.doc[:1024]},
        "help": {"text": info.doc, "markdown": info.doc},
        "helpUri": f"{page}#{quote(info.id)}",
        "defaultConfiguration": {"level": LEVELS[info.severity]},
        "properties": {"tags": ["trainspec", info.family if info.family != ENGINE else "engine"]},
    }


def _location(file: str, line: int | None, column: int | None) -> dict[str, Any]:
    region: dict[str, int] = {"startLine": line or 1}
    if line is not None and column is not None:
        region["startColumn"] = column
    path = relative_path(file)
    if Path(path).is_absolute():
        artifact = {"uri": Path(path).as_uri()}
    else:
        artifact = {"uri": quote(path), "uriBaseId": "SRCROOT"}
    return {"physicalLocation": {"artifactLocation": artifact, "region": region}}


def result(d: Diagnostic, index: int) -> dict[str, Any]:
    message = f"{d.origin}: {d.message}" if d.origin else d.message
    out: dict[str, Any] = {
        "ruleId": d.rule,
        "ruleIndex": index,
        "level": LEVELS[d.severity],
        "message": {"text": message},
        "locations": [_location(d.file, d.line, d.column)],
    }
    related = [
        {"id": n, **_location(d.file, r.line, r.column), "message": {"text": r.config_path}}
        for n, r in enumerate(d.related) if r.line is not None
    ]
    if related:
        out["relatedLocations"] = related
    return out
