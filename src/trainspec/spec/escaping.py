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

INVISIBLE = (
    "\x7f-\x9f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e"
    "\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb\U000e0000-\U000e0fff"
)
"""Characters that show nothing or reorder what follows: DEL and C1 controls, zero-width and joining
characters, bidirectional controls, line and paragraph separators, variation selectors and tags. A key
`lr\u200b` would otherwise print as `lr`, and a bidi override can make a line read as another."""
_TERMINAL_UNSAFE = f"[\x00-\x08\x0a-\x1f{INVISIBLE}\ud800-\udfff]"
"""What a terminal or a CI log must not receive raw: everything but the tab that is not printable text.
(Compiled on first use by `re`, which keeps it: most text is plain ASCII, which needs no pattern.)"""

_NAMED = {"\n": "\\n", "\r": "\\r"}


def escape(text: str, unsafe: re.Pattern[str] | str) -> str:
    """`text` with each character `unsafe` matches written as a Python-style escape (`\\n`, `\\x1b`, `\\u202e`)."""
    if re.search(unsafe, text) is None:
        return text
    return re.sub(unsafe, lambda m: _NAMED.get(m[0]) or _code(ord(m[0])), text)


def _code(point: int) -> str:
    if point < 0x100:
        return f"\\x{point:02x}"
    return f"\\u{point:04x}" if point < 0x10000 else f"\\U{point:08x}"


def terminal(text: str) -> str:
    """One line of text as a terminal or a CI log may show it (idempotent: escaping twice changes nothing)."""
    if text.isascii() and text.isprintable():  # printable ASCII: nothing to escape (the tab is not printable)
        return text
    return escape(text, _TERMINAL_UNSAFE)


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


_JSON_ESCAPED = f"[{INVISIBLE}\ud800-\udfff]"


def json_text(value: Any, **options: Any) -> str:
    """`json.dumps(value, **options)`, strict: no bare NaN or infinity, and encodable as UTF-8 even with
    `ensure_ascii=False` (a raw surrogate can stand only inside a string, where its escape means the same).
    Invisible characters are written as their `\\u` escapes too: the same string to a parser, and seen
    by whoever reads the document."""
    text = json.dumps(finite(value), allow_nan=False, **options)
    if text.isascii() and "\x7f" not in text:  # none of them (DEL is the one ASCII character among them)
        return text
    return re.sub(_JSON_ESCAPED, lambda m: _json_code(ord(m[0])), text)


def _json_code(point: int) -> str:
    if point < 0x10000:
        return f"\\u{point:04x}"
    point -= 0x10000
    return f"\\u{0xD800 + (point >> 10):04x}\\u{0xDC00 + (point & 0x3FF):04x}"
