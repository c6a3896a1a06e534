"""trainspec's diagnostics as LSP diagnostics: ranges, severities, codes, links and related places."""

from __future__ import annotations

from typing import Any

from lsprotocol import types as lsp

from trainspec.editor.lsp.text import Source
from trainspec.report.sarif import docs_page
from trainspec.rules.catalogue import lookup
from trainspec.spec.codes import UNUSED_SUPPRESSION, Flag, has_flag
from trainspec.spec.diagnostics import Diagnostic, Severity
from trainspec.spec.family import Family

SOURCE = "trainspec"
SEVERITY = {
    Severity.ERROR: lsp.DiagnosticSeverity.Error,
    Severity.WARNING: lsp.DiagnosticSeverity.Warning,
    # A note fails nothing, but may ask for something (a world size to check the layout at): editors list
    # information among the problems, and show a hint only as a faint mark.
    Severity.NOTE: lsp.DiagnosticSeverity.Information,
}
SEVERITY_NAMES = {
    lsp.DiagnosticSeverity.Error: "error",
    lsp.DiagnosticSeverity.Warning: "warning",
    lsp.DiagnosticSeverity.Information: "information",
    lsp.DiagnosticSeverity.Hint: "hint",
}
"""What an editor calls each severity, for text that names the one a diagnostic is published with."""
TAGS = {
    UNUSED_SUPPRESSION.id: [lsp.DiagnosticTag.Unnecessary],
    "legacy-key-migrated": [lsp.DiagnosticTag.Deprecated],
}


def span(source: Source, line: int | None, column: int | None, end: tuple[Any, Any] = (None, None)) -> tuple[int, ...]:
    """0-based (line, column, end line, end column) in code points.

    The end is the diagnostic's own when it has one; else the end of the key or
    value token at its start. A place outside the file is its first line.
    """
    if line is None:
        return 0, 0, 0, source.token_end(0, 0)
    start_line, start_column = line - 1, max((column or 1) - 1, 0)
    end_line, end_column = end
    if isinstance(end_line, int) and isinstance(end_column, int) and (end_line, end_column) > (line, column or 1):
        return start_line, start_column, end_line - 1, end_column - 1
    return start_line, start_column, start_line, source.token_end(start_line, start_column)


def to_lsp(d: Diagnostic, source: Source, uri: str, family: Family | None) -> lsp.Diagnostic:
    """One diagnostic, with `data` naming its rule and config path for the code actions."""
    where = span(source, d.line, d.column, (getattr(d, "end_line", None), getattr(d, "end_column", None)))
    message = d.message
    if d.line is None and d.origin:
        message = f"{d.origin}: {message}"
    if d.world_size is not None and not d.names_world_size:
        message += f" (at world size {d.world_size})"
    related = [
        lsp.DiagnosticRelatedInformation(
            location=lsp.Location(
                uri=uri,
                range=source.range(
                    *span(source, r.line, r.column, (getattr(r, "end_line", None), getattr(r, "end_column", None)))
                ),
            ),
            message=getattr(r, "label", "") or r.config_path,
        )
        for r in d.related
        if r.line is not None
    ]
    return lsp.Diagnostic(
        range=source.range(*where),
        message=message,
        severity=severity_of(d),
        code=d.rule,
        code_description=_link(d.rule, family),
        source=SOURCE,
        related_information=related or None,
        tags=TAGS.get(d.rule),
        data={"rule": d.rule, "config_path": d.config_path},
    )


def severity_of(d: Diagnostic) -> lsp.DiagnosticSeverity:
    """The severity `d` is published with: problems most editor buffers would raise (a file no family
    claims) as hints, the rest as their own severity."""
    return lsp.DiagnosticSeverity.Hint if has_flag(d.rule, Flag.QUIET_IN_EDITORS) else SEVERITY[d.severity]


def _link(rule_id: str, family: Family | None) -> lsp.CodeDescription | None:
    """The rule's reference page, where an absolute URL is known (hover explains it either way)."""
    info = lookup(rule_id, family)
    if info is None:
        return None
    page = docs_page(info.family, family)
    return lsp.CodeDescription(href=f"{page}#{rule_id}") if page else None
