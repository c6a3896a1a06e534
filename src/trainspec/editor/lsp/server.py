"""The language server: pygls glue between the protocol and the analysis of each open buffer.

A buffer is checked when it is opened and again after every change, in a thread
of its own, as soon as the change arrives; its diagnostics are published once
the client has been quiet about the buffer for `Settings.debounce`, so the check
runs during that wait rather than after it. A check of a version that is no
longer current is never published (nor started, if a newer change came first).
Each feature catches its own failures, so no buffer, however broken, stops the
server.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import queue
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from functools import partial
from pathlib import PurePath
from typing import Any, BinaryIO, TypeVar
from urllib.parse import unquote

from lsprotocol import types as lsp
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

from trainspec.editor.lsp.actions import code_actions
from trainspec.editor.lsp.analysis import Analysis, Left, Settings
from trainspec.editor.lsp.completion import complete
from trainspec.editor.lsp.convert import to_lsp
from trainspec.editor.lsp.framing import FramingError, StreamReader
from trainspec.editor.lsp.framing import serve as serve_frames
from trainspec.editor.lsp.hover import hover
from trainspec.editor.lsp.inlay import inlay_hints
from trainspec.editor.lsp.navigation import locations, related_places
from trainspec.editor.lsp.outline import outline
from trainspec.families import all_families
from trainspec.read.project import FILENAMES as PROJECT_FILES
from trainspec.read.project import forget_projects
from trainspec.spec import __version__
from trainspec.spec.family import Family
from trainspec.spec.formats import FALLBACK, FORMATS, format_of
from trainspec.spec.limits import LSP_MESSAGE_BYTES

log = logging.getLogger("trainspec.editor.lsp")
T = TypeVar("T")
TRIGGERS = ["=", ":", "[", '"']


class Protocol(LanguageServerProtocol):
    """pygls's protocol, less one leak: the future of a notification whose built-in handler is a
    generator (`didChange`, `didOpen`, ...) is filed under a made-up id that no response ever removes,
    so a long editing session kept one per keystroke. Each is dropped once it is done."""

    def _handle_notification(self, method_name: str, params: Any) -> None:
        before = set(self._request_futures)
        super()._handle_notification(method_name, params)
        for key in set(self._request_futures) - before:
            self._request_futures[key].add_done_callback(partial(self._forget, key))

    def _forget(self, key: Any, _done: Any) -> None:
        self._request_futures.pop(key, None)


class TrainspecServer(LanguageServer):
    """One server process: its settings, and the latest analysis of each open buffer."""

    def __init__(self) -> None:
        super().__init__(
            "trainspec",
            __version__,
            text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
            protocol_cls=Protocol,
        )
        self.settings = Settings()
        self.analyses: dict[str, tuple[int | None, Analysis]] = {}
        self.configs: dict[str, Any] = {}
        """The last resolved config of each buffer, to pick schema branches while it does not parse."""
        self.families: dict[str, Family] = {}
        """The family of each buffer when it last had one, to complete in it while it does not parse."""
        self.pending: dict[str, asyncio.Task[None]] = {}
        self.languages: dict[str, str] = {}
        self.snippets = False
        """Whether the client takes snippets in completions (it said so when it connected)."""
        self.actions: dict[str, tuple[Analysis, tuple[int, int], list[lsp.CodeAction]]] = {}
        """The fixes last computed per buffer: an editor asks again each time the cursor moves on a line."""
        self.checks = _CheckThread()
        """Where the debounced checks run, one at a time, off the request loop."""

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """Serve over stdio with the bounded framing of `framing.py` instead of pygls's loop.

        Ends with SystemExit(1) when the client's stream cannot be read as messages.
        """
        limit = LSP_MESSAGE_BYTES.value
        self._stop_event = stop = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        reader = StreamReader(stdin or sys.stdin.buffer, self.thread_pool)
        try:
            asyncio.run(serve_frames(self.protocol, reader, stop, limit))
        except FramingError as exc:
            log.error("%s; exiting", exc)
            raise SystemExit(1) from None
        except BrokenPipeError:
            log.error("the client closed the connection")
        except KeyboardInterrupt:
            pass
        except SystemExit as exc:  # `exit`: status 0 after `shutdown`, 1 without (the protocol says so)
            if exc.code:
                raise
        finally:
            self.shutdown()

    def refresh_inlay_hints(self) -> None:
        """Ask the client to fetch the inlay hints again (the setting that turns them on changed)."""
        workspace = self.client_capabilities.workspace
        if workspace is not None and workspace.inlay_hint is not None and workspace.inlay_hint.refresh_support:
            self.workspace_inlay_hint_refresh(None)

    def opened(self, uri: str) -> TextDocument | None:
        """The document the client opened at `uri`, None if it has not: a request about any other
        document is answered with nothing, so the server never reads a file the client did not show it."""
        return self.workspace.text_documents.get(unquote(uri))

    def open_uris(self) -> list[str]:
        """The URIs of the open documents, as the client wrote them (pygls keys them unquoted)."""
        return [document.uri for document in self.workspace.text_documents.values()]

    def file_of(self, uri: str) -> str:
        """The path the buffer is checked as; an unsaved buffer gets a name with its language's extension."""
        path = to_fs_path(uri) if uri.startswith("file:") else None
        if path:
            return path
        language = self.languages.get(uri, "")
        ext = FORMATS[language].extensions[0] if language in FORMATS else PurePath(uri).suffix or FALLBACK.extensions[0]
        return f"untitled{ext}"

    def analysis(self, uri: str) -> Analysis | None:
        """The analysis of the buffer's current version (made now if the debounced one is not done);
        None if the client has not opened `uri`."""
        made = self._analysed(uri)
        return made[1] if made is not None else None

    def _analysed(self, uri: str) -> tuple[int | None, Analysis] | None:
        """(the version checked, its analysis), made now unless the cached one is of the current version."""
        document = self.opened(uri)
        if document is None:
            return None
        version, text, settings = document.version, document.source, self.settings
        cached = self.analyses.get(uri)
        if cached is not None and cached[0] == version and cached[1].settings == settings:
            return cached
        encoding = str(self.workspace.position_encoding or lsp.PositionEncodingKind.Utf16)
        found = Analysis(self.file_of(uri), text, settings, encoding, cached[1] if cached is not None else None)
        self.analyses[uri] = (version, found)
        if found.family is not None:
            self.families[uri] = found.family
        return version, found

    def schedule(self, uri: str, delay: float) -> None:
        """Check `uri` now and publish after `delay` seconds of quiet, replacing a check already waiting."""
        waiting = self.pending.pop(uri, None)
        if waiting is not None:
            waiting.cancel()
        self.pending[uri] = asyncio.get_running_loop().create_task(self._publish_later(uri, delay))

    async def _publish_later(self, uri: str, delay: float) -> None:
        """Check `uri` in the checking thread while `delay` passes, then publish, if the buffer is still at
        the version checked. The request loop goes on meanwhile: hover, completion and every other
        buffer's messages are served while one buffer takes long (a newer change schedules its own
        check, and a check of this one that has not started yet is dropped)."""
        checking = asyncio.get_running_loop().run_in_executor(self.checks, guarded, lambda: self._analysed(uri), None)
        try:
            await asyncio.sleep(delay)
        except asyncio.CancelledError:
            checking.cancel()  # not started yet: never started; running: it finishes, for the next to build on
            raise
        made = await checking
        if self.pending.get(uri) is asyncio.current_task():
            self.pending.pop(uri, None)
        document = self.opened(uri)
        if made is not None and document is not None and document.version == made[0]:
            guarded(lambda: self.publish(uri, made[1]), None)

    def project_changed(self) -> None:
        """A project configuration was saved: read configurations again and check every open buffer."""
        forget_projects()
        self.analyses.clear()
        for uri in self.open_uris():
            self.schedule(uri, 0)

    def publish(self, uri: str, found: Analysis | None = None) -> None:
        document, found = self.opened(uri), found or self.analysis(uri)
        if document is None or found is None:
            return
        version = document.version
        diagnostics = [to_lsp(d, found.source, uri, found.family) for d in found.diagnostics]
        self.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
        )


class _CheckThread(Executor):
    """One daemon thread running checks in turn: a check that takes long never holds the request loop,
    and never holds the process at `exit` either (a pool's threads are joined when Python exits)."""

    def __init__(self) -> None:
        self.queue: queue.SimpleQueue[tuple[Future[Any], Callable[..., Any], tuple[Any, ...]]] = queue.SimpleQueue()
        threading.Thread(target=self._run, name="trainspec-check", daemon=True).start()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        self.queue.put((future, lambda *a: fn(*a, **kwargs), args))
        return future

    def _run(self) -> None:
        while True:
            future, fn, args = self.queue.get()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn(*args))
            except BaseException as exc:  # handed to the waiting coroutine, as a pool does
                future.set_exception(exc)


def guarded(work: Callable[[], T], fallback: T) -> T:
    """`work()`, or `fallback` after logging what went wrong: one feature's bug never ends the session."""
    try:
        return work()
    except Exception:
        log.exception("trainspec lsp: a request failed")
        return fallback


def create() -> TrainspecServer:
    server = TrainspecServer()

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: TrainspecServer, params: lsp.InitializeParams) -> None:
        ls.settings = Settings.from_client(params.initialization_options)
        completion = params.capabilities.text_document and params.capabilities.text_document.completion
        item = completion and completion.completion_item
        ls.snippets = bool(item and item.snippet_support)

    @server.feature(lsp.INITIALIZED)
    def initialized(ls: TrainspecServer, params: lsp.InitializedParams) -> None:
        guarded(_warm_up, None)

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def configuration(ls: TrainspecServer, params: lsp.DidChangeConfigurationParams) -> None:
        if params.settings:
            hints = ls.settings.inlay_hints
            ls.settings = Settings.from_client(params.settings, ls.settings)
            if hints != ls.settings.inlay_hints:
                guarded(ls.refresh_inlay_hints, None)
        for uri in ls.open_uris():
            ls.schedule(uri, 0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: TrainspecServer, params: lsp.DidOpenTextDocumentParams) -> None:
        ls.languages[params.text_document.uri] = params.text_document.language_id
        ls.schedule(params.text_document.uri, 0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: TrainspecServer, params: lsp.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, ls.settings.debounce)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: TrainspecServer, params: lsp.DidSaveTextDocumentParams) -> None:
        if PurePath(ls.file_of(params.text_document.uri)).name in PROJECT_FILES:
            ls.project_changed()

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(ls: TrainspecServer, params: lsp.DidChangeWatchedFilesParams) -> None:
        if any(PurePath(to_fs_path(c.uri) or c.uri).name in PROJECT_FILES for c in params.changes):
            ls.project_changed()

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: TrainspecServer, params: lsp.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        waiting = ls.pending.pop(uri, None)
        if waiting is not None:
            waiting.cancel()
        for store in (ls.analyses, ls.configs, ls.families, ls.languages, ls.actions):
            store.pop(uri, None)
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    def on_hover(ls: TrainspecServer, params: lsp.HoverParams) -> lsp.Hover | None:
        def work() -> lsp.Hover | None:
            found = ls.analysis(params.text_document.uri)
            return hover(found, *found.source.from_client(params.position)) if found is not None else None

        return guarded(work, None)

    @server.feature(
        lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=TRIGGERS, resolve_provider=False)
    )
    def on_completion(ls: TrainspecServer, params: lsp.CompletionParams) -> lsp.CompletionList | None:
        def work() -> lsp.CompletionList | None:
            uri = params.text_document.uri
            found = ls.analysis(uri)
            if found is None or found.left is Left.SCHEMA:  # the schema server completes
                return None
            line, column = found.source.from_client(params.position)
            around = found.without_line(line)  # the line being typed is neither parsed nor counted as written
            if around.config is not None:
                ls.configs[uri] = around.config
            family = around.family or found.family or ls.families.get(uri)
            if family is None:
                return None
            written = around.document.positions.keys() if around.document is not None else frozenset()
            fmt, config = _format(found.file), ls.configs.get(uri)
            items = complete(family, found.source, fmt, line, column, config, written, ls.snippets)
            return lsp.CompletionList(is_incomplete=False, items=items)

        return guarded(work, None)

    @server.feature(
        lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix])
    )
    def on_code_action(ls: TrainspecServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction] | None:
        def work() -> list[lsp.CodeAction] | None:
            uri = params.text_document.uri
            found = ls.analysis(uri)
            if found is None:
                return None
            lines = (found.source.from_client(params.range.start)[0], found.source.from_client(params.range.end)[0])
            cached = ls.actions.get(uri)
            if cached is None or cached[0] is not found or cached[1] != lines:
                cached = (found, lines, code_actions(found, uri, *lines))
                ls.actions[uri] = cached
            return cached[2] or None

        return guarded(work, None)

    @server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def on_symbols(ls: TrainspecServer, params: lsp.DocumentSymbolParams) -> list[lsp.DocumentSymbol] | None:
        def work() -> list[lsp.DocumentSymbol] | None:
            found = ls.analysis(params.text_document.uri)
            return outline(found.file, found.source) if found is not None and found.family is not None else None

        return guarded(work, None)

    @server.feature(lsp.TEXT_DOCUMENT_INLAY_HINT, lsp.InlayHintOptions(resolve_provider=False))
    def on_inlay_hints(ls: TrainspecServer, params: lsp.InlayHintParams) -> list[lsp.InlayHint] | None:
        def work() -> list[lsp.InlayHint] | None:
            found = ls.analysis(params.text_document.uri)
            if found is None or not ls.settings.inlay_hints:
                return None
            first, last = found.source.from_client(params.range.start), found.source.from_client(params.range.end)
            return inlay_hints(found, first[0], last[0]) or None

        return guarded(work, None)

    @server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
    def on_definition(ls: TrainspecServer, params: lsp.DefinitionParams) -> list[lsp.Location] | None:
        """From a key a rule reads to the other keys it reads (the rule's diagnostic's related places)."""
        return guarded(lambda: _related(ls, params.text_document.uri, params.position, own=False), None)

    @server.feature(lsp.TEXT_DOCUMENT_REFERENCES)
    def on_references(ls: TrainspecServer, params: lsp.ReferenceParams) -> list[lsp.Location] | None:
        """Every key read together with the one at the cursor (itself only if the client asks)."""
        own = params.context.include_declaration
        return guarded(lambda: _related(ls, params.text_document.uri, params.position, own=own), None)

    return server


def _related(ls: TrainspecServer, uri: str, position: lsp.Position, own: bool) -> list[lsp.Location] | None:
    """The keys read together with the one at `position`, that one first when `own`."""
    found = ls.analysis(uri)
    if found is None:
        return None
    places = related_places(found, *found.source.from_client(position))
    return locations(found, uri, places if own else places[1:]) or None


def _warm_up() -> None:
    """Build every family's validators now, so the first buffer is checked as fast as the next: the python
    validator, and the compiled one, which a check otherwise builds only after the schema's first few
    documents (each of those validated by python-jsonschema, 40 ms for a config of 2,000 lines)."""
    from trainspec.validate.fast import fast_validator

    for family in all_families().values():
        family.validator  # noqa: B018 (a cached property: touching it builds it)
        fast_validator(family.schema)
    gc.collect()
    gc.freeze()  # what lives for the whole session (schemas, validators, rules) is never scanned again: a full
    # collection then takes a few milliseconds instead of 35 (a pause in a check of a 2,000-line buffer)


def _format(file: str) -> str:
    return format_of(file).name


def serve() -> None:
    """Serve over stdin/stdout until the client says exit."""
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    create().start_io()
