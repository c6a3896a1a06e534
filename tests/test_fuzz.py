"""Seeded mutation fuzz of the readers and of overrides: whatever the input, a checked file ends in diagnostics.

Each case starts from a corpus file (TOML, YAML, and JSON written from the YAML
files) and either mutates it with a `random.Random` seeded for that case (bit
flips, truncation, huge numbers, deep nesting, control characters, BOM and CRLF,
YAML aliases and tags, random bytes, values of another type) or applies random
overrides to it (known and unknown paths; huge, nested, quoted and null values;
the `--set` and the KempnerForge `--a.b=v` forms), and checks it in process. A
case fails when an exception escapes, a diagnostic is an internal error (or a
rule or hook that failed), a diagnostic names another file, a diagnostic's text or
GitHub line holds a character a terminal or log must not get raw (or JUnit
output is not well-formed XML), or the case takes longer than its time budget.

TRAINSPEC_FUZZ_CASES mutated files and as many override sets (default 300, for
CI); a longer run: `TRAINSPEC_FUZZ_CASES=3000 pytest tests/test_fuzz.py`.
TRAINSPEC_FUZZ_SEED picks another sequence of cases. A failure names the case's
file (kept) and what was done to it; the case number and seed reproduce it.
"""

from __future__ import annotations

import io
import json
import os
import random
import re
import signal
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import pytest
import yaml

from trainspec.api import check_path
from trainspec.engine.runner import Options, check_file
from trainspec.families import get_family
from trainspec.report.github import format_command
from trainspec.report.junit import report as junit_report
from trainspec.spec.escaping import terminal
from trainspec.spec.overrides import Override
from trainspec.spec.paths import format_path
from trainspec.spec.result import Result

from .conftest import CORPUS, ROOT

CASES = int(os.environ.get("TRAINSPEC_FUZZ_CASES", "300"))
SEED = int(os.environ.get("TRAINSPEC_FUZZ_SEED", "0"))
BUDGET = 2.0
"""Seconds one case may take; a case still running at 5x this is stopped and reported as a hang."""

TOML_FILES = sorted((CORPUS / "kempnerforge").rglob("*.toml"))
YAML_FILES = sorted((CORPUS / "specforge").glob("*.yaml"))
JSON_FILES = sorted((CORPUS / "specforge").glob("*.json"))

NUMBERS = [
    "1" * 4301,
    "-" + "9" * 5000,
    "1_" * 4300 + "1",
    "0x" + "f" * 4000,
    "0o" + "7" * 5000,
    "0b" + "1" * 15000,
    "9" * 4300,
    "1" + "0" * 400,
    "-" + "1" * 330,
    "9223372036854775808",
    "1e400",
    "-1e400",
    "1" + "0" * 400 + ".5",
    "0",
    "-1",
    "1.5",
]
VALUES = {
    ".toml": [
        *("[]", "{}", '["mot"]', "true", '"text"', "'text'", "[1, [2, [3]]]", "{a = 1, b = {c = [1]}}"),
        *('"' + "x" * 5000 + '"', '"\\u0000"', '""', "1979-05-27T07:32:00Z", "07:32:00", "inf", "-inf", "nan"),
    ],
    ".yaml": [
        *("[]", "{}", "[mot]", "null", "~", "true", "yes", "on", '"text"', "{a: 1}", "!!str 5", "!!int 5"),
        *("!!binary aGVsbG8=", "!custom 5", "*undefined", ".inf", "-.inf", ".nan", "2020-01-01", "'x'"),
    ],
    ".json": [
        *("[]", "{}", '["mot"]', "null", "true", '"text"', '{"a": 1}', "NaN", "Infinity", "-Infinity", "-0"),
        *('"\\u0000"', '"\\ud800"', "1.0"),
    ],
}
BROKEN = ["[", "{", '"unterminated', "=", ":", "-", "]]"]
SPECIALS = ["\x00", "\x01", "\x07", "\x08", "\x0b", "\x0c", "\x1b", "\x1f", "\x7f", "\x85", "\u2028", "\ufeff", "\r"]
YAML_SNIPPETS = [
    "a: &a [1, 2]\nb: *a\n",
    "a: &a {x: 1}\nb:\n  <<: *a\n",
    "model: !!python/object:os.system [ls]\n",
    "x: !!set {a, b}\n",
    "x: !!float 'abc'\n",
    "x: !!timestamp 2020-01-01\n",
    "? [a, b]\n: 1\n",
    "? {a: 1}\n: 2\n",
    "--- \n---\n",
    "%YAML 1.2\n---\nx: 1\n",
    "l0: &l0 [a, a, a, a, a, a, a, a, a]\n"
    + "".join(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]\n" for i in range(1, 9)),
]
VALUE_AT = {
    ".toml": re.compile(r"(?m)^[ \t]*[\w.\"'-]+[ \t]*=[ \t]*([^\s\[{\"'#][^#\n]*?|\"[^\"\n]*\"|\[[^\n]*\])[ \t]*$"),
    ".yaml": re.compile(r"(?m)^[ \t-]*[\w.-]+:[ \t]+(\S[^\n]*?)[ \t]*$"),
    ".json": re.compile(r"(?m):[ \t]*([^\s\[{][^\n]*?),?[ \t]*$"),
}
"""Where a one-line value of a key is written (group 1), per format."""


def corpus() -> list[tuple[str, str]]:
    """(extension, text) of every corpus file, and each YAML file written as JSON."""
    found = [(".toml", p.read_text()) for p in TOML_FILES] + [(".yaml", p.read_text()) for p in YAML_FILES]
    found += [(".json", p.read_text()) for p in JSON_FILES]
    found += [(".json", json.dumps(yaml.safe_load(p.read_text()), indent=2, default=str)) for p in YAML_FILES]
    return found


# -- mutations: (text, extension, rng) -> text or bytes --------------------------------------------


def _at(text: str, rng: random.Random) -> int:
    return rng.randrange(len(text) + 1)


def _replace_value(text: str, ext: str, rng: random.Random, new: str, numeric: bool = False) -> str:
    spans = [m.span(1) for m in VALUE_AT[ext].finditer(text)]
    if numeric:
        spans = [s for s in spans if re.fullmatch(r"-?[\d_.eE+]+", text[s[0] : s[1]])] or spans
    if not spans:
        return text + new
    start, end = rng.choice(spans)
    return text[:start] + new + text[end:]


def bit_flip(text: str, ext: str, rng: random.Random) -> bytes:
    raw = bytearray(text.encode())
    for _ in range(rng.randint(1, 8)):
        if raw:
            raw[rng.randrange(len(raw))] ^= 1 << rng.randrange(8)
    return bytes(raw)


def truncate(text: str, ext: str, rng: random.Random) -> str:
    return text[: _at(text, rng)]


def huge_number(text: str, ext: str, rng: random.Random) -> str:
    return _replace_value(text, ext, rng, rng.choice(NUMBERS), numeric=True)


def other_value(text: str, ext: str, rng: random.Random) -> str:
    """A value of another type (a list, a table, null, a tagged or odd scalar), rarely a broken one."""
    new = rng.choice(BROKEN) if rng.random() < 0.05 else rng.choice(VALUES[ext] + NUMBERS)
    return _replace_value(text, ext, rng, new)


def deep_nesting(text: str, ext: str, rng: random.Random) -> str:
    depth = rng.choice([10, 100, 499, 501, 1000, 5000, 50000])
    return _replace_value(text, ext, rng, "[" * depth + "1" + "]" * depth)


def control_characters(text: str, ext: str, rng: random.Random) -> str:
    for _ in range(rng.randint(1, 5)):
        at = _at(text, rng)
        text = text[:at] + rng.choice(SPECIALS) + text[at:]
    return text


def bom_and_newlines(text: str, ext: str, rng: random.Random) -> str:
    choice = rng.randrange(4)
    if choice == 0:
        return "\ufeff" + text
    if choice == 1:
        return text.replace("\n", "\r\n")
    if choice == 2:
        return text.replace("\n", "\r")
    return "\ufeff\ufeff" + text.replace("\n", "\n\r", rng.randint(1, 5))


def yaml_constructs(text: str, ext: str, rng: random.Random) -> str:
    """An anchor on one value and its alias in place of another, or a snippet of tags, keys and directives."""
    if ext != ".yaml":
        return other_value(text, ext, rng)
    spans = [m.span(1) for m in VALUE_AT[ext].finditer(text)]
    if len(spans) > 1 and rng.random() < 0.5:
        (a, b), (c, d) = sorted(rng.sample(spans, 2))
        return text[:a] + "&x " + text[a:b] + text[b:c] + "*x" + text[d:]
    at = text.rfind("\n", 0, _at(text, rng)) + 1
    return text[:at] + rng.choice(YAML_SNIPPETS) + text[at:]


def random_bytes(text: str, ext: str, rng: random.Random) -> bytes:
    raw = text.encode()
    at = rng.randrange(len(raw) + 1)
    return raw[:at] + rng.randbytes(rng.randint(1, 64)) + raw[at:]


def shuffle_lines(text: str, ext: str, rng: random.Random) -> str:
    lines = text.splitlines(keepends=True)
    for _ in range(rng.randint(1, 4)):
        if len(lines) > 1:
            i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
            if rng.random() < 0.5:
                lines[i], lines[j] = lines[j], lines[i]
            else:
                lines.insert(j, lines[i])
    return "".join(lines)


Mutation = Callable[[str, str, random.Random], str | bytes]
MUTATIONS: list[tuple[Mutation, int]] = [
    (bit_flip, 1),
    (truncate, 1),
    (huge_number, 3),
    (other_value, 5),
    (deep_nesting, 1),
    (control_characters, 1),
    (bom_and_newlines, 1),
    (yaml_constructs, 2),
    (random_bytes, 1),
    (shuffle_lines, 1),
]
"""Each mutation with its weight: those that keep the syntax valid reach validation and rules."""


def mutated(rng: random.Random, sources: list[tuple[str, str]]) -> tuple[str, bytes, list[str]]:
    """(extension, content, names of the mutations applied): one to three mutations of a corpus file."""
    ext, text = rng.choice(sources)
    content: str | bytes = text
    applied = []
    for _ in range(rng.choice([1, 1, 1, 2, 2, 3])):
        mutation = rng.choices([m for m, _ in MUTATIONS], [w for _, w in MUTATIONS])[0]
        content = mutation(content if isinstance(content, str) else content.decode(errors="replace"), ext, rng)
        applied.append(mutation.__name__)
    return ext, content if isinstance(content, bytes) else content.encode(), applied


# -- overrides ---------------------------------------------------------------------------------------


def random_path(rng: random.Random, known: list[str]) -> str:
    path = rng.choice(known)
    twist = rng.randrange(8)
    if twist == 0:
        return path + "." + rng.choice(["x", "0", "dim", "[0]", ""])
    if twist == 1:
        cut = rng.randrange(len(path))
        return path[:cut] + rng.choice(["", "x", ".", "[", "]", "[0]", "[999]", "[-1]", " ", "é", "\x00"]) + path[cut:]
    if twist == 2:
        return rng.choice(["", ".", "..", "a..b", "[0]", "x[0].y", " model.dim", "model.dim ", "$schema", "="])
    if twist == 3:
        return path.replace("[0]", rng.choice(["[1]", "[100]", "[0][0]", "[x]"]))
    return path


def random_value(rng: random.Random) -> str:
    choice = rng.randrange(5)
    if choice == 0:
        return rng.choice(NUMBERS + VALUES[".yaml"] + BROKEN + ["[[[[[[[[[[1]]]]]]]]]]", "[" * 600 + "]" * 600])
    if choice == 1:
        return rng.choice(["(0.9, 0.95)", "None", "True", "1_024", "0x10", "{1, 2}", "1j", "b'x'", "...", "[1j]"])
    if choice == 2:
        return rng.choice(["'", '"', "'x", "\"x'", "''", '""', '"\'"', "'\\'", "[' ,", "{'a': [}"])
    if choice == 3:
        return "".join(rng.choice("[]{},:'\"=\\ \t\n-#&*!|>%@`\x00") for _ in range(rng.randint(0, 12)))
    return str(rng.choice([0, 1, -1, 2**63, 2**64, 10**20, 3.5, 1e-9]))


def random_overrides(rng: random.Random, known: list[str]) -> tuple[Override, ...]:
    return tuple(
        Override(n, f"{random_path(rng, known)}={random_value(rng)}", python=rng.random() < 0.4)
        for n in range(1, rng.randint(1, 4) + 1)
    )


# -- running a case ----------------------------------------------------------------------------------


class Hang(BaseException):
    """Raised in a case that runs too long; not an Exception, so trainspec's guards do not turn it into a diagnostic."""


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Stop a case that hangs (SIGALRM) instead of hanging the test run."""

    def stop(signum: int, frame: object) -> None:
        raise Hang(f"still running after {seconds:.0f} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def problems(path: Path, check: Callable[[], Result]) -> list[str]:
    """What is wrong with one checked case: [] when it ended in diagnostics about this file, in time."""
    start = time.perf_counter()
    try:
        with deadline(BUDGET * 5):
            result = check()
    except (Exception, Hang) as exc:
        return [f"{type(exc).__name__} escaped: {exc}"[:500]]
    took = time.perf_counter() - start
    found = [f"took {took:.2f} s"] if took > BUDGET else []
    for d in result.diagnostics:
        failed = d.rule in ("internal-error", "hook-failed") or "failed on this config" in d.message
        if failed:
            found.append(f"{d.rule}: {d.message}"[:500])
        if d.file != str(path):
            found.append(f"a diagnostic names {d.file!r}")
        if terminal(d.one_line()) != d.one_line() or "\n" in format_command(d):
            found.append(f"an unescaped line: {d.one_line()!r}"[:500])
    junit = io.StringIO()
    junit_report([result], junit)
    try:
        ET.fromstring(junit.getvalue().split("\n", 1)[1])
    except ET.ParseError as exc:
        found.append(f"JUnit output is not well-formed XML: {exc}")
    return found


def report(failures: list[str]) -> str:
    return f"{len(failures)} failing case(s):\n" + "\n".join(failures[:20])


pytestmark = [
    pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs SIGALRM"),
    pytest.mark.filterwarnings("error"),  # a warning is a diagnostic trainspec failed to make
]


def test_mutated_files_end_in_diagnostics(tmp_path):
    sources = corpus()
    failures = []
    for i in range(CASES):
        rng = random.Random(f"{SEED}-file-{i}")
        ext, content, applied = mutated(rng, sources)
        path = tmp_path / f"case{i}{ext}"
        path.write_bytes(content)
        sizes = rng.choice([(), (1,), (8,), (12, 64)])
        if i % 2:
            check = partial(check_file, str(path), Options(world_sizes=sizes))
        else:
            check = partial(check_path, path, world_size=sizes)
        found = problems(path, check)
        if found:
            failures.append(f"{path} ({', '.join(applied)}): {'; '.join(found)}")
        else:
            path.unlink()
    assert not failures, report(failures)


def test_random_overrides_end_in_diagnostics(tmp_path):
    kinds = [
        (".toml", TOML_FILES[0].read_text(), "kempnerforge"),
        (".yaml", YAML_FILES[0].read_text(), "specforge"),
        (".yaml", (CORPUS / "specforge" / "qwen3-8b-dflash-disaggregated.yaml").read_text(), "specforge"),
    ]
    known = {family: [format_path(p) for p in get_family(family).schema.paths] for _, _, family in kinds}
    failures = []
    for i in range(CASES):
        rng = random.Random(f"{SEED}-override-{i}")
        ext, text, family = rng.choice(kinds)
        path = tmp_path / f"case{i}{ext}"
        path.write_text(text)
        overrides = random_overrides(rng, known[family])
        if i % 2:
            check = partial(check_file, str(path), Options(overrides=overrides, world_sizes=(8,)))
        else:
            check = partial(check_path, path, overrides=overrides)
        found = problems(path, check)
        if found:
            failures.append(f"{path}: {'; '.join(found)} <- {[o.origin[:120] for o in overrides]}")
    assert not failures, report(failures)


def test_a_world_size_too_long_to_write_is_a_diagnostic_not_a_crash(tmp_path):
    """nnodes × nproc_per_node of thousands of digits: the layout search's budget message cannot print it."""
    text = (ROOT / "examples" / "specforge_qwen3_8b_dflash.yaml").read_text()
    path = tmp_path / "run.yaml"
    path.write_text(
        text.replace("nnodes: 1", "nnodes: " + "9" * 4299, 1).replace(
            "nproc_per_node: 4", "nproc_per_node: " + "9" * 99, 1
        )
    )
    found = problems(path, partial(check_file, str(path), Options(world_sizes=(12, 64))))
    assert not found, found


def test_show_of_a_huge_number_explains_why_nothing_is_derived(tmp_path):
    from trainspec.layouts.provenance import show

    text = (ROOT / "examples" / "kempnerforge_7b_12gpu.toml").read_text()
    path = tmp_path / "job.toml"
    path.write_text(re.sub(r"^batch_size = \d+", "batch_size = " + "9" * 4299, text, count=1, flags=re.M))
    shown = show(path, world_size=12)
    assert shown.note == "derived quantities are not computed: `train.batch_size` is beyond a 64-bit integer"
