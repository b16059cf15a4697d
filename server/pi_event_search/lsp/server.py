"""The language server process: settings, roots, the engine, background indexing and watching.

Feature handlers live in handlers.py, the stdio entry point in lsp_main.py; this module owns
lifecycle and state only.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import attrs
from lsprotocol import converters
from lsprotocol import types as t
from pygls.exceptions import JsonRpcException, JsonRpcInvalidRequest
from pygls.lsp.server import LanguageServer
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCProtocol,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
)

from pi_event_search import __version__
from pi_event_search.core.authz import Scope
from pi_event_search.core.errors import EngineError
from pi_event_search.core.wire import IndexChanged
from pi_event_search.index.indexer import Report
from pi_event_search.lsp import settings
from pi_event_search.lsp.params import file_path
from pi_event_search.service.engine import Engine
from pi_event_search.service.watch import watch_async

T = TypeVar("T")
log = logging.getLogger(__name__)


def _plain_dicts() -> Any:
    """Custom methods get plain dicts (pygls would turn them into namedtuples). `params` is
    optional in JSON-RPC 2.0 and unknown members are ignored."""
    c = converters.get_converter()
    for cls in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        c.register_structure_hook(cls, lambda obj, cls: cls(**{
            name: obj.get(name) for name in attrs.fields_dict(cls)}))
    return c


class _Answered:
    """A message that was answered with an error while it was being decoded."""


def _valid_id(msg_id: Any) -> bool:
    return isinstance(msg_id, int | str) and not isinstance(msg_id, bool)


class PiEventProtocol(LanguageServerProtocol):
    """Every request gets an answer, even one that cannot be decoded (JSON-RPC 2.0 §5.1)."""

    def _serialize_message(self, data: Any) -> Any:
        """Answers of our own methods are plain JSON dicts: json encodes them in C, where cattrs
        would first walk every hit in Python (as long as the search itself, for a rare word)."""
        if type(data) is JsonRPCResponseMessage and isinstance(data.result, dict):
            return {"id": data.id, "jsonrpc": data.jsonrpc, "result": data.result}
        return super()._serialize_message(data)

    def _error(self, msg_id: Any, exc: JsonRpcException) -> None:
        error = exc.to_response_error()
        self._send_data({"jsonrpc": "2.0", "id": msg_id if _valid_id(msg_id) else None,
                         "error": {"code": error.code, "message": error.message}})

    def structure_message(self, data: dict[str, Any]) -> Any:
        if "jsonrpc" in data and "method" in data and "id" in data:
            if data["jsonrpc"] != JsonRPCProtocol.VERSION or not isinstance(data["method"], str) \
                    or not _valid_id(data["id"]):
                self._error(data["id"], JsonRpcInvalidRequest())
                return _Answered()
            try:
                return super().structure_message(data)
            except JsonRpcException as exc:
                self._error(data["id"], exc)
                return _Answered()
        return super().structure_message(data)

    def handle_message(self, message: Any) -> None:
        if isinstance(message, _Answered):
            return
        if not hasattr(message, "jsonrpc"):  # valid JSON, but not a JSON-RPC message
            self._error(message.get("id") if isinstance(message, dict) else None,
                        JsonRpcInvalidRequest())
            return
        super().handle_message(message)


class PiEventServer(LanguageServer):
    def __init__(self, index_path: Path | None, extra_dirs: list[str]) -> None:
        super().__init__("pi-event-search", __version__, converter_factory=_plain_dicts,
                         protocol_cls=PiEventProtocol)
        self.cli_index = index_path
        self.cli_dirs = extra_dirs
        self.settings = settings.Settings()
        self.engine: Engine | None = None
        self.engine_error: str | None = None
        self.indexing = False
        self.stop_watch = asyncio.Event()
        self.watch_task: asyncio.Task[None] | None = None
        self.background: asyncio.Task[None] | None = None
        self._warned: set[str] = set()
        self.folders_given = False  # the client opened with workspace folders (rootUri is legacy)

    # -- logging: logs always, pop-ups only for what a user must act on ----------------------
    def log(self, message: str, kind: t.MessageType = t.MessageType.Log) -> None:
        self.window_log_message(t.LogMessageParams(type=kind, message=message))

    def warn_once(self, message: str) -> None:
        if message not in self._warned:
            self._warned.add(message)
            self.log(message, t.MessageType.Warning)

    def report_server_error(self, error: Exception, source: Any) -> None:
        if source is JsonRpcException and isinstance(error, ValueError | RecursionError):  # not JSON
            self.protocol._send_data({"jsonrpc": "2.0", "id": None,
                                      "error": {"code": -32700, "message": "Parse error"}})
        self.log(f"pi-event-search: {error}", t.MessageType.Error)

    # -- state ---------------------------------------------------------------------------------
    def apply_settings(self, options: Any) -> None:
        self.settings = settings.parse(options, self.settings)
        for warning in self.settings.warnings:
            self.warn_once(f"pi-event-search settings: {warning}")

    def roots(self) -> list[str]:
        if self.settings.roots:
            return list(self.settings.roots)
        folders = [file_path(f.uri) for f in self.workspace.folders.values()]
        paths = [p for p in folders if p]
        if not paths and self.workspace.root_uri and not self.folders_given:
            root = file_path(self.workspace.root_uri)
            paths = [root] if root else []
        return paths

    def scope(self, current: tuple[str, str | None] | None = None) -> Scope:
        session, cutoff = current or (self.settings.current_session, self.settings.cutoff)
        return Scope.of(self.roots(), session, cutoff)

    def open_engine(self) -> None:
        index = Path(self.settings.index_path) if self.settings.index_path else self.cli_index
        dirs = [*self.cli_dirs, *self.settings.session_dirs]
        try:
            self.engine = Engine.open(index, dirs)
            self.engine_error = None
        except EngineError as exc:
            self.engine, self.engine_error = None, str(exc)
            self.window_show_message(t.ShowMessageParams(
                type=t.MessageType.Error, message=f"pi-event-search cannot open its index: {exc}"))

    def require_engine(self) -> Engine:
        if self.engine is None:
            raise EngineError(f"Index unavailable: {self.engine_error or 'not initialized yet'}")
        return self.engine

    # -- indexing ------------------------------------------------------------------------------
    def notify_changed(self, report: Report) -> None:
        params: IndexChanged = {"generation": report.generation,
                                "changedSessions": report.changed_sessions,
                                "indexing": self.indexing}
        self.protocol.notify("piEvents/indexChanged", params)

    async def index_now(self, paths: set[str] | None = None) -> Report:
        engine = self.require_engine()
        if paths:  # files a client saw grow: a moment's work, exact or else a full refresh
            result = await asyncio.to_thread(engine.refresh_paths, paths)
            self.notify_changed(result)
            return result
        token = str(uuid.uuid4())
        progress = await self._progress_begin(token)
        loop = asyncio.get_running_loop()

        def report(done: int, total: int, detail: str) -> None:
            if progress and total and (done % 25 == 0 or done == total):
                pct = int(100 * done / total)
                message = f"{done}/{total} files" + (f", {detail}" if detail else "")  # MB, ETA
                loop.call_soon_threadsafe(self.work_done_progress.report, token,
                                          t.WorkDoneProgressReport(
                                              message=message, percentage=pct))

        self.indexing = True
        try:
            result = await asyncio.to_thread(engine.refresh, report)
        finally:
            self.indexing = False
            if progress:
                self.work_done_progress.end(token, t.WorkDoneProgressEnd(message="done"))
        self.notify_changed(result)
        return result

    async def _progress_begin(self, token: str) -> bool:
        caps = self.client_capabilities.window
        if caps is None or not caps.work_done_progress:
            return False
        try:
            await asyncio.wait_for(self.work_done_progress.create_async(token), 5)
        except Exception:  # a client that refuses progress still gets its index
            return False
        self.work_done_progress.begin(token, t.WorkDoneProgressBegin(
            title="Indexing Pi sessions", percentage=0, cancellable=False))
        return True

    def begin_background(self) -> None:
        """The first index pass, then the watcher. The event loop keeps only a weak reference to
        a task: the server holds this one, or it could be collected before it ends."""
        self.background = asyncio.ensure_future(self.start_background())

    async def start_background(self) -> None:
        try:
            await self.index_now()
        except Exception as exc:  # never let indexing take the server down
            self.log(f"pi-event-search: indexing failed: {exc}", t.MessageType.Error)
        if self.settings.watch and self.engine is not None:
            self.watch_task = asyncio.ensure_future(
                watch_async(self.engine, self.notify_changed, self.stop_watch))

    async def run_blocking(self, fn: Callable[..., T], *args: Any, **kw: Any) -> T:
        """Run engine work in a thread; a cancelled request interrupts its SQL."""
        cancel = threading.Event()
        engine = self.require_engine()

        def call() -> T:
            conn = engine.reader()
            conn.set_progress_handler(lambda: 1 if cancel.is_set() else 0, 20_000)
            try:
                return fn(*args, **kw)
            finally:
                conn.set_progress_handler(None, 0)

        try:
            return await asyncio.to_thread(call)
        except asyncio.CancelledError:
            cancel.set()
            raise
