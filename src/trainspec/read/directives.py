"""File directives: a config's own `# trainspec: world-size=12 family=NAME@VERSION gpu=h100` comment line.

A directive speaks for the one file it is in, so it outranks the project configuration and
the command line (see `docs/project.md`). Only formats with comments carry directives;
suppressions (`# trainspec: ignore[...]`) are read by `suppressions`, not here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from trainspec.spec.codes import INVALID_DIRECTIVE
from trainspec.spec.device import Device, target
from trainspec.spec.diagnostics import Diagnostic, Severity
from trainspec.spec.document import Document
from trainspec.spec.formats import FORMATS
from trainspec.spec.world_sizes import parse_world_sizes

_SETTING = re.compile(r"([\w-]+)=(\S+)")
KEYS = ("world-size", "family", "gpu")


@cache
def _line(comment: str) -> re.Pattern[str]:
    """A directive line (not a suppression) of a format whose comments start with `comment`."""
    return re.compile(r"^\s*" + re.escape(comment) + r"\s*trainspec:(?!\s*ignore\[)\s*(.*?)\s*$")


@dataclass(frozen=True)
class Directives:
    world_sizes: tuple[int, ...] = ()
    family: str | None = None
    family_at: tuple[int, int] = (1, 1)
    """Line and column of the `family=` setting, for errors about the family it names."""
    device: Device | None = None
    """The target GPU `gpu=` names."""


def directives_of(doc: Document) -> tuple[Directives, list[Diagnostic]]:
    """A parsed document's directives: none in a format without comments, or without the word."""
    comment = FORMATS[doc.format].comment
    if "trainspec:" not in doc.text or comment is None:
        return Directives(), []
    return read_directives(doc.file, doc.text, comment)


def read_directives(file: str, text: str, comment: str) -> tuple[Directives, list[Diagnostic]]:
    """The settings a file's directive lines (comments starting with `comment`) give, and an error for each one
    that cannot be used."""
    directive = _line(comment)
    sizes: tuple[int, ...] = ()
    family: str | None = None
    family_at = (1, 1)
    device: Device | None = None
    seen: dict[str, int] = {}
    problems: list[Diagnostic] = []
    for number, line in enumerate(text.splitlines(), 1):
        found = directive.match(line)
        if found is None:
            continue
        column = found.start(1) + 1
        body = found.group(1)
        leftover = _SETTING.sub("", body).strip()
        if leftover or not _SETTING.search(body):
            problems.append(_invalid(file, number, column, f"cannot read `{body}`"))
            continue
        for found_setting in _SETTING.finditer(body):
            key, value = found_setting.groups()
            if key in seen:
                problems.append(_invalid(file, number, column, f"`{key}` is set twice (also on line {seen[key]})"))
                continue
            seen[key] = number
            if key == "world-size":
                try:
                    sizes = parse_world_sizes(value)
                except ValueError as exc:
                    problems.append(_invalid(file, number, column, f"world-size {exc}"))
            elif key == "family":
                family, family_at = value, (number, found.start(1) + found_setting.start() + 1)
            elif key == "gpu":
                try:
                    device = target(value)
                except ValueError as exc:
                    problems.append(_invalid(file, number, column, f"gpu: {exc}", GPU_HINT))
            else:
                problems.append(_invalid(file, number, column, f"unknown setting `{key}`"))
    return Directives(sizes, family, family_at, device), problems


HINT = "write `# trainspec: world-size=8,16 family=NAME[@VERSION]` (either setting alone is fine) on a line of its own"
GPU_HINT = "write `# trainspec: gpu=h100` (or gpu=sm_90), alone or beside world-size= and family="


def _invalid(file: str, line: int, column: int, why: str, hint: str = HINT) -> Diagnostic:
    message = f"file directive: {why}; {hint}"
    return Diagnostic(file, line, column, (), INVALID_DIRECTIVE.id, Severity.ERROR, message)
