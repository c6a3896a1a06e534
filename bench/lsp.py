"""Time `trainspec lsp` from a change to the diagnostics published for it, on 200-line configs.

    python bench/lsp.py [--edits 60] [--debounce-ms 30]

For each family a config of exactly 200 lines is built from its schema (every
scalar key of every section the family fills by default, written with its
default; comments make up the rest), with one rule broken. The server is
started as a subprocess and driven by the LSP client the tests use: the file is
opened, then `--edits` single-character changes alternately break and repair a
value, each sent as an incremental `didChange`; the latency of one change is the
time from sending it to receiving the diagnostics published for that version,
debounce included. Prints a Markdown table (milliseconds).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402

from tests.lsp_client import LspClient  # noqa: E402
from trainspec.families import get_family  # noqa: E402

LINES = 200
SF_BASE = ROOT / "tests" / "corpus" / "specforge" / "qwen3-8b-domino-disaggregated.yaml"


def config(family_name: str, fmt: str) -> str:
    """A config of exactly LINES lines, every key written with its value (defaults included), then comments.

    TOML: the scalar keys of every section the family fills by default; YAML: a bundled
    corpus config with every default filled in.
    """
    schema = get_family(family_name).schema
    if fmt == "yaml":
        body = yaml.safe_dump(_written(schema.fill_defaults(yaml.safe_load(SF_BASE.read_text()))), sort_keys=False)
        out = body.splitlines()
    else:
        out = []
        for section, values in schema.fill_defaults({}).items():
            scalars = {k: v for k, v in values.items() if isinstance(v, bool | int | float | str)}
            if isinstance(values, dict) and scalars:
                out += [f"[{section}]", *(f"{k} = {json.dumps(v)}" for k, v in scalars.items()), ""]
    filler = [f"# note {n}" for n in range(LINES - len(out))]
    return "\n".join((out + filler)[:LINES]) + "\n"


def _written(value: Any) -> Any:
    """`value` without its null entries (a key left unset)."""
    if isinstance(value, dict):
        return {k: _written(v) for k, v in value.items() if v is not None}
    return value


def measure(client: LspClient, uri: str, language: str, text: str, target: str, edits: int) -> list[float]:
    """Latencies (ms) of `edits` changes to the last character of the line holding `target`."""
    client.check(uri, language, text)
    line = next(n for n, t in enumerate(text.split("\n")) if target in t)
    column = len(text.split("\n")[line]) - 1
    original = text.split("\n")[line][-1]
    out = []
    for n in range(edits):
        char = "7" if n % 2 == 0 else original
        sent = time.perf_counter()
        client.edit(uri, [{"range": _range(line, column, column + 1), "text": char}])
        client.wait_for_version(uri, client.version(uri))
        out.append((time.perf_counter() - sent) * 1000)
        time.sleep(0.05)
    return out


def _range(line: int, start: int, end: int) -> dict[str, Any]:
    return {"start": {"line": line, "character": start}, "end": {"line": line, "character": end}}


CASES: list[tuple[str, str, str, str, Callable[[str], str]]] = [
    # label, family, format, the line to edit, a change of the generated text that breaks a rule
    ("KempnerForge TOML", "kempnerforge", "toml", "n_kv_heads", lambda t: t.replace("tp = 1", "tp = 3", 1)),
    ("SpecForge YAML", "specforge", "yaml", "num_epochs", lambda t: t),  # breaks disaggregated-needs-role
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=60)
    parser.add_argument("--debounce-ms", type=float, default=30)
    args = parser.parse_args()
    print(f"| config ({LINES} lines) | median | p95 | max | debounce |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="trainspec-lsp-bench-") as tmp:
        root = Path(tmp)
        settings = {"trainspec": {"debounceMs": args.debounce_ms}}
        client = LspClient([sys.executable, "-m", "trainspec", "lsp"], root, settings, settings, timeout=30)
        try:
            for label, family, fmt, target, breaks in CASES:
                text = breaks(config(family, fmt))
                assert text.count("\n") == LINES, text.count("\n")
                uri = (root / f"job.{fmt}").as_uri()
                found = measure(client, uri, fmt, text, target, args.edits)
                q = statistics.quantiles(found, n=20)
                print(
                    f"| {label} | {statistics.median(found):.1f} | {q[18]:.1f} | {max(found):.1f} | "
                    f"{args.debounce_ms:g} |"
                )
        finally:
            client.shutdown()


if __name__ == "__main__":
    main()
