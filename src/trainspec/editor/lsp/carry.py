"""The last good diagnostics, kept while the buffer does not parse.

Typing a new key breaks the syntax until the line is finished; the check of such a buffer finds
the syntax error and nothing else, and an editor that showed only that would drop every other
problem of the file for a keystroke, then bring them all back. Instead the diagnostics of the last
version that parsed stay, moved with the lines an edit added or removed above them, less those on
the lines the edits since then changed: the check cannot say whether those still hold.
"""

from __future__ import annotations

from dataclasses import replace

from trainspec.editor.lsp.text import changed
from trainspec.spec.codes import SYNTAX_ERROR
from trainspec.spec.diagnostics import Diagnostic, Related


def carried(diagnostics: list[Diagnostic], then: str, now: str) -> list[Diagnostic]:
    """`diagnostics`, found in the text `then`, as they stand in the text `now`: those on lines the change
    from one to the other touched are left out, those below moved by the lines it added or removed; a
    related place on changed lines is left out of its diagnostic."""
    first, last, shift = _changed_lines(then, now)
    out = []
    for d in diagnostics:
        if d.rule == SYNTAX_ERROR.id:
            continue
        moved = _moved(d.line, d.end_line, first, last, shift)
        if moved is None:
            continue
        related = tuple(r for r in (_related(r, first, last, shift) for r in d.related) if r is not None)
        out.append(replace(d, line=moved[0], end_line=moved[1], related=related))
    return out


def _changed_lines(then: str, now: str) -> tuple[int, int, int]:
    """The first and last line (1-based) of `then` that differ in `now` (none when `last` < `first`: lines
    were only added), and how many lines `now` has more."""
    start, old_end, _ = changed(then, now)
    old, new = then.split("\n"), now.split("\n")
    same = then.count("\n", 0, start)  # the lines before the change's are alike
    while same < min(len(old), len(new)) and old[same] == new[same]:
        same += 1
    after = then.count("\n", old_end)  # and those after it
    while after < min(len(old), len(new)) - same and old[-1 - after] == new[-1 - after]:
        after += 1
    return same + 1, len(old) - after, len(new) - len(old)


def _related(r: Related, first: int, last: int, shift: int) -> Related | None:
    moved = _moved(r.line, r.end_line, first, last, shift)
    return None if moved is None else replace(r, line=moved[0], end_line=moved[1])


Lines = tuple[int | None, int | None]
"""A place's start and end line."""


def _moved(line: int | None, end: int | None, first: int, last: int, shift: int) -> Lines | None:
    """A place's start and end lines after the change of lines `first`..`last` (1-based), None if it touches them.
    A place without a line (the whole file) stays where it is."""
    if line is None:
        return line, end
    stop = end if end is not None and end >= line else line
    if stop < first:
        return line, end
    if line <= last:
        return None
    return line + shift, (end + shift if end is not None else None)
