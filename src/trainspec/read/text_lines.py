"""A text's line endings, and a rewritten text that keeps every line it did not change byte for byte."""

from __future__ import annotations

import difflib
import re


def line_ending(text: str) -> str:
    """The line break `text` uses (that of its first line; `\\n` for a single line), for the lines a writer adds."""
    found = re.search(r"\r\n|\r|\n", text)
    return found[0] if found else "\n"


def keep_original_lines(original: str, baseline: str, migrated: str) -> str:
    """`migrated`, with every line the migration did not touch taken byte for byte from `original`.

    The emitter normalizes what it does not understand as meaningful (spacing
    before a comment, line endings, trailing blanks). Lines the migration left
    alone are found by diffing `migrated` against `baseline` (the same emitter's
    output for the unmigrated tree), then traced back to `original` through a
    diff of `baseline` against it; new lines use the original's line ending (LF, CRLF or a lone CR).
    """
    ending = line_ending(original)
    source = original.splitlines(keepends=True)
    emitted = baseline.splitlines()
    to_source: dict[int, int] = {}
    stripped = [line.rstrip("\r\n") for line in source]
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, emitted, stripped, autojunk=False).get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            to_source.update(zip(range(i1, i2), range(j1, j2), strict=True))
    out = []
    fresh = migrated.splitlines()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, emitted, fresh, autojunk=False).get_opcodes():
        if tag == "equal":
            for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                out.append(source[to_source[i]] if i in to_source else fresh[j] + ending)
        else:
            out.extend(line + ending for line in fresh[j1:j2])
    if out and not out[-1].endswith(("\n", "\r")):  # the original's last line, which had no line break
        out[-1] += ending
    return "".join(out)
