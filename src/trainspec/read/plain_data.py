"""A config handed over in memory, as the data a file could hold, or why part of it cannot be.

`check_config` takes whatever a program built: a loaded model's dump, the
trainer's own dicts. Everything past this point assumes what a reader produces
(string keys; strings, numbers, booleans, null, dates, lists and tables; no
cycles), so a recursive dict would loop forever and a complex number or an
integer key would end in a TypeError. Each such place is a diagnostic at its
path instead, and the rest of the config is still checked. Tuples become lists
(a trainer's `betas = (0.9, 0.95)` is a TOML array) and any mapping a dict.

`put` sets a value in such data, as the writers of formats loaded as data do.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any

from trainspec.spec.codes import INVALID_VALUE, WRONG_TYPE
from trainspec.spec.diagnostics import Diagnostic, Severity
from trainspec.spec.errors import RewriteError
from trainspec.spec.paths import Path, format_path

MAX_DEPTH = 100
"""Levels of nesting (a real config has about five); what checks the data copies it recursively."""

SCALARS = (str, int, float, bool, type(None), datetime.date, datetime.time)
"""What the readers produce besides lists and tables (`datetime.datetime` is a `date`)."""


def as_data(config: Mapping[Any, Any], source: str) -> tuple[dict[str, Any], list[Diagnostic]]:
    """A plain copy of `config` without what no config file could hold, and a diagnostic for each such place."""
    problems: list[Diagnostic] = []

    def refuse(path: Path, rule: str, message: str) -> None:
        problems.append(Diagnostic(source, None, None, path, rule, Severity.ERROR, message))

    def name(path: Path) -> str:
        return f"`{format_path(path)}`" if path else "the config"

    def copy(value: Any, path: Path, holders: tuple[int, ...]) -> tuple[bool, Any]:
        if isinstance(value, SCALARS):
            return True, exact(value)
        if not isinstance(value, Mapping | list | tuple):
            refuse(path, WRONG_TYPE.id, f"{name(path)} is a {type(value).__name__}, which no config file can hold")
            return False, None
        if id(value) in holders:
            refuse(path, INVALID_VALUE.id, f"{name(path)} contains itself, which no config file can hold")
            return False, None
        if len(holders) >= MAX_DEPTH:
            refuse(
                path, INVALID_VALUE.id, f"{name(path)} nests more than {MAX_DEPTH} levels deep; no config is this deep"
            )
            return False, None
        inner = (*holders, id(value))
        if not isinstance(value, Mapping):  # a list with a part left out would shift its items: all or nothing
            items = [copy(item, (*path, n), inner) for n, item in enumerate(value)]
            return all(ok for ok, _ in items), [item for _, item in items]
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                refuse(path, WRONG_TYPE.id, f"{name(path)} has the key {key!r}; the keys of a config are strings")
                continue
            ok, kept = copy(item, (*path, exact(key)), inner)
            if ok:
                out[exact(key)] = kept
        return True, out

    _, data = copy(config, (), ())
    return data, problems


def exact(value: Any) -> Any:
    """A scalar as its plain type: an `int`, `float` or `str` subclass (an IntEnum, a numpy-like number, a
    class with its own `__eq__` or `__str__`) becomes the value it holds, read by the base type's own
    method, so the rules and the messages see what a config file would have given them."""
    if type(value) in (str, int, float, bool) or not isinstance(value, (str, int, float)):
        return value
    if isinstance(value, int):
        return int.__int__(value)
    return float.__float__(value) if isinstance(value, float) else str.__str__(value)


def put(data: Any, path: Path, value: Any) -> None:
    """Set `path` to `value`, making the tables on the way; RewriteError when a value on the way is not a table."""
    for part in path[:-1]:
        if not isinstance(data, dict):
            raise RewriteError(f"`{format_path(path)}`: a value on the way is not a table")
        if not isinstance(data.get(part), dict):
            data[part] = {}
        data = data[part]
    data[path[-1]] = value
