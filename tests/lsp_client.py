"""A small Language Server Protocol client for testing real servers over stdio.

It speaks JSON-RPC 2.0 with Content-Length framing, answers the requests a
server sends to its client (configuration, capability registration,
progress), and keeps the latest diagnostics published for each document.
Nothing here knows about a particular server: the editor tests give the
command line, the initialization options and the settings.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

JSON = Any


class LspError(RuntimeError):
    """The server answered a request with an error, died, or did not answer in time."""


class LspClient:
    """One running server process and the state the client keeps about it."""

    def __init__(
        self,
        argv: Sequence[str],
        root: Path,
        settings: dict[str, JSON],
        initialization_options: JSON = None,
        cwd: Path | None = None,
        timeout: float = 30.0,
        env: dict[str, str] | None = None,
        snippets: bool = True,
    ) -> None:
        self.settings = settings
        self.timeout = timeout
        self.stderr_lines: list[str] = []
        self._ids = itertools.count(1)
        self._lock = threading.Condition()
        self._responses: dict[int, dict[str, JSON]] = {}
        self._published: dict[str, tuple[int, int | None, list[JSON]]] = {}
        self._publish_count = 0
        self._versions: dict[str, int] = {}
        self._closed = False
        self.proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd or root,
            env=env,
        )
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()
        self.capabilities: dict[str, JSON] = self.request(
            "initialize",
            {
                "processId": None,
                "rootUri": root.as_uri(),
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                "initializationOptions": initialization_options,
                "capabilities": {
                    "workspace": {"configuration": True, "didChangeConfiguration": {"dynamicRegistration": True}},
                    "textDocument": {
                        "synchronization": {"dynamicRegistration": True},
                        "completion": {
                            "completionItem": {
                                "snippetSupport": snippets,
                                "documentationFormat": ["markdown", "plaintext"],
                                "resolveSupport": {"properties": ["documentation", "detail"]},
                            }
                        },
                        "hover": {"contentFormat": ["markdown", "plaintext"]},
                        "publishDiagnostics": {"relatedInformation": True, "versionSupport": True},
                    },
                },
            },
        )["capabilities"]
        self.notify("initialized", {})
        self.notify("workspace/didChangeConfiguration", {"settings": settings})

    # -- transport -----------------------------------------------------------------------------

    def _send(self, message: dict[str, JSON]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise LspError(f"server is gone: {self.stderr_tail()}") from exc

    def _read_stdout(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    with self._lock:
                        self._closed = True
                        self._lock.notify_all()
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            if length is not None:
                self._dispatch(json.loads(stream.read(length)))

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr_lines.append(line.decode("utf-8", "replace").rstrip())

    def stderr_tail(self, lines: int = 20) -> str:
        return "\n".join(self.stderr_lines[-lines:])

    def _dispatch(self, message: dict[str, JSON]) -> None:
        method = message.get("method")
        if method is None:
            with self._lock:
                self._responses[message.get("id")] = message
                self._lock.notify_all()
        elif "id" in message:
            self._send({"id": message["id"], "result": self._answer(method, message.get("params"))})
        elif method == "textDocument/publishDiagnostics":
            params = message["params"]
            with self._lock:
                self._publish_count += 1
                self._published[params["uri"]] = (self._publish_count, params.get("version"), params["diagnostics"])
                self._lock.notify_all()

    def _answer(self, method: str, params: JSON) -> JSON:
        """What an editor would answer to a request the server sends."""
        if method == "workspace/configuration":
            return [self._setting(item.get("section")) for item in params["items"]]
        return None

    def _setting(self, section: str | None) -> JSON:
        if not section:
            return self.settings
        node: JSON = self.settings
        for part in section.split("."):
            if not isinstance(node, dict) or part not in node:
                return None
            node = node[part]
        return node

    def send_bytes(self, data: bytes) -> None:
        """Write `data` to the server as it is (to test framing)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def response(self, request_id: int | str | None, timeout: float | None = None) -> dict[str, JSON]:
        """The whole response message with `request_id` (None: an error about a message the server could not
        read); waits for it."""
        deadline = time.monotonic() + (timeout or self.timeout)
        with self._lock:
            while request_id not in self._responses:
                if not self._lock.wait(timeout=max(0.0, deadline - time.monotonic())):
                    raise LspError(f"no response {request_id!r} (server stderr: {self.stderr_tail()})")
            return self._responses.pop(request_id)

    def request(self, method: str, params: JSON, timeout: float | None = None) -> JSON:
        request_id = next(self._ids)
        self._send({"id": request_id, "method": method, "params": params})
        deadline = time.monotonic() + (timeout or self.timeout)
        with self._lock:
            while request_id not in self._responses:
                if self._closed or not self._lock.wait(timeout=max(0.0, deadline - time.monotonic())):
                    if request_id in self._responses:
                        break
                    raise LspError(f"no answer to {method} (server stderr: {self.stderr_tail()})")
            response = self._responses.pop(request_id)
        if "error" in response:
            raise LspError(f"{method} failed: {response['error']}")
        return response.get("result")

    def notify(self, method: str, params: JSON) -> None:
        self._send({"method": method, "params": params})

    # -- documents -----------------------------------------------------------------------------

    def open(self, uri: str, language_id: str, text: str) -> None:
        """Open (or reopen with new text) a document, as an editor does when a file is shown."""
        if uri in self._versions:
            self._versions[uri] += 1
            self.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": self._versions[uri]},
                    "contentChanges": [{"text": text}],
                },
            )
            return
        self._versions[uri] = 1
        self.notify(
            "textDocument/didOpen",
            {
                "textDocument": {"uri": uri, "languageId": language_id, "version": 1, "text": text},
            },
        )

    def edit(self, uri: str, changes: list[dict[str, JSON]]) -> None:
        """Send incremental changes (`{"range": ..., "text": ...}`) to an open document, as typing does."""
        self._versions[uri] += 1
        self.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": self._versions[uri]}, "contentChanges": changes},
        )

    def version(self, uri: str) -> int:
        return self._versions[uri]

    def published_version(self, uri: str) -> int | None:
        """The document version of the latest diagnostics published for `uri`."""
        with self._lock:
            seen = self._published.get(uri)
            return seen[1] if seen is not None else None

    def wait_for_version(self, uri: str, version: int) -> list[JSON]:
        """The diagnostics the server publishes for exactly `version` of `uri` (waits for them)."""
        deadline = time.monotonic() + self.timeout
        with self._lock:
            while True:
                seen = self._published.get(uri)
                if seen is not None and seen[1] == version:
                    return list(seen[2])
                if self._closed or time.monotonic() > deadline:
                    raise LspError(f"no diagnostics for version {version} of {uri} ({self.stderr_tail()})")
                self._lock.wait(timeout=0.05)

    def code_actions(self, uri: str, range_: JSON, diagnostics: list[JSON]) -> list[JSON]:
        result = self.request(
            "textDocument/codeAction",
            {"textDocument": {"uri": uri}, "range": range_, "context": {"diagnostics": diagnostics}},
        )
        return list(result or [])

    def close(self, uri: str) -> None:
        self._versions.pop(uri, None)
        self.notify("textDocument/didClose", {"textDocument": {"uri": uri}})

    def diagnostics(self, uri: str, since: int, settle: float = 0.4) -> list[JSON]:
        """The diagnostics the server publishes for `uri` after publication number `since`.

        A server may publish more than once per change, so this waits until
        it has been quiet about the document for `settle` seconds.
        """
        deadline = time.monotonic() + self.timeout
        with self._lock:
            while True:
                seen = self._published.get(uri)
                if seen is not None and seen[0] > since:
                    mark = seen[0]
                    self._lock.wait(timeout=settle)
                    if self._published[uri][0] == mark:
                        return list(self._published[uri][2])
                    continue
                if self._closed or time.monotonic() > deadline:
                    raise LspError(f"no diagnostics for {uri} (server stderr: {self.stderr_tail()})")
                self._lock.wait(timeout=0.1)

    def publication_mark(self) -> int:
        with self._lock:
            return self._publish_count

    def check(self, uri: str, language_id: str, text: str) -> list[JSON]:
        """Open `text` as `uri` and return the diagnostics the server settles on."""
        mark = self.publication_mark()
        self.open(uri, language_id, text)
        return self.diagnostics(uri, mark)

    def completion(self, uri: str, line: int, character: int) -> list[JSON]:
        result = self.request(
            "textDocument/completion",
            {
                "textDocument": {"uri": uri},
                "position": {"line": line, "character": character},
            },
        )
        items = result.get("items", []) if isinstance(result, dict) else (result or [])
        if self.capabilities.get("completionProvider", {}).get("resolveProvider"):
            items = [self.request("completionItem/resolve", item) for item in items]
        return list(items)

    def hover(self, uri: str, line: int, character: int) -> JSON:
        return self.request(
            "textDocument/hover",
            {
                "textDocument": {"uri": uri},
                "position": {"line": line, "character": character},
            },
        )

    def shutdown(self) -> None:
        try:
            if self.proc.poll() is None:
                self.request("shutdown", None, timeout=5)
                self.notify("exit", None)
                self.proc.wait(timeout=5)
        except (LspError, subprocess.TimeoutExpired):
            pass
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


def markup_text(value: JSON) -> str:
    """The plain text of a documentation or hover value in any of its LSP shapes."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(markup_text(v) for v in value)
    return str(value.get("value", ""))


def apply_edits(text: str, edits: list[JSON]) -> str:
    """`text` with LSP TextEdits applied (positions counted in UTF-16 units, as LSP does by default)."""
    lines = text.split("\n")

    def offset(position: JSON) -> int:
        line = lines[position["line"]] if position["line"] < len(lines) else ""
        units, column = 0, 0
        while column < len(line) and units < position["character"]:
            units += len(line[column].encode("utf-16-le")) // 2
            column += 1
        return sum(len(x) + 1 for x in lines[: position["line"]]) + column

    for e in sorted(edits, key=lambda e: (e["range"]["start"]["line"], e["range"]["start"]["character"]), reverse=True):
        text = text[: offset(e["range"]["start"])] + e["newText"] + text[offset(e["range"]["end"]) :]
    return text
