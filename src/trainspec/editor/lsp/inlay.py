"""Inlay hints: after each section's key, the keys it does not write and the values they resolve to
(`max_seq_len = 2048, norm_eps = 1e-05, … 9 more`), so what a run will use is visible without hovering.

A config writes a few keys of sections holding dozens, so the hints fill most section lines: they
are off unless the client's `inlayHints` setting turns them on.
"""

from __future__ import annotations

from lsprotocol import types as lsp

from trainspec.editor.lsp.analysis import Analysis
from trainspec.editor.lsp.hover import MAX_RESOLVED, show, unwritten
from trainspec.spec.schema import get

SHOWN = 3
"""Keys named in a hint's label; its tooltip lists up to `MAX_RESOLVED`."""


def inlay_hints(analysis: Analysis, first_line: int, last_line: int) -> list[lsp.InlayHint]:
    """The hints of the sections whose key is on the 0-based lines `first_line`..`last_line`."""
    resolved, family = analysis.resolved, analysis.family
    doc, config = resolved.document, resolved.config
    if not analysis.settings.inlay_hints or doc is None or config is None or family is None:
        return []
    out = []
    for path, span in doc.positions.items():
        key = span.key
        if not path or key is None or not first_line <= key.line - 1 <= last_line:
            continue
        section = get(config, path)
        if not isinstance(section, dict):
            continue
        keys = unwritten(analysis, family, path, section)
        if not keys:
            continue
        named = [f"{k} = {show(v)}" for k, v, _ in keys[:SHOWN]]
        more = [f"… {len(keys) - SHOWN} more"] if len(keys) > SHOWN else []
        listed = [f"- `{k}` = `{show(v)}` ({how})" for k, v, how in keys[:MAX_RESOLVED]]
        line = key.line - 1
        at = analysis.source.position(line, len(analysis.source.line(line).rstrip()))
        out.append(
            lsp.InlayHint(
                position=at,
                label=", ".join(named + more),
                padding_left=True,
                tooltip=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value="Not written:\n" + "\n".join(listed)),
            )
        )
    return out
