"""`trainspec lsp`: the language server, over stdin/stdout (pygls is imported only here)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser(
        "lsp",
        help="run the language server (diagnostics, fixes, hover, completion) over stdio",
        description="Serve the Language Server Protocol over stdin/stdout for the families' TOML, YAML and "
        "JSON configs: every diagnostic of `trainspec check` while you type, quick fixes, hover and "
        "completion. Settings come from the client (initializationOptions or workspace settings "
        "under `trainspec`); see docs/lsp.md.",
    )
    p.add_argument(
        "--stdio", action="store_true", help="accepted for editors that pass it; stdio is the only transport"
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace, extras: Sequence[str], parser: argparse.ArgumentParser) -> int:
    try:
        from trainspec.editor.lsp.server import serve
    except ImportError as exc:
        print(f"trainspec lsp needs pygls ({exc}); install it with: pip install 'trainspec[lsp]'", file=sys.stderr)
        return 2
    serve()
    return 0
