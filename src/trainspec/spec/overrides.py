"""`--set PATH=VALUE`: edits applied to a document before it is validated.

Paths are resolved against the schema, not the current data, so a known path
into an absent section creates it and an unknown path is an error naming the
closest known path. Values are typed by the schema at the path: string
fields keep the text as written; other fields read it as a YAML 1.2 flow
value (`[0.9, 0.95]`, `true`, `3e-4`, `null`). An array or table value
replaces the whole value. Null on an optional field without a default
removes it (`vlm=null` drops the section).
"""

from __future__ import annotations

import ast
import difflib
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from trainspec.spec.codes import OVERRIDE_INVALID_VALUE, OVERRIDE_SYNTAX, OVERRIDE_UNKNOWN_PATH
from trainspec.spec.diagnostics import Diagnostic, Severity
from trainspec.spec.digits import in_digit_limit, too_many_digits
from trainspec.spec.document import Document, ReadError
from trainspec.spec.errors import InvalidType, InvalidValue
from trainspec.spec.formats import OVERRIDE_VALUES
from trainspec.spec.limits import KEY_PARTS
from trainspec.spec.paths import Path, format_path, parse_path
from trainspec.spec.schema import Node, Schema, get
from trainspec.spec.wording import closest, show


@dataclass(frozen=True)
class Override:
    """`PATH=VALUE`, the `index`-th override; `python` marks KempnerForge's `--PATH=VALUE`
    form, whose values are Python literals (`(0.9, 0.95)`, `1_024`, `None`)."""

    index: int
    text: str
    python: bool = False
    source: str = ""
    """Where the override is written when not on the command line (a project configuration)."""

    @property
    def origin(self) -> str:
        if self.source:
            return f"override `{self.text}` of {self.source}"
        return f"override #{self.index} ({'--' if self.python else '--set '}{self.text})"


def from_command_line(sets: Sequence[str], flags: Sequence[str]) -> tuple[Override, ...]:
    """`--set PATH=VALUE`s (YAML values), then KempnerForge's `--PATH=VALUE` flags (Python literals; a bare
    `--PATH` is true), numbered in that order. ValueError for a flag of neither form."""
    texts = [(text, False) for text in sets]
    for arg in flags:
        if not arg.startswith("--") or not ("=" in arg or "." in arg):
            raise InvalidValue(f"unrecognized argument: {arg}")
        key, eq, value = arg[2:].partition("=")
        texts.append((f"{key}={value if eq else 'True'}", True))
    return tuple(Override(n, text, python) for n, (text, python) in enumerate(texts, 1))


class _Refused(Exception):
    def __init__(self, rule: str, message: str) -> None:
        super().__init__(message)
        self.rule = rule
        self.message = message


def apply_overrides(doc: Document, overrides: list[Override], schema: Schema) -> list[Diagnostic]:
    """Apply each override in order to `doc.data`; problems come back as diagnostics."""
    problems = []
    for n, override in enumerate(overrides):
        path: Path = ()  # a refusal after the path is read is about that path
        try:
            path, value_text = _read(override)
            written_again = any(o.text.partition("=")[0] == override.text.partition("=")[0] for o in overrides[n + 1 :])
            _apply(doc, override, schema, path, value_text, written_again)
        except _Refused as refused:
            problems.append(
                Diagnostic(
                    doc.file,
                    None,
                    None,
                    path,
                    refused.rule,
                    Severity.ERROR,
                    refused.message,
                    origin=override.origin,
                )
            )
    return problems


def _read(override: Override) -> tuple[Path, str]:
    """The path an override sets (text entering from the command line or a project file) and its value's text."""
    path_text, eq, value_text = override.text.partition("=")
    if not eq:
        raise _Refused(OVERRIDE_SYNTAX.id, f"`{override.text}` has no `=`; write PATH=VALUE, e.g. model.dim=4096")
    if path_text != path_text.strip() or not path_text:
        raise _Refused(
            OVERRIDE_SYNTAX.id,
            f"the path {path_text!r} has surrounding spaces or is empty; "
            f"write it as `{path_text.strip() or 'section.key'}`",
        )
    parts = path_text.count(".") + path_text.count("[") + 1  # at least the parts it has: counted before reading it
    if parts > KEY_PARTS.value:
        raise _Refused(OVERRIDE_SYNTAX.id, f"`{path_text[:80]}…`: " + KEY_PARTS.exceeded(f"{parts:,} parts"))
    try:
        path = parse_path(path_text)
    except ValueError as exc:
        raise _Refused(OVERRIDE_SYNTAX.id, str(exc)) from None
    return path, value_text


def _apply(
    doc: Document, override: Override, schema: Schema, path: Path, value_text: str, written_again: bool = False
) -> None:
    path_text = override.text.partition("=")[0]
    if override.python and any(isinstance(part, int) for part in path):
        raise _Refused(
            OVERRIDE_UNKNOWN_PATH.id,
            f"`{path_text}`: KempnerForge's own command line splits keys at '.' and has no [N] list indices, "
            "so it refuses this path; write the whole list, or use --set",
        )
    node = _resolve(doc.data, path, schema, path_text)
    _refuse_scalars_on_the_way(doc.data, path, path_text)
    parent = schema.node_at(path[:-1], doc.data) or {}
    optional = path[-1] not in schema.required(parent, get(doc.data, path[:-1])) and not schema.has_default(node)
    try:
        value, remove = _typed_value(value_text, node, schema, path_text, optional, override.python)
    except _Refused as refused:
        # The last write wins: a loader that keeps a scalar's text as written (SpecForge) never reads the text
        # of a value a later override replaces. A list or table it parses at once, so that stays an error.
        scalar = not schema.types(node) & {"array", "object"}
        if written_again and scalar and not override.python and refused.rule == OVERRIDE_INVALID_VALUE.id:
            return
        raise
    doc.mark_origin(_set(doc.data, path, value, remove), override.origin)


def _resolve(data: Any, path: Path, schema: Schema, path_text: str) -> Node:
    node: Node | None = schema.root
    value = data
    for n, part in enumerate(path):
        assert node is not None
        if isinstance(part, int) and (not isinstance(value, list) or part >= len(value)):
            size = len(value) if isinstance(value, list) else 0
            raise _Refused(
                OVERRIDE_UNKNOWN_PATH.id,
                f"`{format_path(path[: n + 1])}`: index {part} is out of range "
                f"(the list has {size} item{'s' if size != 1 else ''})",
            )
        parent, node = node, schema.child(node, part, value)
        if node is None and isinstance(part, str):
            # a key of another variant of a union: the variant the merged config selects decides
            node = schema.properties(parent, value, every=True).get(part)
        if node is None:
            raise _Refused(OVERRIDE_UNKNOWN_PATH.id, _unknown(path_text, schema))
        value = (
            value.get(part)
            if isinstance(value, dict) and isinstance(part, str)
            else (value[part] if isinstance(value, list) and isinstance(part, int) else None)
        )
    assert node is not None
    return node


def _unknown(path_text: str, schema: Schema) -> str:
    plain = re.sub(r"\[\d+\]", "[0]", path_text)
    parent, _, last = plain.rpartition(".")
    known = [format_path(p) for p in schema.paths]  # compared as written: a typo is in the text
    siblings = {p.rpartition(".")[2]: p for p in known if p.rpartition(".")[0] == parent}
    key = closest(last, sorted(siblings))  # a typo in the key (`model.n_head`)
    close = siblings[key] if key is not None else None
    if close is None:  # an abbreviation one way or the other (`learning_rate` for `lr`, `tp` for `tensor_parallel`)
        short = [k for k in sorted(siblings) if _initials(k) == last or _initials(last) == k]
        close = siblings[short[0]] if len(short) == 1 else None
    homes = [p for p in known if p.rpartition(".")[2] == last]
    if close is None:  # the same key in another section (`train.lr` for `optimizer.lr`)
        close = homes[0] if len(homes) == 1 else None
    if close is None:  # the whole path misread, sections and all (`training.deployment_mode`)
        others = [p for p in known if not plain.startswith(p + ".") and p not in siblings.values()]
        matcher = difflib.SequenceMatcher(None, b=plain)  # indexed once; the cheap bounds first, as difflib's own
        scores: dict[str, float] = {}
        for p in others:
            matcher.set_seq1(p)
            if matcher.real_quick_ratio() >= PATH_SIMILAR and matcher.quick_ratio() >= PATH_SIMILAR:
                scores[p] = matcher.ratio()
        best = max(scores, key=lambda p: scores[p], default=None)
        close = best if best is not None and scores[best] >= PATH_SIMILAR else None
    if close is not None:
        hint = f"; did you mean `{close}`?"
    elif 1 < len(homes) <= KEYS_LISTED:  # the key in several sections: name them all
        hint = "; did you mean one of " + ", ".join(f"`{p}`" for p in homes) + "?"
    else:  # nothing alike (`optimizer.learning_rate` for `optimizer.lr`): what the section does hold
        section = parent if siblings else ""
        keys = sorted(siblings) if siblings else sorted({p.split(".")[0].split("[")[0] for p in known})
        shown = ", ".join(f"`{k}`" for k in keys[:KEYS_LISTED]) + (
            f" and {len(keys) - KEYS_LISTED} more" * (len(keys) > KEYS_LISTED)
        )
        where = f"the keys of `{section}` are" if section else "the top-level sections are"
        hint = f"; {where} {shown} (`trainspec show` lists every path)" if keys else ""
    return f"`{path_text}` is not a config path{hint}"


KEYS_LISTED = 12
"""Keys an unknown path's message lists when nothing is close enough to suggest."""


def _initials(key: str) -> str:
    """`tensor_parallel` -> `tp`: what a key of several words is abbreviated to ("" for a key of one word)."""
    words = [w for w in key.split("_") if w]
    return "".join(w[0] for w in words) if len(words) > 1 else ""


PATH_SIMILAR = 0.7
"""How alike a whole written path and a known one must be for a "did you mean" (paths share their
section names, so a whole-path likeness needs less than a single key's)."""


def _typed_value(
    text: str, node: Node, schema: Schema, path_text: str, optional: bool, python: bool
) -> tuple[Any, bool]:
    types = schema.types(node)
    nullable = "null" in types
    literal = _python_literal(text, path_text) if python else _NOT_A_LITERAL
    if "string" in types and types <= {"string", "null"}:
        if nullable and (text == "null" if not python else literal is None):
            return None, False
        if python and isinstance(literal, str):
            return literal, False
        if not python and nullable and len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
            return _parse(text, path_text), False
        return text, False
    if text.strip() == "":
        raise _Refused(
            OVERRIDE_INVALID_VALUE.id,
            f"`{path_text}` needs a value; an empty value is only allowed for text fields",
        )
    value = literal if literal is not _NOT_A_LITERAL else _parse(text, path_text)
    if value is None and not nullable and optional:
        return None, True
    return value, False


_NOT_A_LITERAL: Any = object()


def _python_literal(text: str, path_text: str) -> Any:
    """The value of a Python literal (tuples as lists), or _NOT_A_LITERAL (then the text is read as YAML).

    Only plain data counts: a set, bytes, a complex number or `...` is no config value, so that text
    is read as YAML too. An integer too long to write in decimal (`0x` and 3,600 digits) is refused,
    as the readers refuse one.
    """
    try:
        with warnings.catch_warnings():  # Python's warnings about the text as source (`"\]"`) are noise here
            warnings.simplefilter("ignore")
            value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _NOT_A_LITERAL
    try:
        return _plain(value)
    except TypeError:
        return _NOT_A_LITERAL
    except ValueError:
        raise _Refused(OVERRIDE_INVALID_VALUE.id, f"`{path_text}`: {too_many_digits()}") from None


def _plain(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, int):
        return in_digit_limit(value)
    if value is None or isinstance(value, (str, float)):
        return value
    raise InvalidType(f"{type(value).__name__} is not plain data")


def _parse(text: str, path_text: str) -> Any:
    try:
        doc = OVERRIDE_VALUES.parser().parse("<override>", text)  # PyYAML only for runs with overrides
    except ReadError as exc:
        raise _Refused(
            OVERRIDE_INVALID_VALUE.id,
            f"`{path_text}`: cannot read the value {text!r}: {exc.diagnostic.message}",
        ) from None
    if doc.problems:
        raise _Refused(OVERRIDE_INVALID_VALUE.id, f"`{path_text}`: {doc.problems[0].message}")
    return doc.data


def _refuse_scalars_on_the_way(data: Any, path: Path, path_text: str) -> None:
    """An override never replaces a value the file wrote (a scalar or a list) by a table around the new key.

    The walk stops at the first absent (or null) section: `_set` creates it and everything below.
    (An index into anything but a list of that length was refused by `_resolve`.)
    """
    value = data
    for n, part in enumerate(path[:-1]):
        value = get(value, (part,))
        if value is None:
            return
        if isinstance(path[n + 1], str) and not isinstance(value, dict):
            where = format_path(path[: n + 1])
            raise _Refused(
                OVERRIDE_UNKNOWN_PATH.id,
                f"`{where}` is {show(value)} in the file, not a table, so `{path_text}` cannot be set inside it; "
                f"fix `{where}` first",
            )


def _set(data: Any, path: Path, value: Any, remove: bool) -> Path:
    """Put `value` at `path` (or remove what is there) and return what the override wrote: `path`,
    or the first absent (or null) section on the way, which it creates, so checks of that section
    point at the override. A removal creates nothing."""
    target, written = data, path
    for n, part in enumerate(path[:-1]):
        if get(target, (part,)) is None:
            if remove:
                return path
            target[part] = {}
            if written == path:
                written = path[: n + 1]
        target = target[part]
    last = path[-1]
    if remove:
        if isinstance(target, dict):
            target.pop(last, None)
        return path
    target[last] = value
    return written
