"""Text and JSON as the medium that shows them can hold them: escaping at the edge.

Keys, values and file names come from files anyone can put in a pull request,
and end up in terminals, CI logs and machine formats. Diagnostics keep them as
written; each output escapes them once, where it writes:

- terminal and log text (`terminal`): control characters (C0 but the tab, DEL,
  C1), line and paragraph separators, bidirectional controls and lone
  surrogates are written as `\\n`, `\\x1b`, `\\u202e`, so no value starts a
  line of its own (a GitHub `::error` command), moves the cursor or sets a
  window title, and every line still encodes as UTF-8;
- XML (`report/junit.py`) and GitHub workflow commands (`report/github.py`)
  escape what their syntax needs on top;
- JSON (`json_text`): strict, as RFC 8259 has no NaN or infinity; a non-finite
  number is written as the string `"NaN"`, `"Infinity"` or `"-Infinity"`
  (which `float()` reads back), never as a bare token most parsers refuse,
  and a lone surrogate (a JSON input may hold one) as its `\ud800` escape.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

TERMINAL_UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")
"""What a terminal or a CI log must not receive raw: everything but the tab that is not printable text."""

_NAMED = {"\n": "\\n", "\r": "\\r"}


def escape(text: str, unsafe: re.Pattern[str]) -> str:
    """`text` with each character `unsafe` matches written as a Python-style escape (`\\n`, `\\x1b`, `\\u202e`)."""
    if unsafe.search(text) is None:
        return text
    return unsafe.sub(lambda m: _NAMED.get(m[0]) or _code(ord(m[0])), text)


def _code(point: int) -> str:
    return f"\\x{point:02x}" if point < 0x100 else f"\\u{point:04x}"


def terminal(text: str) -> str:
    """One line of text as a terminal or a CI log may show it (idempotent: escaping twice changes nothing)."""
    return escape(text, TERMINAL_UNSAFE)


NON_FINITE = {math.inf: "Infinity", -math.inf: "-Infinity"}


def finite(value: Any) -> Any:
    """`value` with every non-finite float (in lists, tuples and dict values too) as its string spelling,
    so `json.dumps(..., allow_nan=False)` writes it."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else NON_FINITE[value]
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


_SURROGATE = re.compile("[\ud800-\udfff]")


def json_text(value: Any, **options: Any) -> str:
    """`json.dumps(value, **options)`, strict: no bare NaN or infinity, and encodable as UTF-8 even with
    `ensure_ascii=False` (a raw surrogate can stand only inside a string, where its escape means the same)."""
    text = json.dumps(finite(value), allow_nan=False, **options)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m[0]):04x}", text)
