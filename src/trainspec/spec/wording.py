"""Values and names in words, as every message writes them: a value as the user would write it, the
name a typo most likely meant, a list cut to a readable length."""

from __future__ import annotations

import datetime
import json
from typing import Any


def show(value: Any) -> str:
    """A value as the user would write it in a config.

    Never raises: a value a rule computed may hold an integer too long for Python to write
    in decimal (`sys.get_int_max_str_digits()`); it is described instead.
    """
    try:
        text = json.dumps(value, default=str)
    except ValueError:
        return "(a number too long to show)"
    return text if len(text) <= 60 or not isinstance(value, (dict, list)) else text[:57] + "..."


def type_name(value: Any) -> str:
    if isinstance(value, (datetime.date, datetime.time)):
        return "date/time"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    return "table/mapping"


SIMILAR = 0.75
"""How alike (difflib's ratio) a written name and a known one must be for a "did you mean"."""

MOST_LISTED = 8
"""Names listed inline at most; a longer list is cut, and a message points to where all are."""


def closest(name: str, known: list[str]) -> str | None:
    """The known name `name` most likely misspells: one at least SIMILAR to it, else one it starts
    (`warmup` for `warmup_steps`, from four characters on); else None.

    difflib is imported here, not with the module: a config without a misspelt name never needs it."""
    import difflib

    score = {}
    letters = {c: name.count(c) for c in set(name)}
    for k in known:
        # difflib's cheap upper bounds (`real_quick_ratio`, `quick_ratio`), without building a matcher for
        # every known name: most are far from `name`, and only the few that pass need the real ratio
        total = len(name) + len(k)
        if not total or (
            2.0 * min(len(name), len(k)) / total >= SIMILAR and 2.0 * _shared(letters, k) / total >= SIMILAR
        ):
            score[k] = difflib.SequenceMatcher(None, name, k).ratio()
    candidates = [k for k in known if score.get(k, 0.0) >= SIMILAR]
    if not candidates:
        candidates = [k for k in known if len(name) >= 4 and k.startswith(name)]
        score = {k: difflib.SequenceMatcher(None, name, k).ratio() for k in candidates}
    return max(candidates, key=lambda k: score[k]) if candidates else None


def _shared(letters: dict[str, int], other: str) -> int:
    """How many characters `other` has in common with the text counted in `letters` (as multisets)."""
    return sum(min(n, other.count(c)) for c, n in letters.items())


def listed(names: list[str]) -> str:
    """`a, b, c`; past MOST_LISTED names, the first few and how many more."""
    if len(names) <= MOST_LISTED:
        return ", ".join(names)
    return ", ".join(names[: MOST_LISTED - 2]) + f" and {len(names) - MOST_LISTED + 2} more"
