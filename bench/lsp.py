"""Time `trainspec lsp` from a change to the diagnostics published for it, on data-heavy configs.

    python bench/lsp.py [--lines 200 2000] [--edits 60] [--runs 3] [--debounce-ms 30]

Each config is a real one grown to exactly `--lines` lines with the entries of its longest list
(no comment padding): a KempnerForge job with `[[data.datasets]]` tables, an Axolotl config with a
`datasets:` list, a SpecForge disaggregated run with a `server_urls:` list. Each has one rule
broken. The server is started as a subprocess and driven by the LSP client the tests use: the
file is opened, then `--edits` single-character changes alternately change and restore the last
character of a value in the middle of the list, each sent as an incremental `didChange`; the
latency of one change is the time from sending it to receiving the diagnostics published for that
version, debounce included. Each run starts a server of its own. Prints a Markdown table
(milliseconds): the median, 95th and 99th percentile of each run, as a range over the runs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.lsp_client import LspClient  # noqa: E402

KF_BASE = ROOT / "examples" / "kempnerforge_7b_12gpu.toml"
AX_BASE = ROOT / "examples" / "axolotl_llama3_8b_lora.yaml"
SF_BASE = ROOT / "tests" / "corpus" / "specforge" / "qwen3-8b-domino-disaggregated.yaml"
MARK = "@@"
"""Ends the value whose last character the edits change (removed from the text)."""


def kempnerforge(lines: int) -> str:
    """The 12-GPU example (tensor parallelism 3, which the head counts do not divide), then dataset tables."""
    out = KF_BASE.read_text().replace("tp = 4", "tp = 3").splitlines()
    entries = (lines - len(out)) // 5
    for n in range(entries):
        mark = MARK if n == entries // 2 else ""
        out += ["", "[[data.datasets]]", f'path = "/data/tokenized/source-{n:04d}"', f"weight = {1 + n % 7}.5{mark}"]
        out.append(f'name = "source-{n:04d}"')
    return _exactly(out, lines, "# end")


def axolotl(lines: int) -> str:
    """The LoRA example (an adapter no plugin registers), its one dataset followed by more."""
    head, _, tail = AX_BASE.read_text().replace("adapter: lora\n", "adapter: lorax\n").partition("datasets:\n")
    first, _, rest = tail.partition("\n\n")
    out, after = [*head.splitlines(), "datasets:", *first.splitlines()], ["", *rest.splitlines()]
    entries = (lines - len(out) - len(after)) // 2
    for n in range(entries):
        mark = MARK if n == entries // 2 else ""
        out += [f"  - path: org/instructions-{n:04d}{mark}", "    type: chat_template"]
    return _exactly([*out, *after], lines, "# end")


def specforge(lines: int) -> str:
    """The disaggregated Domino run (its servers listed for a mode that has none), with more servers."""
    text = SF_BASE.read_text().replace("mode: disaggregated", "mode: local_colocated", 1)
    before, _, after = text.partition("      - http://127.0.0.1:30000\n")
    out, tail = before.splitlines(), after.splitlines()
    entries = lines - len(out) - len(tail)
    for n in range(entries):
        mark = MARK if n == entries // 2 else ""
        out.append(f"      - http://10.0.{n // 250}.{n % 250 + 1}:30000{mark}")
    return _exactly([*out, *tail], lines, "# end")


def _exactly(out: list[str], lines: int, filler: str) -> str:
    out += [filler] * (lines - len(out))  # a few lines the entries do not fill
    assert len(out) == lines, (len(out), lines)
    return "\n".join(out) + "\n"


def measure(client: LspClient, uri: str, language: str, text: str, edits: int) -> list[float]:
    """Latencies (ms) of `edits` changes to the character before the mark."""
    lines = text.split("\n")
    line = next(n for n, t in enumerate(lines) if MARK in t)
    column = lines[line].index(MARK) - 1
    text = text.replace(MARK, "")
    original = text.split("\n")[line][column]
    client.check(uri, language, text)
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


CASES: list[tuple[str, str, Callable[[int], str]]] = [
    ("KempnerForge TOML", "toml", kempnerforge),
    ("Axolotl YAML", "yaml", axolotl),
    ("SpecForge YAML", "yaml", specforge),
]


def run(sizes: list[int], edits: int, debounce: float) -> dict[tuple[str, int], list[float]]:
    """One server; each config opened and edited in turn."""
    found = {}
    with tempfile.TemporaryDirectory(prefix="trainspec-lsp-bench-") as tmp:
        root = Path(tmp)
        settings = {"trainspec": {"debounceMs": debounce}}
        client = LspClient([sys.executable, "-m", "trainspec", "lsp"], root, settings, settings, timeout=30)
        try:
            for size in sizes:
                for label, fmt, make in CASES:
                    uri = (root / f"{label.split()[0].lower()}-{size}.{fmt}").as_uri()
                    found[(label, size)] = measure(client, uri, fmt, make(size), edits)
                    client.close(uri)
        finally:
            client.shutdown()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, nargs="+", default=[200, 2000])
    parser.add_argument("--edits", type=int, default=60)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--debounce-ms", type=float, default=30)
    args = parser.parse_args()
    runs = [run(args.lines, args.edits, args.debounce_ms) for _ in range(args.runs)]
    print("| config | lines | median | p95 | p99 | debounce | runs |")
    print("|---|---|---|---|---|---|---|")
    for key in runs[0]:
        figures = []
        for stat in (statistics.median, _percentile(95), _percentile(99)):
            values = [stat(r[key]) for r in runs]
            low, high = min(values), max(values)
            figures.append(f"{low:.1f}" if f"{low:.1f}" == f"{high:.1f}" else f"{low:.1f}–{high:.1f}")
        print(f"| {key[0]} | {key[1]:,} | {' | '.join(figures)} | {args.debounce_ms:g} | {len(runs)} |")


def _percentile(p: int) -> Callable[[list[float]], float]:
    return lambda values: statistics.quantiles(values, n=100, method="inclusive")[p - 1]


if __name__ == "__main__":
    main()
