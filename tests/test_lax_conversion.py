"""pydantic's lax conversion, as trainspec asks pydantic-core for it, is what pydantic itself does."""

from __future__ import annotations

import itertools
import math
import subprocess
import sys

import pytest
from pydantic import TypeAdapter, ValidationError

from trainspec.spec.dialect import pydantic_lax

JSON_TYPES = ("array", "boolean", "integer", "null", "number", "object", "string")
PYTHON = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "null": type(None),
    "array": list,
    "object": dict,
}
VALUES = [
    *(0, 1, -3, 2**70, True, False, None),
    *(8.0, 8.5, -0.0, 1e300, math.inf, math.nan),
    *("8", " 8 ", "8.0", "8.5", "1_000", "1e3", "+4", "-4", "0x10", "inf", "nan", "", "yes", "no", "on", "off"),
    *("true", "False", "t", "f", "1", "0", "null", "[1]", "{}", "fast"),
    *([1, "2"], (1, 2), {"a": 1}, {1, 2}, b"8", b"yes", bytearray(b"1")),
]


def _pydantic(types: frozenset[str], value: object) -> tuple[bool, object]:
    kinds = [PYTHON[t] for t in sorted(types)]
    target = kinds[0]
    for kind in kinds[1:]:
        target = target | kind
    try:
        return True, TypeAdapter(target).validate_python(value)
    except ValidationError:
        return False, None


def _same(a: tuple[bool, object], b: tuple[bool, object]) -> bool:
    return repr(a) == repr(b) and type(a[1]) is type(b[1])


@pytest.mark.parametrize(
    "types", [frozenset(c) for n in (1, 2, 3) for c in itertools.combinations(JSON_TYPES, n)], ids=sorted
)
def test_every_value_converts_as_pydantic_converts_it(types):
    for value in VALUES:
        assert _same(pydantic_lax(types, value), _pydantic(types, value)), (sorted(types), value)


def test_a_field_of_every_type_takes_any_value_unconverted():
    every = frozenset(JSON_TYPES)
    assert _same(pydantic_lax(every, "8"), _pydantic(every, "8"))
    assert pydantic_lax(frozenset(), object) == (True, object)


def test_a_type_error_says_what_the_loader_reads_without_importing_pydantic(tmp_path):
    (tmp_path / "run.json").write_text('{"training": {"num_epochs": "8"}}')
    probe = (
        "import sys, io, contextlib\nfrom trainspec.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n    main(sys.argv[1:])\n"
        "print('pydantic' in sys.modules, repr(out.getvalue()))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, "check", "run.json", "--family", "specforge"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    imported, output = done.stdout.split(maxsplit=1)
    assert "loader itself reads it as 8" in output, done.stdout + done.stderr
    assert imported == "False"
