"""Write plain values into a config file, keeping everything else as written (`trainspec plan --apply`).

TOML is edited as text: a written value is replaced where the reader found
it, a missing key goes after the last line of its table (or a new table at
the end). YAML goes through ruamel.yaml's round-trip mode, and every line
the edit leaves alone is kept byte for byte (`migrate.keep_original_lines`).
JSON has no comments to keep and is rewritten with two-space indents.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from trainspec.errors import TrainspecError
from trainspec.paths import Path, format_path
from trainspec.read.document import Positions, Span
from trainspec.read.files import parse


class RewriteError(TrainspecError):
    """The values cannot be written into this file without disturbing what is there."""


def set_values(file: str, text: str, values: Mapping[Path, Any]) -> str:
    """`text` with each path set to its value (booleans, numbers, text, null)."""
    doc = parse(file, text)
    if doc.format == "toml":
        return _toml(text, doc.positions, values)
    if doc.format == "yaml":
        return _yaml(text, values)
    data = json.loads(text)
    for path, value in values.items():
        _put(data, path, value)
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _toml(text: str, positions: Positions, values: Mapping[Path, Any]) -> str:
    lines = text.splitlines(keepends=True)
    newline = "\r\n" if "\r\n" in text else "\n"
    appended: dict[Path, list[str]] = {}
    inserts: dict[int, list[str]] = {}  # after line n (1-based), these lines
    for path, value in values.items():
        written, table = positions.get(path), path[:-1]
        entry = f"{path[-1]} = {_toml_value(value)}"
        if written is not None:
            start, end = written.value, written.value_end
            if start is None or end is None or start.line != end.line:
                raise RewriteError(f"`{format_path(path)}` spans lines; set it by hand")
            line = lines[start.line - 1]
            lines[start.line - 1] = line[: start.column - 1] + _toml_value(value) + line[end.column - 1 :]
        elif table in positions and _is_header(lines, positions[table]):
            inserts.setdefault(_last_line(positions, table), []).append(entry)
        elif table in positions or not table:
            raise RewriteError(f"`{format_path(table) or 'the top level'}` is not a [table] header; set it by hand")
        else:
            appended.setdefault(table, []).append(entry)
    out: list[str] = []
    for n, line in enumerate(lines, 1):
        out.append(line)
        if n in inserts:
            if not line.endswith("\n"):
                out[-1] += newline
            out.extend(entry + newline for entry in inserts[n])
    for table, entries in appended.items():
        if out and not out[-1].endswith("\n"):
            out[-1] += newline
        out.append(f"{newline}[{format_path(table)}]{newline}")
        out.extend(entry + newline for entry in entries)
    return "".join(out)


def _is_header(lines: list[str], span: Span) -> bool:
    return span.key is not None and lines[span.key.line - 1].lstrip().startswith("[")


def _last_line(positions: Positions, table: Path) -> int:
    """The last line a table's own entries use (its header line when it has none)."""
    found = 0
    for path, span in positions.items():
        if path[: len(table)] == table:
            found = max(found, *(p.line for p in (span.key, span.value, span.value_end) if p is not None))
    return found


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    raise RewriteError(f"cannot write {value!r} into TOML here")


def _yaml(text: str, values: Mapping[Path, Any]) -> str:
    from trainspec.write.migrate import keep_original_lines
    from trainspec.write.yaml_roundtrip import YAMLError, round_trip

    yaml = round_trip(text)
    try:
        data = yaml.load(text)
    except YAMLError as exc:
        raise RewriteError(f"cannot read the file for rewriting: {exc}") from exc
    baseline = _dump(yaml, data)
    for path, value in values.items():
        _put(data, path, value)
    return keep_original_lines(text, baseline, _dump(yaml, data))


def _dump(yaml: Any, data: Any) -> str:
    import io

    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()


def _put(data: Any, path: Path, value: Any) -> None:
    for part in path[:-1]:
        if not isinstance(data, dict):
            raise RewriteError(f"`{format_path(path)}`: a value on the way is not a table")
        if not isinstance(data.get(part), dict):
            data[part] = {}
        data = data[part]
    data[path[-1]] = value
