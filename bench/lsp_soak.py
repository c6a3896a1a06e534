"""Memory of `trainspec lsp` over a long editing session: resident size every 1,000 edits.

    python bench/lsp_soak.py [--edits 20000]

The server is started as a subprocess and driven by the LSP client the tests use. One KempnerForge
config (examples/kempnerforge_7b_12gpu.toml) is opened; then `--edits` single-character changes
alternately break and repair `n_kv_heads`, each sent as an incremental `didChange` and waited for
until its diagnostics are published. Prints the server's resident set size (VmRSS, Linux) at each
thousand edits, as a Markdown table, so growth without a plateau shows.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from tests.lsp_client import LspClient  # noqa: E402

CONFIG = ROOT / "examples" / "kempnerforge_7b_12gpu.toml"


def resident_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=20_000)
    args = parser.parse_args()
    text = CONFIG.read_text()
    lines = text.split("\n")
    line = next(n for n, t in enumerate(lines) if t.startswith("n_kv_heads"))
    column, original = len(lines[line]) - 1, lines[line][-1]
    change = {"start": {"line": line, "character": column}, "end": {"line": line, "character": column + 1}}
    with tempfile.TemporaryDirectory(prefix="trainspec-lsp-soak-") as tmp:
        root = Path(tmp)
        settings = {"trainspec": {"debounceMs": 0}}
        client = LspClient([sys.executable, "-m", "trainspec", "lsp"], root, settings, settings, timeout=30)
        try:
            uri = (root / "job.toml").as_uri()
            client.check(uri, "toml", text)
            print("| edits | resident MiB |\n|---|---|")
            print(f"| 0 | {resident_mib(client.proc.pid):.1f} |")
            for n in range(1, args.edits + 1):
                client.edit(uri, [{"range": change, "text": "7" if n % 2 else original}])
                client.wait_for_version(uri, client.version(uri))
                if n % 1000 == 0:
                    print(f"| {n} | {resident_mib(client.proc.pid):.1f} |", flush=True)
        finally:
            client.shutdown()


if __name__ == "__main__":
    main()
