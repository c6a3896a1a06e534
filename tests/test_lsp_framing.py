"""`trainspec lsp` driven over stdio by a client that breaks the protocol: every message is answered or
the server exits with an error, within seconds and in bounded memory; and a request about a file the
client never opened is answered from nothing on disk."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .lsp_client import LspClient

pytestmark = pytest.mark.external  # launches the server process

PROMPT = 10.0
"""Seconds within which a broken message is answered (the server answers at once; CI machines are slow)."""


def start(root: Path, env: dict[str, str] | None = None) -> LspClient:
    return LspClient(
        [sys.executable, "-m", "trainspec", "lsp"],
        root,
        {"trainspec": {}},
        timeout=30,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture
def client(tmp_path: Path) -> Iterator[LspClient]:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    c = start(workspace)
    yield c
    c.shutdown()


def framed(message: dict[str, object]) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def peak_memory_kib(pid: int) -> int:
    """The process's peak resident memory (Linux)."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(status.split("VmHWM:")[1].split()[0])


def exits_with_an_error(client: LspClient) -> str:
    """The error the server answers before it exits with status 1 (within PROMPT seconds)."""
    error = client.response(None, timeout=PROMPT)["error"]
    assert client.proc.wait(timeout=PROMPT) == 1
    return str(error["message"])


def test_a_huge_content_length_is_refused_without_reading_it(client):
    client.send_bytes(b"Content-Length: 1000000000000\r\n\r\n")
    error = client.response(None, timeout=PROMPT)["error"]
    assert "over the limit of 67,108,864 bytes" in error["message"]
    assert "TRAINSPEC_LSP_MAX_MESSAGE_BYTES" in error["message"]
    assert peak_memory_kib(client.proc.pid) < 400 * 1024
    assert client.proc.poll() is None  # still serving: it skips the body as it arrives
    client.send_bytes(framed({"id": 9, "method": "shutdown"}))  # the claimed bytes never come; this does
    assert client.response(9, timeout=PROMPT)["result"] is None  # read from its header on, not swallowed


@pytest.mark.parametrize("glued", [b"", b"{partial body"])
def test_a_message_after_an_over_limit_length_is_read_from_its_header(tmp_path, glued):
    client = start(tmp_path, {"TRAINSPEC_LSP_MAX_MESSAGE_BYTES": "2000"})
    try:
        client.send_bytes(
            b"Content-Length: 5000\r\n\r\n" + glued + b"\r\n" * bool(glued) + framed({"id": 5, "method": "shutdown"})
        )
        assert "over the limit" in client.response(None, timeout=PROMPT)["error"]["message"]
        assert client.response(5, timeout=PROMPT)["result"] is None
    finally:
        client.proc.kill()


def test_a_message_with_an_id_and_no_method_is_answered(client):
    client.send_bytes(framed({"id": 77}))
    error = client.response(77, timeout=PROMPT)["error"]
    assert error["code"] == -32600 and "a result or an error" in error["message"]


def test_a_cancel_with_an_object_id_is_dropped_without_a_traceback(client, tmp_path):
    client.send_bytes(framed({"method": "$/cancelRequest", "params": {"id": {"a": 1}}}))
    uri = (tmp_path / "workspace" / "job.toml").as_uri()
    assert client.check(uri, "toml", "[train]\nseq_lenn = 1\n")  # the session goes on
    assert "Traceback" not in client.stderr_tail(200)
    assert "cancelRequest needs the id" in client.stderr_tail(200)


@pytest.mark.parametrize(("shutdown_first", "status"), [(True, 0), (False, 1)])
def test_exit_without_shutdown_ends_with_status_1(tmp_path, shutdown_first, status):
    client = start(tmp_path)
    if shutdown_first:
        client.request("shutdown", None, timeout=PROMPT)
    client.notify("exit", None)
    assert client.proc.wait(timeout=PROMPT) == status


def test_a_message_over_a_lowered_limit_is_skipped_and_the_session_goes_on(tmp_path):
    client = start(tmp_path, {"TRAINSPEC_LSP_MAX_MESSAGE_BYTES": "2000"})
    try:
        uri = (tmp_path / "big.toml").as_uri()
        client.open(uri, "toml", "# padding\n" * 300)
        assert "over the limit of 2,000 bytes" in client.response(None, timeout=PROMPT)["error"]["message"]
        small = (tmp_path / "small.toml").as_uri()
        assert client.check(small, "toml", "[train]\nseq_lenn = 1\n")  # the next message is read whole
    finally:
        client.shutdown()


@pytest.mark.parametrize(
    ("header", "says"),
    [
        (b"Content-Type: application/vscode-jsonrpc\r\n\r\n", "no Content-Length"),
        (b"Content-Length: -5\r\n\r\n", "not a byte count"),
        (b"Content-Length: twelve\r\n\r\n", "not a byte count"),
        (b"Content-Length: 99999999999999999999999\r\n\r\n", "not a byte count"),
        (b"Content-Length: 5\r\nContent-Length: 6\r\n\r\n", "two different"),
        (b"{not a header}\r\n\r\n", "not a header line"),
        (b"X" * 5000 + b"\r\n", "longer than 1024 bytes"),
        (b"X-A: 1\r\n" * 20 + b"\r\n", "more than 16 lines"),
    ],
)
def test_a_header_that_cannot_be_read_is_answered_and_ends_the_session(client, header, says):
    client.send_bytes(header + b'{"jsonrpc": "2.0", "id": 7, "method": "shutdown"}')
    assert says in exits_with_an_error(client)


def test_a_short_content_length_is_answered_then_the_stream_is_abandoned(client):
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "shutdown"}).encode()
    client.send_bytes(b"Content-Length: 10\r\n\r\n" + body)
    assert client.response(None, timeout=PROMPT)["error"]["code"] == -32700  # the first 10 bytes are not JSON
    client.send_bytes(framed({"id": 8, "method": "shutdown"}))  # the rest of the body runs into this header
    assert "not a header line" in exits_with_an_error(client)


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{nope", -32700),
        (b"[" * 100_000, -32700),
        (b"[]", -32600),
        (b'{"id": 3, "method": "shutdown"}', -32600),
        (b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "shutdown"}', -32600),
    ],
)
def test_a_body_that_is_not_a_request_gets_the_json_rpc_error(client, tmp_path, body, code):
    client.send_bytes(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    answer = client.response(3 if b'"id": 3' in body else None, timeout=PROMPT)
    assert answer["error"]["code"] == code
    uri = (tmp_path / "workspace" / "job.toml").as_uri()
    assert client.check(uri, "toml", "[train]\nseq_lenn = 1\n")  # and the session goes on


def test_a_request_with_invalid_params_is_answered(client, tmp_path):
    uri = (tmp_path / "workspace" / "job.toml").as_uri()
    client.check(uri, "toml", "[train]\nseq_len = 1\n")
    client.send_bytes(framed({"id": 41, "method": "textDocument/hover", "params": {"textDocument": {"uri": uri}}}))
    error = client.response(41, timeout=PROMPT)["error"]
    assert error["code"] == -32602 and "position" in error["message"]
    client.send_bytes(framed({"id": 42, "method": "textDocument/completion", "params": None}))
    assert client.response(42, timeout=PROMPT)["error"]["code"] == -32602


def test_requests_after_shutdown_are_refused_not_ignored(client):
    client.request("shutdown", None)
    client.send_bytes(framed({"id": 43, "method": "textDocument/hover", "params": {}}))
    assert "shutting down" in client.response(43, timeout=PROMPT)["error"]["message"]


UNOPENED = "[train]\nseq_lenn = 4096  # secret\n"


@pytest.mark.parametrize("where", ["outside", "inside"])
def test_no_feature_answers_from_a_file_the_client_did_not_open(client, tmp_path, where):
    """pygls reads a document it was never sent from disk; the server answers only from opened buffers."""
    folder = tmp_path / ("workspace" if where == "inside" else "elsewhere")
    folder.mkdir(exist_ok=True)
    secret = folder / "secret.toml"
    secret.write_text(UNOPENED)
    uri = secret.as_uri()
    started = time.monotonic()
    assert client.hover(uri, 1, 2) is None
    assert client.completion(uri, 1, 0) == []
    everything = {"start": {"line": 0, "character": 0}, "end": {"line": 2, "character": 0}}
    assert client.code_actions(uri, everything, []) == []
    assert time.monotonic() - started < PROMPT
    opened = (tmp_path / "workspace" / "job.toml").as_uri()
    client.check(opened, "toml", UNOPENED)
    assert "seq_lenn" in json.dumps(client.hover(opened, 1, 2))  # an opened buffer is answered from


def test_a_buffer_whose_path_has_a_space_gets_its_diagnostics(client, tmp_path):
    """pygls keeps documents under the unquoted URI; the server finds them by the URI the client sends."""
    uri = (tmp_path / "workspace" / "my job.toml").as_uri()
    assert "%20" in uri
    found = client.check(uri, "toml", "[train]\nseq_lenn = 1\n")
    assert "unknown-key" in [d["code"] for d in found]


def test_a_buffer_that_takes_long_to_check_does_not_hold_other_requests(client, tmp_path):
    """A buffer near the size limit, all unknown keys (about two seconds of checking): a request sent right
    after it is opened is answered before the buffer's diagnostics are published, not after."""
    big = (tmp_path / "workspace" / "big.toml").as_uri()
    keys = "".join(f"unknown_key_{n} = {n}\n" for n in range(40_000))
    client.open(big, "toml", f"# trainspec: family=kempnerforge\n[model]\n{keys}")
    other = (tmp_path / "workspace" / "never-opened.toml").as_uri()
    answer = client.request(
        "textDocument/hover", {"textDocument": {"uri": other}, "position": {"line": 0, "character": 0}}
    )
    assert answer is None
    assert client.published_version(big) is None  # still being checked: the request did not wait for it
    assert client.wait_for_version(big, client.version(big))  # and its diagnostics come
