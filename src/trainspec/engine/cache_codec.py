"""A result as JSON text, for the result cache's packs (`cache_store`), and read back with every type checked."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from trainspec.engine.cache_store import Uncachable
from trainspec.spec.device import Device
from trainspec.spec.diagnostics import Clause, Diagnostic, Join, Move, Related, SetValue, Severity, Suggestion
from trainspec.spec.result import Outcome, Result


class _Malformed(ValueError):
    """A stored entry that is not what this version writes: read as a miss."""


# Results as JSON. A diagnostic is a list of its fields in order, which keeps packs small and quick to
# read; reading checks the type of every value (a number is never a bool, a path part is text or a
# number), and anything else raises.

_SEVERITIES = {s.value: s for s in Severity}
_OUTCOMES = {o.value: o for o in Outcome}
_JOINS = {j.value: j for j in Join}
_NUMBER_OR_NONE = (int, type(None))
_TEXT_OR_NONE = (str, type(None))


def encode(result: Result) -> str:
    """`result` (as a report takes it: `Result.for_report`) as JSON text; Uncachable when it holds a value
    JSON cannot (`same` then finds whether it reads back as it was)."""
    data = [
        result.family.id if result.family is not None else None,
        result.outcome.value,
        result.reason,
        result.skipped,
        result.world_size,
        list(result.world_sizes),
        _device(result.device),
        [[n, text] for n, text in sorted(result.lines.items())],
        [_diagnostic(d, result.file) for d in result.diagnostics],
    ]
    try:
        return json.dumps(data, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError) as exc:
        raise Uncachable(str(exc)) from None


def decode(text: str, file: str, family_of: Callable[[str], Any]) -> Result:
    """The result `encode` wrote for `file`; ValueError (or another Exception) for anything but exactly that
    shape. `family_of` turns a family id back into the Family."""
    data = json.loads(text)
    if type(data) is not list or len(data) != 9:
        raise _Malformed("not a result")
    family, outcome, reason, skipped, world_size, world_sizes, device, lines, diagnostics = data
    if type(family) not in _TEXT_OR_NONE or type(reason) is not str or type(skipped) is not str:
        raise _Malformed("result")
    if type(world_size) not in _NUMBER_OR_NONE or type(lines) is not list or type(diagnostics) is not list:
        raise _Malformed("result")
    shown = {}
    for line in lines:
        if type(line) is not list or len(line) != 2 or type(line[0]) is not int or type(line[1]) is not str:
            raise _Malformed("line")
        shown[line[0]] = line[1]
    return Result(
        file,
        None if family is None else family_of(family),
        [_read_diagnostic(d, file) for d in diagnostics],
        None,
        world_size,
        lines=shown,
        skipped=skipped,
        outcome=_OUTCOMES[outcome],
        reason=reason,
        device=None if device is None else _read_device(device),
        world_sizes=_numbers(world_sizes),
    )


def same(a: Result, b: Result) -> bool:
    """Whether two results report the same, suggestions included (which Diagnostic equality leaves out)."""
    if a != b or len(a.diagnostics) != len(b.diagnostics):
        return False
    return all(_same_value(x.suggestion, y.suggestion) for x, y in zip(a.diagnostics, b.diagnostics, strict=True))


def _same_value(a: Any, b: Any) -> bool:
    """Equal, and of the same types throughout (1, 1.0 and True are equal in Python, not in a report)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_value(v, b[k]) for k, v in a.items())
    return bool(a == b)


def _device(device: Device | None) -> list[Any] | None:
    if device is None:
        return None
    capability = list(device.capability) if device.capability is not None else None
    return [device.type, device.name, capability, device.rocm, device.memory]


def _read_device(data: Any) -> Device:
    if type(data) is not list or len(data) != 5:
        raise _Malformed("device")
    kind, name, capability, rocm, memory = data
    if type(kind) is not str or type(name) is not str or type(rocm) is not bool or type(memory) not in _NUMBER_OR_NONE:
        raise _Malformed("device")
    if capability is not None:
        capability = _numbers(capability)
        if len(capability) != 2:
            raise _Malformed("device")
    return Device(kind, name, capability, rocm, memory)


def _diagnostic(d: Diagnostic, file: str) -> list[Any]:
    return [
        None if d.file == file else d.file,
        d.line,
        d.column,
        list(d.path),
        d.rule,
        d.severity.value,
        d.text,
        d.origin,
        [[list(r.path), r.line, r.column, r.end_line, r.end_column, r.label] for r in d.related],
        d.world_size,
        d.end_line,
        d.end_column,
        _suggestion(d.suggestion),
        [[c.text, c.join.value] for c in d.clauses],
        list(d.world_sizes),
    ]


def _read_diagnostic(data: Any, file: str) -> Diagnostic:
    if type(data) is not list or len(data) != 15:
        raise _Malformed("diagnostic")
    (
        own,
        line,
        column,
        path,
        rule,
        severity,
        text,
        origin,
        related,
        size,
        end_line,
        end_column,
        fix,
        clauses,
        sizes,
    ) = data
    if (
        type(own) not in _TEXT_OR_NONE
        or type(line) not in _NUMBER_OR_NONE
        or type(column) not in _NUMBER_OR_NONE
        or type(rule) is not str
        or type(text) is not str
        or type(origin) not in _TEXT_OR_NONE
        or type(related) is not list
        or type(size) not in _NUMBER_OR_NONE
        or type(end_line) not in _NUMBER_OR_NONE
        or type(end_column) not in _NUMBER_OR_NONE
        or type(clauses) is not list
    ):
        raise _Malformed("diagnostic")
    return Diagnostic(
        file if own is None else own,
        line,
        column,
        _path(path),
        rule,
        _SEVERITIES[severity],
        text,
        origin,
        tuple(map(_read_related, related)) if related else (),
        size,
        end_line,
        end_column,
        None if fix is None else _read_suggestion(fix),
        tuple(map(_read_clause, clauses)) if clauses else (),
        _numbers(sizes),
    )


def _read_related(data: Any) -> Related:
    if type(data) is not list or len(data) != 6:
        raise _Malformed("related")
    path, line, column, end_line, end_column, label = data
    if (
        type(line) not in _NUMBER_OR_NONE
        or type(column) not in _NUMBER_OR_NONE
        or type(end_line) not in _NUMBER_OR_NONE
        or type(end_column) not in _NUMBER_OR_NONE
        or type(label) is not str
    ):
        raise _Malformed("related")
    return Related(_path(path), line, column, end_line, end_column, label)


def _read_clause(data: Any) -> Clause:
    if type(data) is not list or len(data) != 2 or type(data[0]) is not str:
        raise _Malformed("clause")
    return Clause(data[0], _JOINS[data[1]])


def _suggestion(suggestion: Suggestion | None) -> list[Any] | None:
    if isinstance(suggestion, Move):
        return ["move", list(suggestion.to)]
    if isinstance(suggestion, SetValue):
        return ["set", list(suggestion.path), suggestion.value]
    if suggestion is None:
        return None
    raise Uncachable(f"a suggestion of type {type(suggestion).__name__}")


def _read_suggestion(data: Any) -> Suggestion:
    if type(data) is list and len(data) == 2 and data[0] == "move":
        return Move(_path(data[1]))
    if type(data) is list and len(data) == 3 and data[0] == "set":
        return SetValue(_path(data[1]), data[2])
    raise _Malformed("suggestion")


def _path(data: Any) -> tuple[str | int, ...]:
    if type(data) is not list:
        raise _Malformed("path")
    for part in data:
        if type(part) is not str and type(part) is not int:
            raise _Malformed("path")
    return tuple(data)


def _numbers(data: Any) -> tuple[int, ...]:
    if type(data) is not list:
        raise _Malformed("numbers")
    for n in data:
        if type(n) is not int:
            raise _Malformed("numbers")
    return tuple(data)
