"""Every console block of the README and docs/ is a command and what trainspec prints for it: each is run
again, as written, and compared line by line (a `...` line stands for any lines), so a change of output
fails here until the docs say it.

A block in a reference page runs in an empty folder holding the file the page shows above it in the same
section ("Breaks it (`example.toml`):", "Fixed (`example.toml`):"); README.md and the guides run from the
root of the repository (a leading `cd DIR &&` is followed).
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from trainspec.cli import main

from .conftest import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "docs" / "reference").glob("*.md"))]
BLOCK = re.compile(r"```console\n(.*?)```", re.S)
SHOWN_FILE = re.compile(r"\(`([^`]+)`\):\n\n```\w*\n(.*?)```", re.S)


def blocks(page: Path) -> list[tuple[str, list[str], dict[str, str]]]:
    """(command, expected lines, files to write first) for each console block of the page."""
    text = page.read_text(encoding="utf-8")
    found = []
    for section in re.split(r"\n(?=### )", text):
        for block in BLOCK.finditer(section):
            before = section[: block.start()]
            shown = list(SHOWN_FILE.finditer(before))
            files = {shown[-1].group(1): shown[-1].group(2)} if shown and "reference" in page.parts else {}
            lines = block.group(1).splitlines()
            commands = [n for n, line in enumerate(lines) if line.startswith("$ ")]
            for n, start in enumerate(commands):
                end = commands[n + 1] if n + 1 < len(commands) else len(lines)
                found.append((lines[start][2:], lines[start + 1 : end], files))
    return found


def matches(expected: list[str], got: list[str]) -> bool:
    """Whether `got` is `expected` with each `...` line standing for any number of lines."""
    pattern = "".join(".*?" if line.strip() == "..." else re.escape(line + "\n") for line in expected)
    return re.fullmatch(pattern, "".join(line + "\n" for line in got), re.S) is not None


def run(command: str, where: Path) -> list[str]:
    argv = shlex.split(command)
    if argv[0] == "cd":
        where, argv = where / argv[1], argv[3:]
    assert argv[0] == "trainspec", f"not a trainspec command: {command}"
    out = io.StringIO()
    # a usage error prints, then exits: what it printed is compared
    with (
        contextlib.chdir(where),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(out),
        contextlib.suppress(SystemExit),
    ):
        main(argv[1:])
    return out.getvalue().splitlines()


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_console_block_prints_what_it_shows(page, tmp_path):
    wrong = []
    for n, (command, expected, files) in enumerate(blocks(page)):
        where = ROOT
        if files:
            where = tmp_path / str(n)
            where.mkdir()
            for name, text in files.items():
                (where / name).write_text(text, encoding="utf-8")
        got = run(command, where)
        if not matches(expected, got):
            wrong.append(
                f"$ {command}\n--- the page shows\n" + "\n".join(expected) + "\n--- trainspec prints\n" + "\n".join(got)
            )
    assert not wrong, f"{len(wrong)} console block(s) of {page.name} differ:\n\n" + "\n\n".join(wrong[:5])


def test_the_console_blocks_are_found():
    counted = {page.name: len(blocks(page)) for page in PAGES}
    assert counted["README.md"] >= 1 and counted["plan.md"] >= 2 and counted["kempnerforge.md"] >= 50
    assert matches(["a", "...", "z"], ["a", "b", "c", "z"]) and not matches(["a", "z"], ["a", "b", "z"])
