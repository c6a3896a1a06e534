"""The protocol's base layer, read defensively: each message framed, bounded and answered.

pygls's own loop allocates whatever length a `Content-Length` header names (a
header of 10**12 ends the server), waits forever for a header it cannot read
(missing, negative or short lengths), and turns parameters into types inside
`json.loads`, so a request whose parameters do not fit its type is dropped with
no answer. This loop replaces it:

- a message longer than the limit is answered with an error and skipped in
  small chunks, never held in memory;
- a header that cannot be read (no or a malformed `Content-Length`, a line that
  is not a header, too many or too long lines) is answered with an error, and the
  session ends with exit status 1: the stream cannot be split into messages any
  more, and an editor shows a server that exits, not one that hangs;
- a body that is not a JSON-RPC request gets the JSON-RPC error for it (parse
  error, invalid request, invalid params), so every request gets an answer.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
from collections.abc import AsyncIterator
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any, BinaryIO, Protocol

import cattrs
from lsprotocol import types as lsp

from trainspec.spec.limits import LSP_MESSAGE_BYTES

log = logging.getLogger("trainspec.editor.lsp")

MAX_HEADER_LINE = 1024
MAX_HEADER_LINES = 16
CHUNK = 2**20

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602
HEADER_NAME = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an HTTP token, as the base protocol's headers are


class Endpoint(Protocol):
    """What this loop needs of pygls's JSON-RPC protocol object (pygls itself is imported by server.py only)."""

    _shutdown: bool

    def structure_message(self, data: dict[str, Any]) -> Any: ...

    def handle_message(self, message: Any) -> None: ...

    def notify(self, method: str, params: Any | None = None) -> Any: ...

    def _send_data(self, data: Any) -> None: ...


class FramingError(Exception):
    """The stream can no longer be split into messages: the session ends."""


@dataclass(frozen=True)
class TooLarge:
    """A message whose body is over the limit (skipped, not read)."""

    size: int


class StreamReader:
    """Blocking reads of a byte stream, run in an executor so the event loop keeps serving; bytes handed
    back (`unread`) are read again first."""

    def __init__(self, stream: BinaryIO, executor: Executor) -> None:
        self.stream = stream
        self.executor = executor
        self.held = b""

    async def readline(self, limit: int) -> bytes:
        if self.held:
            end = self.held.find(b"\n", 0, limit)
            if end >= 0 or len(self.held) >= limit:
                cut = end + 1 if end >= 0 else limit
                line, self.held = self.held[:cut], self.held[cut:]
                return line
            line, self.held = self.held, b""
            return line + await self._run(self.stream.readline, limit - len(line))
        return await self._run(self.stream.readline, limit)

    async def read(self, size: int) -> bytes:
        taken, self.held = self.held[:size], self.held[size:]
        return taken + (await self._run(self.stream.read, size - len(taken)) if size > len(taken) else b"")

    async def read_some(self, size: int) -> bytes:
        """What has arrived, at most `size` bytes (waiting only for the first): skipping a body must not wait
        for bytes a client claimed and never sends."""
        if self.held:
            return await self.read(size)
        read1 = getattr(self.stream, "read1", self.stream.read)
        return await self._run(read1, size)

    def unread(self, data: bytes) -> None:
        self.held = data + self.held

    async def _run(self, call: Any, size: int) -> bytes:
        return bytes(await asyncio.get_running_loop().run_in_executor(self.executor, call, size))


async def frames(reader: StreamReader, limit: int) -> AsyncIterator[bytes | TooLarge]:
    """Each message's body in turn (TooLarge for one over `limit`) until the stream ends.

    Raises FramingError for a header that cannot be read.
    """
    while True:
        length = await _content_length(reader)
        if length is None:
            return
        if length > limit:
            yield TooLarge(length)
            if not await _skip(reader, length):
                return
            continue
        body = await reader.read(length)
        if len(body) < length:
            log.warning("the stream ended %d bytes into a message", length - len(body))
            return
        yield body


async def _content_length(reader: StreamReader) -> int | None:
    """The Content-Length of the next message, or None when the stream ends before one starts."""
    length: int | None = None
    for count in range(MAX_HEADER_LINES + 1):
        line = await reader.readline(MAX_HEADER_LINE + 1)
        if not line.endswith(b"\n"):
            if len(line) > MAX_HEADER_LINE:
                raise FramingError(f"a header line is longer than {MAX_HEADER_LINE} bytes")
            if line or count:
                log.warning("the stream ended inside a message header")
            return None
        text = line.rstrip(b"\r\n")
        if not text:
            if length is None:
                raise FramingError("a message header has no Content-Length")
            return length
        name, colon, value = text.partition(b":")
        if not colon or not HEADER_NAME.fullmatch(name):
            raise FramingError(f"not a header line: {text[:80]!r}")
        if name.lower() == b"content-length":
            value = value.strip()
            if not (value.isascii() and value.isdigit()) or len(value) > 19:
                raise FramingError(f"Content-Length {value[:40].decode('ascii', 'replace')!r} is not a byte count")
            if length is not None and int(value) != length:
                raise FramingError("a message header has two different Content-Length values")
            length = int(value)
    raise FramingError(f"a message header has more than {MAX_HEADER_LINES} lines")


HEADER_START = re.compile(rb"\A(content-length[ \t]*:)", re.IGNORECASE)
NEXT_HEADER = re.compile(rb"\n(content-length[ \t]*:)", re.IGNORECASE)
"""The start of a message header. No JSON body holds one (a JSON string cannot hold a raw line break, and
a body starts with `{`), so one found while skipping means the skipped length was a lie."""


async def _skip(reader: StreamReader, size: int) -> bool:
    """Drop `size` bytes, a chunk at a time, as they arrive; False when the stream ends first. A message
    header found on the way ends the skip there (the length claimed more bytes than came before the next
    message): the server resynchronises on it instead of waiting for bytes that never come."""
    tail, first = b"", True
    while size > 0:
        chunk = await reader.read_some(min(size, CHUNK))
        if not chunk:
            return False
        window = tail + chunk
        found = (HEADER_START.match(window) if first else None) or NEXT_HEADER.search(window)
        first = False
        if found is not None:
            reader.unread(window[found.start(1) :])
            log.warning("a message header came inside a body that claimed %d more bytes; reading on from it", size)
            return True
        tail = window[-32:]
        size -= len(chunk)
    return True


async def serve(protocol: Endpoint, reader: StreamReader, stop: threading.Event, limit: int) -> None:
    """Hand each message to `protocol` until the stream ends or the server stops.

    Raises FramingError (after answering it) when the stream cannot be read as messages.
    """
    try:
        async for frame in frames(reader, limit):
            if isinstance(frame, TooLarge):
                why = too_large(frame.size, limit)
                refuse(protocol, None, INVALID_REQUEST, why)
                shown = lsp.ShowMessageParams(lsp.MessageType.Error, f"trainspec: {why}")
                protocol.notify(lsp.WINDOW_SHOW_MESSAGE, shown)
            else:
                receive(protocol, frame)
            if stop.is_set():
                return
    except FramingError as exc:
        refuse(protocol, None, PARSE_ERROR, f"{exc}; the server cannot find the next message and exits")
        raise


def too_large(size: int, limit: int) -> str:
    return (
        f"a message of {size:,} bytes is over the limit of {limit:,} bytes and was skipped "
        f"(set {LSP_MESSAGE_BYTES.variable} in the server's environment to raise it)"
    )


def receive(protocol: Endpoint, body: bytes) -> None:
    """Hand one message to `protocol`, or answer why it cannot be handled."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as exc:
        refuse(protocol, None, PARSE_ERROR, f"the message is not JSON: {exc}")
        return
    if not isinstance(data, dict):
        refuse(protocol, None, INVALID_REQUEST, "a message must be a JSON object")
        return
    msg_id = data.get("id")
    if not isinstance(msg_id, int | str | None) or isinstance(msg_id, bool):
        refuse(protocol, None, INVALID_REQUEST, "a message id must be an integer or a string")
        return
    request = "id" in data and "method" in data
    problem = _not_a_message(data)
    if problem is None and request and protocol._shutdown and data["method"] != lsp.EXIT:
        problem = "the server is shutting down: after `shutdown` only `exit` is handled"
    if problem is not None:
        if "method" not in data or "id" in data:  # a notification is never answered; anything else is
            refuse(protocol, msg_id, INVALID_REQUEST, problem)
        else:
            log.warning("a notification was dropped: %s", problem)
        return
    try:
        message = protocol.structure_message(data)
    except Exception as exc:  # pygls wraps the converter's error in its invalid-params error (see `_why`)
        why = _why(exc, data.get("method"))
        if request:
            refuse(protocol, msg_id, INVALID_PARAMS, why)
        else:
            log.warning("a notification was dropped: %s", why)
        return
    try:
        protocol.handle_message(message)
    except Exception:  # pygls answers a failing request itself; anything else must not end the session
        log.exception("a message could not be handled")


def _not_a_message(data: dict[str, Any]) -> str | None:
    if data.get("jsonrpc") != "2.0":
        return 'not a JSON-RPC 2.0 message (it needs "jsonrpc": "2.0")'
    if "method" in data and not isinstance(data["method"], str):
        return "a method name must be a string"
    if "method" not in data and "id" not in data:
        return "a message needs a method (request, notification) or an id (response)"
    if "method" not in data and "result" not in data and "error" not in data:
        return "a message with an id needs a method (a request) or a result or an error (a response)"
    if data.get("method") == lsp.CANCEL_REQUEST:
        params = data.get("params")
        cancelled = params.get("id") if isinstance(params, dict) else None
        if not isinstance(cancelled, int | str) or isinstance(cancelled, bool):
            return "$/cancelRequest needs the id (an integer or a string) of the request to cancel"
    return None


def _why(exc: Exception, method: Any) -> str:
    """What is wrong with a message's parameters, as cattrs found it (`required field missing @ $.params.position`)."""
    cause = exc.__cause__
    details = cattrs.transform_error(cause) if isinstance(cause, cattrs.BaseValidationError) else [str(cause or exc)]
    return f"invalid params for {method}: " + "; ".join(details[:5])


def refuse(protocol: Endpoint, msg_id: int | str | None, code: int, message: str) -> None:
    """Send a JSON-RPC error response (`"id": null` when the request's id is unknown) and log it."""
    log.warning("%s", message)
    protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})
