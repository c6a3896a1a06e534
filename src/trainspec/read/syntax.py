"""Syntax errors in words: what the parser expected where it stopped, and why.

Parsers report the place they gave up and a terse reason ("Invalid value",
"mapping values are not allowed in this context"). The cause is often a
line or two earlier (a dedent, an unquoted value), so these functions turn
the parser's reason into what was expected there and, for YAML indentation,
name the line that opened or closed the block. Every message ends saying that
checking stopped there: a file that does not parse has no further results,
so more problems may follow once this one is fixed.
"""

from __future__ import annotations

import re

STOPPED = "checking stopped here, so more problems may follow"

_TOML = {
    "Invalid value": "expected a value here: a number, a quoted string, true or false, a date, "
    "an [array] or an {inline table} (text must be quoted)",
    "Expected newline or end of document after a statement": "expected the end of the line after this value: "
    "one `key = value` per line (quote text that holds spaces)",
    "Expected '=' after a key in a key/value pair": "expected `=` after the key (`key = value`)",
    "Invalid statement": "expected `key = value`, a `[table]` header or a `# comment`",
    "Invalid initial character for a key part": "expected a key: letters, digits, `_` and `-`, or a quoted key",
    "Unclosed array": "expected `]`: an array is left open",
    "Unclosed inline table": "expected `}` on this line: an inline table is left open (it must fit on one line)",
    "Cannot overwrite a value": "this key already has a value above; a key is written once per table",
    "Unterminated string": "expected the closing quote: a string is left open",
    "Expected ']' at the end of a table declaration": "expected `]` to close the table header",
    "Expected ']]' at the end of an array declaration": "expected `]]` to close the array-of-tables header",
}
_TOML_TWICE = re.compile(r"Cannot declare \((.*)\) twice")


def toml(reason: str, text: str = "", line: int | None = None) -> str:
    """tomllib's `reason` (at `line` of `text`) as what was expected, with the note that checking stopped."""
    said = _TOML.get(reason)
    if reason in ("Unclosed array", "Unclosed inline table") and line is not None:
        opened = _open_bracket(text, line)
        if opened is not None and said is not None:
            said += f" (the one opened on line {opened})"
    if said is None and (m := _TOML_TWICE.fullmatch(reason)):
        keys = [k.strip().strip("'\"") for k in m.group(1).split(",") if k.strip()]
        said = f"the table [{'.'.join(keys)}] is declared a second time; write each table header once"
    if said is None and reason.startswith("Illegal character '\\n'"):
        said = "expected the closing quote before the end of the line: a string is left open"
    return f"invalid TOML: {said or reason}; {STOPPED}"


def _open_bracket(text: str, line: int) -> int | None:
    """The line of the innermost `[` or `{` still open before `line`; strings and comments skipped."""
    opened: list[int] = []
    for n, row in enumerate(text.splitlines()[: line - 1], 1):
        quote = None
        for i, c in enumerate(row):
            if quote:
                if c == quote and (quote == "'" or row[i - 1] != "\\"):
                    quote = None
            elif c in "\"'":
                quote = c
            elif c == "#":
                break
            elif c in "[{":
                opened.append(n)
            elif c in "]}" and opened:
                opened.pop()
    return opened[-1] if opened else None


_JSON = {
    "Expecting ',' delimiter": "expected `,` between two items, or the bracket that closes them",
    "Expecting ':' delimiter": "expected `:` after the key",
    "Expecting value": 'expected a value: a number, a "string", true, false, null, [...] or {...}',
    "Extra data": "expected the end of the document: there is more after the first JSON value",
    "Unterminated string starting at": 'expected the closing `"`: the string starting here is left open',
    "Invalid control character at": "a string holds a raw tab or line break; write it as \\t or \\n",
}


def json(reason: str, text: str, offset: int) -> str:
    """json's `reason` at `offset` as what was expected, with the note that checking stopped."""
    said = _JSON.get(reason)
    if reason == "Expecting property name enclosed in double quotes":
        before = text[:offset].rstrip()
        if before.endswith(","):
            said = "a comma before the closing `}`: JSON allows no trailing comma; remove it"
        else:
            said = 'expected a key in double quotes ("key": value)'
    elif reason == "Expecting value" and text[:offset].rstrip().endswith(",") and text[offset : offset + 1] == "]":
        said = "a comma before the closing `]`: JSON allows no trailing comma; remove it"
    return f"invalid JSON: {said or reason}; {STOPPED}"


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _content(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def _spaces(n: int) -> str:
    return f"{n} space{'s' if n != 1 else ''}"


def _key(line: str) -> str:
    return line.strip().split(":", 1)[0].lstrip("- ").strip()


def yaml(problem: str, text: str, line: int, column: int) -> str:
    """PyYAML's `problem` at `line` and `column`; for an indentation mistake, which lines set the
    indentation that the line breaks, and how to indent it."""
    lines = text.splitlines()
    said = problem
    if 0 < line <= len(lines) and _content(lines[line - 1]):
        said = _yaml_indentation(lines, line, problem) or problem
        if lines[line - 1][column - 1 : column] == "\t":
            said = "a tab where YAML expects spaces: YAML indents with spaces only; replace the tab"
    return f"invalid YAML: {said}; {STOPPED}"


def _yaml_indentation(lines: list[str], line: int, problem: str) -> str | None:
    here = _indent(lines[line - 1])
    before = [(n, _indent(lines[n - 1])) for n in range(line - 1, 0, -1) if _content(lines[n - 1])]
    if not before:
        return None
    # The blocks the line could be in: going up, each line less indented than all below it.
    open_blocks: list[tuple[int, int]] = []
    for n, indent in before:
        if not open_blocks or indent < open_blocks[-1][1]:
            open_blocks.append((n, indent))
    levels = [indent for _n, indent in open_blocks]
    previous, previous_indent = before[0]
    key = _key(lines[line - 1])
    if here not in levels and any(i < here for i in levels) and any(i > here for i in levels):
        closed_indent = min(i for i in levels if i > here)
        outer = max(i for i in levels if i < here)
        opener = next(n for n, i in open_blocks if i == outer)
        block = _key(lines[opener - 1])
        return (
            f"line {line} (`{key}`) is indented {_spaces(here)}, which matches no block: the keys of `{block}` "
            f"(opened at line {opener}) are at {_spaces(closed_indent)}, the keys around it at {_spaces(outer)}; "
            f"indent it by {_spaces(closed_indent)} to keep it in `{block}`, or by {_spaces(outer)} to end `{block}`"
        )
    if problem.startswith("mapping values are not allowed") and here > previous_indent:
        return (
            f"line {line} (`{key}`) is indented more than line {previous} (`{_key(lines[previous - 1])}`), "
            f"so YAML reads it as more of line {previous}'s value, where `key: value` cannot be; "
            f"indent it by {_spaces(previous_indent)}, as line {previous}"
        )
    return None
