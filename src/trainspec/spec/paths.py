"""Config paths: tuples of keys and indexes, shown as `data.datasets[2].path`.

A key that is empty or holds `.`, `[`, `]` or `"` (a map key written in a
config, say) is shown quoted, `data.anneal_weights["a.b"]`, so every path
reads back as the same tuple.
"""

from __future__ import annotations

import json
import re
from typing import Any

from trainspec.spec.errors import InvalidValue

Path = tuple[str | int, ...]

_SEGMENT = re.compile(r'([^.\[\]"]+)|\[(\d+)\]|(\.)|\[("(?:[^"\\]|\\.)*")\]')
_PLAIN_KEY = re.compile(r'[^.\[\]"]+')


def format_path(path: Path, *, pattern: bool = False) -> str:
    """Render a path the way users write it: dots between keys, [i] for items.

    As a `pattern` (a schema location, which every item of a list shares) each index is `[]`.
    """
    out = []
    for part in path:
        if isinstance(part, int):
            out.append("[]" if pattern else f"[{part}]")
        elif not _PLAIN_KEY.fullmatch(part):
            out.append(f"[{json.dumps(part, ensure_ascii=False)}]")
        else:
            out.append(part if not out else f".{part}")
    return "".join(out) or "(root)"


def parse_path(text: str) -> Path:
    """Parse `a.b[0].c`; raise ValueError on anything else."""
    parts: list[str | int] = []
    pos = 0
    expect_key = True
    while pos < len(text):
        m = _SEGMENT.match(text, pos)
        if m is None:
            raise InvalidValue(f"cannot read path {text!r} at character {pos + 1}")
        key, index, dot, quoted = m.groups()
        if quoted is not None:
            parts.append(json.loads(quoted))
            expect_key = False
        elif dot:
            if expect_key:
                raise InvalidValue(f"empty key in path {text!r}")
            expect_key = True
        elif index is not None:
            if not parts or expect_key:
                raise InvalidValue(f"index without a key in path {text!r}")
            parts.append(int(index))
        else:
            if not expect_key:
                raise InvalidValue(f"missing '.' before {key!r} in path {text!r}")
            parts.append(key)
            expect_key = False
        pos = m.end()
    if expect_key:
        raise InvalidValue(f"path {text!r} must end with a key or an index")
    return tuple(parts)


def is_prefix(a: Path, b: Path) -> bool:
    """True when `a` is `b` or one of its ancestors."""
    return len(a) <= len(b) and b[: len(a)] == a


def with_value(data: Any, path: Path, value: Any) -> Any:
    """`data` with the value at `path` replaced, copying only the containers on the way to it, so a
    document kept elsewhere (the language server's last parse) is left as it was."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    out: Any = data.copy()
    out[head] = with_value(data[head], rest, value)
    return out
