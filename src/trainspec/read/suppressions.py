"""Per-line suppression comments: `# trainspec: ignore[rule-id, other-id]`.

Written at the end of a line, a comment suppresses the listed rules on that
line; written alone on a line, it suppresses them on the next line that is
not itself a comment. A diagnostic is on every line it points at: its own
and those of its related locations (`tp-divides-heads` is on the `tp` line
and on the `n_heads` line alike). An id may be a prefix (`world-size` covers every
`world-size-*` rule). This runs after the checker, on its diagnostics, so
rules never need to know about comments; and it reports every listed id that
suppressed nothing (`unused-suppression`), so stale comments do not pile up.
Only formats with comments (`InputFormat.comment`) can suppress; JSON cannot.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

from trainspec.spec.codes import UNUSED_SUPPRESSION
from trainspec.spec.diagnostics import Diagnostic, Severity


@cache
def directive(comment: str) -> re.Pattern[str]:
    """A suppression comment in a format whose comments start with `comment` (group 1: the ids)."""
    return re.compile(r"(?:^|(?<=\s))" + re.escape(comment) + r"\s*trainspec:\s*ignore\[([^\]]*)\]")


@dataclass(frozen=True)
class Suppression:
    """One suppression comment: where it is written, and the line it covers."""

    comment_line: int
    column: int
    target_line: int
    ids: tuple[str, ...]
    end_column: int | None = None
    """Just after the comment's closing `]`."""


def matches(rule_id: str, pattern: str) -> bool:
    """`pattern` names the rule, or is a prefix of its id."""
    return rule_id.startswith(pattern)


def _in_string(before: str) -> bool:
    """Whether a `#` after `before` sits inside a quoted TOML/YAML string on that line."""
    quote = None
    i = 0
    while i < len(before):
        c = before[i]
        if quote == '"' and c == "\\":
            i += 2
            continue
        if quote is None and c in "\"'" and before[:i].rstrip()[-1:] in ("", "=", ":", "[", "{", ",", "-"):
            quote = c  # a quote that starts a value (not the apostrophe in a plain YAML `don't`)
        elif c == quote:
            quote = None
        i += 1
    return quote is not None


def split_ids(values: Sequence[str]) -> tuple[str, ...]:
    """The ids (or id prefixes) of comma-separated lists: a suppression comment's, `--select`'s, `--ignore`'s."""
    return tuple(i.strip() for v in values for i in v.split(",") if i.strip())


def find(text: str, comment: str) -> list[Suppression]:
    """The suppression comments of a text whose comments start with `comment`."""
    if "trainspec" not in text:
        return []  # most files: no line to search
    lines = text.splitlines()
    found = []
    for n, line in enumerate(lines, 1):
        m = directive(comment).search(line)
        if m is None or _in_string(line[: m.start()]):
            continue
        ids = split_ids([m.group(1)])
        target = n
        if not line[: m.start()].strip():  # alone on its line: covers the next line holding a value
            target = next(
                (
                    k
                    for k in range(n + 1, len(lines) + 1)
                    if lines[k - 1].strip() and not lines[k - 1].lstrip().startswith(comment)
                ),
                n + 1,
            )
        found.append(Suppression(n, m.start() + 1, target, ids, m.end() + 1))
    return found


def apply(
    diagnostics: Sequence[Diagnostic],
    text: str,
    file: str,
    *,
    comment: str,
    known: Callable[[str], bool],
    checked: Callable[[str], bool],
) -> list[Diagnostic]:
    """Drop suppressed diagnostics; add a warning for each listed id that suppressed nothing.

    `known(id)` says whether any rule has (or starts with) the id; `checked(id)`
    whether such rules ran at all (world-size rules do not without a world
    size), so a comment is not called unused when its rule could not fire.
    """
    suppressions = find(text, comment)
    if not suppressions:
        return list(diagnostics)
    used: set[tuple[int, str]] = set()
    kept = []
    for d in diagnostics:
        lines = d.lines()
        hits = [
            (s.comment_line, i) for s in suppressions if s.target_line in lines for i in s.ids if matches(d.rule, i)
        ]
        used.update(hits)
        if not hits:
            kept.append(d)
    for s in suppressions:
        for rule_id in s.ids:
            if (s.comment_line, rule_id) in used:
                continue
            if not known(rule_id):
                message = f"`{rule_id}` in this suppression comment is not a rule id (see `trainspec rules`)"
            elif checked(rule_id):
                message = f"the suppression of `{rule_id}` matches no diagnostic on line {s.target_line}; remove it"
            else:
                continue
            kept.append(
                Diagnostic(
                    file,
                    s.comment_line,
                    s.column,
                    (),
                    UNUSED_SUPPRESSION.id,
                    Severity.WARNING,
                    message,
                    end_line=s.comment_line,
                    end_column=s.end_column,
                )
            )
    return kept
