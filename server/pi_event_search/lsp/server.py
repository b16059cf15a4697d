"""The language server process: settings, roots, the engine, background indexing and watching.

Feature handlers live in handlers.py, the JSON-RPC layer in protocol.py, the stdio entry point in
main.py; this module owns lifecycle and state only.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types as t
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from pi_event_search import __version__
from pi_event_search.core import paths, wire
from pi_event_search.core.authz import NO_ROOT, Scope, fallback_roots
from pi_event_search.core.errors import EngineError
from pi_event_search.core.locations import default_index_path, extractors_file
from pi_event_search.core.wire import IndexChanged
from pi_event_search.index.indexer import Report
from pi_event_search.index.store import SCHEMA_VERSION
from pi_event_search.lsp import settings
from pi_event_search.lsp.params import file_path
from pi_event_search.lsp.protocol import PiEventProtocol, plain_dicts
from pi_event_search.lsp.warmpool import WarmPool
from pi_event_search.meaning import minilm
from pi_event_search.query import meaning
from pi_event_search.query.status import directories
from pi_event_search.service import ahead
from pi_event_search.service.engine import OPENING, Engine, IndexOpening
from pi_event_search.service.lease import POLL as LEASE_POLL
from pi_event_search.service.watch import watch_async
from pi_event_search.source import sessiondirs
from pi_event_search.source.discovery import SessionDir
from pi_event_search.source.extractors import Registry, load_file

T = TypeVar("T")
OPEN_REQUEST_WAIT = 5.0  # seconds a request waits for the index to open before its error
OPEN_BACKOFF_MAX = 2.0  # seconds between tries to open the index, at most
FOLLOWING = "following the writer: "
WRITE_THREADS = 2  # a pass and one request waiting for it; more requests queue
READ_THREADS = 4  # requests answered at once; each thread holds a connection (warmpool.py)
WRITE_QUEUE_WAIT = 2.0  # seconds a bounded write may also wait for a thread of the pool
log = logging.getLogger(__name__)


class PiEventServer(LanguageServer):
    def __init__(self, index_path: Path | None, extra_dirs: list[str],
                 session_dir: str | None = None) -> None:
        super().__init__("pi-event-search", __version__, converter_factory=plain_dicts,
                         protocol_cls=PiEventProtocol)
        self.cli_index = index_path
        self.cli_dirs = extra_dirs
        self.cli_session_dir = session_dir  # `serve --session-dir`, as Pi's flag
        self.settings = settings.Settings()
        self.engine: Engine | None = None
        self.engine_error: str | None = None  # the last error opening, indexing or watching
        self.opened = asyncio.Event()  # the engine is open, or opening failed for good
        self.failed = False
        self.indexing = False
        # Until this server has seen the index complete once (its own first pass, or as a reader
        # the writer's), its counts may be those of an index not yet filled: status says indexing.
        self.settled = False
        self.stop_watch = asyncio.Event()
        self.watch_task: asyncio.Task[None] | None = None
        self.background: asyncio.Task[None] | None = None
        self.reindex_task: asyncio.Future[Report] | None = None
        self._warned: set[str] = set()
        self._fallback: list[str] | None = None  # fallback(): computed once (runs git)
        self.folders_given = False  # the client opened with workspace folders (rootUri is legacy)
        self.write_pool = ThreadPoolExecutor(WRITE_THREADS, thread_name_prefix="pies-write")
        # The writer reads its newest events ahead for their meaning, in one gentle thread
        # (read_ahead below); a reader process leaves it to the writer.
        self.ahead = meaning.Ahead()
        self.ahead_task: asyncio.Task[None] | None = None
        self.read_pool = WarmPool(READ_THREADS, "pies-read")

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
        engine = self.engine
        if engine is not None and (registry := self.registry()) != engine.extractors:
            # Searches and reads follow at once; the writer indexes it (only the sessions that
            # hold the types concerned) in a pass of its own.
            engine.extractors = registry
            if engine.writer:
                self.reindex_task = asyncio.ensure_future(self.index_now())
        self.follow_dirs()

    def follow_dirs(self) -> None:
        """Session directories follow the settings and the workspace folders (a project's
        `sessionDir`, a relative one): answers at once; a writer reads them in a pass now, and
        a reader's new directories reach the writer's watcher (index/wanted.py)."""
        engine = self.engine
        if engine is not None and engine.set_dirs(self.session_dirs()) and engine.writer:
            self.reindex_task = asyncio.ensure_future(self.index_now())

    def registry(self) -> Registry | None:
        """The extractor registry: the client's setting, else the user file's (None: it holds
        nothing usable; the index's stays)."""
        if self.settings.extractors is not None:
            return self.settings.extractors
        registry, warnings = load_file(extractors_file())
        for warning in warnings:
            self.warn_once(f"pi-event-search extractors: {warning}")
        return registry

    def roots(self) -> list[str]:
        """The person's roots, else the workspace folders; a workspace's own roots narrow them
        (kept when inside them once resolved: a link in the workspace cannot widen them)."""
        folders = [file_path(f.uri) for f in self.workspace.folders.values()]
        found = [p for p in folders if p]
        if not found and self.workspace.root_uri and not self.folders_given:
            root = file_path(self.workspace.root_uri)
            found = [root] if root else []
        base = list(self.settings.roots) if self.settings.roots else found
        project = self.settings.project_roots
        if not project:
            return base
        within = [k for k in (paths.key(b) for b in base) if k]
        kept = [p for p in project
                if (k := paths.key(p)) is not None and any(paths.inside(k, w) for w in within)]
        for p in project:
            if p not in kept:
                self.warn_once(f"pi-event-search settings: projectRoots: {p} is outside "
                               f"{', '.join(base) or 'every root'}; ignored (a workspace's roots "
                               "only narrow)")
        return kept or base

    def scope(self, current: tuple[str, str | None] | None = None) -> Scope:
        session, cutoff = current or (self.settings.current_session, self.settings.cutoff)
        return Scope.of(self.roots() or self.fallback(), session, cutoff)

    def fallback(self) -> list[str]:
        """No roots setting and no folder: the server's Git root or working directory, as the
        MCP server's, unless that is too wide (authz.fallback_roots): then nothing, said once."""
        if self._fallback is None:
            self._fallback = fallback_roots(os.getcwd())
        if not self._fallback:
            self.warn_once("pi-event-search shows nothing: " + NO_ROOT.format(
                where=f"no workspace folder is open and the server's directory ({os.getcwd()})",
                how="open a folder, or give the server a `roots` setting"))
        return self._fallback

    def session_dirs(self) -> list[SessionDir]:
        """Where this server reads sessions: Pi's directories as Pi resolves them, the one the
        Pi extension's own Pi writes to, the extra ones (sessiondirs.py). A project's
        `sessionDir` counts for the workspace folders Pi trusts; relative ones are relative to
        the first folder, as a Pi started there would take them."""
        try:
            folders = self.roots()
        except RuntimeError:  # not initialized: no workspace yet
            folders = list(self.settings.roots or [])
        return sessiondirs.configured(
            flag=self.cli_session_dir, pi_session_dir=self.settings.pi_session_dir,
            extra=[*self.cli_dirs, *self.settings.session_dirs], projects=folders,
            cwd=folders[0] if folders else None)

    def index_path(self) -> Path:
        return Path(self.settings.index_path) if self.settings.index_path \
            else self.cli_index or default_index_path(SCHEMA_VERSION)

    async def open_engine(self) -> None:
        """Open the index off the event loop. What may pass (another process creating it, busy,
        locked, a full disk) is retried with a backoff (0.05 s doubling to 2 s); anything else
        ends the tries at once (state failed, lastError says why, requests get `Index
        unavailable: <reason>` without waiting)."""
        index = Path(self.settings.index_path) if self.settings.index_path else self.cli_index
        dirs = self.session_dirs()
        for d in dirs:
            log.info("pi-event-search: sessions from %s (%s, %s)", d.path, d.layout, d.origin)
        delay = 0.05
        while not self.stop_watch.is_set():
            try:
                self.engine = await asyncio.to_thread(
                    functools.partial(Engine.open, index, [], self.registry(), dirs=dirs))
                self.engine_error = None
                if self.engine.recovered:
                    self.log(f"pi-event-search: {self.engine.recovered}", t.MessageType.Warning)
                if self.engine.cannot_index is not None:
                    self.log(f"pi-event-search: {self.engine.cannot_index}", t.MessageType.Warning)
                break
            except IndexOpening as exc:
                self.engine_error = str(exc)
                log.warning("pi-event-search: %s (retrying in %.2f s)", exc, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, OPEN_BACKOFF_MAX)
            except Exception as exc:  # noqa: BLE001 - every other error is final: say which
                self.engine_error, self.failed = str(exc) or type(exc).__name__, True
                self.window_show_message(t.ShowMessageParams(
                    type=t.MessageType.Error,
                    message=f"pi-event-search cannot open its index: {self.engine_error}"))
                break
        self.opened.set()

    async def ready_engine(self) -> Engine:
        """The engine, waiting up to OPEN_REQUEST_WAIT while it is being opened."""
        if self.engine is None and not self.opened.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.opened.wait(), OPEN_REQUEST_WAIT)
        if self.engine is None:
            if self.failed:
                raise EngineError(f"Index unavailable: {self.engine_error}")
            raise EngineError(f"{OPENING} ({self.engine_error or 'starting'})")
        return self.engine

    def server_state(self) -> wire.ServerState:
        engine = self.engine
        if engine is None:
            state: Any = "failed" if self.failed else "opening"
        else:
            state = "indexing" if self.busy() or engine.indexing() is not None else "ready"
        return {"state": state, "role": "writer" if engine and engine.writer else "reader",
                "writerPid": engine.writer_pid() if engine else None,
                "lastError": self.engine_error or (engine.writer_stalled() if engine else None),
                "readAhead": self.ahead.read}

    def busy(self) -> bool:
        """Indexing, as status and indexChanged say it: a pass of this server's under way, or
        none seen complete yet."""
        return self.indexing or not self.settled

    def status_unopened(self) -> wire.StatusResult:
        """piEvents/status before the index is open (opening, or failed): what is known without
        it, and the server's state and last error."""
        dirs = self.session_dirs()
        roots = self.scope().roots
        return {"index": {"path": str(self.index_path()), "bytes": 0,
                          "schemaVersion": SCHEMA_VERSION, "generation": 0,
                          # Opening: no count is known yet, and clients take "not indexing"
                          # for counts to show (0 sessions). Failed: nothing is under way.
                          "indexing": not self.failed},
                "sessions": 0, "sessionsBySource": {}, "events": 0, "fragments": 0, "secretEvents": 0,
                "stale": [], "unavailable": [],
                "duplicates": [], "badLines": [], "skipped": [],
                "sessionDirs": [d.path for d in dirs],
                "directories": directories(None, dirs, None),
                "roots": list(roots) if roots is not None else None,
                "order": minilm.describe(),
                "server": self.server_state()}

    # -- indexing ------------------------------------------------------------------------------
    def notify_changed(self, report: Report) -> None:
        params: IndexChanged = {"generation": report.generation,
                                "changedSessions": report.changed_sessions,
                                "indexing": self.indexing}
        self.protocol.notify("piEvents/indexChanged", params)

    async def index_now(self, paths: set[str] | None = None, wait: float | None = None
                        ) -> Report:
        """A pass (the writer's first one: wait None), or a client's reindex (`wait`: answered
        within about that long, with the generation the index is at when a pass under way
        holds it longer)."""
        engine = await self.ready_engine()
        # Files a client saw grow: a moment's work, exact or else a full refresh. A reader waits
        # (bounded) for the writer to have indexed them. A pass already under way here: no
        # second one, and no second progress.
        if paths or not engine.writer or (wait is not None and self.indexing):
            result = await self._write(engine, engine.refresh_paths, paths or set(), wait=wait)
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
            result = await self._write(engine, engine.refresh, report, wait=wait)
        finally:
            self.indexing, self.settled = False, True
            if progress:
                self.work_done_progress.end(token, t.WorkDoneProgressEnd(message="done"))
        self.notify_changed(result)
        return result

    async def _write(self, engine: Engine, fn: Callable[..., Report], *args: Any,
                     wait: float | None) -> Report:
        """Write work runs in a pool of its own (WRITE_THREADS): requests that wait for a pass
        never take the threads that reads run in. A bounded wait that runs out answers with
        the generation the index is at (the job is dropped if it has not started)."""
        loop = asyncio.get_running_loop()
        job = loop.run_in_executor(self.write_pool, functools.partial(fn, *args, wait=wait))
        if wait is None:
            return await job
        try:
            return await asyncio.wait_for(asyncio.shield(job), wait + WRITE_QUEUE_WAIT)
        except TimeoutError:
            job.cancel()
            return Report(generation=await self.run_blocking(engine.generation))

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
        """Open the index, then lead (index, watch) or follow (read, take over when the writer
        goes). The event loop keeps only a weak reference to a task: the server holds this one,
        or it could be collected before it ends."""
        self.background = asyncio.ensure_future(self.start_background())

    async def start_background(self) -> None:
        await self.open_engine()
        engine = self.engine
        if engine is None:
            return
        generation: int | None = None  # as last announced to the client (None: not yet)
        # A server that does not watch indexes once when it can, then writes only when asked,
        # freeing the lease after each write: a server that watches can take it.
        engine.keep_lease = self.settings.watch
        led = False
        while not self.stop_watch.is_set():
            try:
                if not led and await asyncio.to_thread(engine.take_writer):
                    log.info("pi-event-search: this process (%d) indexes %s", os.getpid(),
                             engine.index_path)
                    await self.lead(engine)
                    if self.settings.watch and (engine.writer or self.stop_watch.is_set()):
                        return
                    if self.settings.watch:  # the lease was taken over: follow, try again
                        continue
                    led = True
                    await asyncio.to_thread(engine.yield_writer)
                    generation = await asyncio.to_thread(engine.generation)
                    continue
                seen = await asyncio.to_thread(self.follow, engine, generation)
                self.settled = self.settled or seen is not None
                if self.engine_error and self.engine_error.startswith(FOLLOWING):
                    self.engine_error = None  # read again: the error has passed
                if seen != generation:  # on the event loop: pygls writes are not thread-safe
                    self.protocol.notify("piEvents/indexChanged", {
                        "generation": seen, "changedSessions": 0 if generation is None else 1,
                        "indexing": False})
                    generation = seen
            except Exception as exc:  # never let indexing take the server down
                self.engine_error = f"{FOLLOWING}{exc}"
                log.error("pi-event-search: %s", self.engine_error)
            await asyncio.sleep(LEASE_POLL)

    @staticmethod
    def follow(engine: Engine, announced: int | None) -> int | None:
        """A reader's turn: the generation to announce to the client, as a writer's own pass
        would (first once the index is complete, then at each commit of the writer)."""
        if announced is None and engine.indexing() is not None:
            return None
        return engine.generation()

    async def lead(self, engine: Engine) -> None:
        """The writer's work: a first pass, then the watcher (which survives errors)."""
        try:
            await self.index_now()
        except Exception as exc:  # never let indexing take the server down
            self.engine_error = f"indexing failed: {exc}"
            self.log(f"pi-event-search: {self.engine_error}", t.MessageType.Error)
        if ahead.limit() and (self.ahead_task is None or self.ahead_task.done()):
            # its newest events read for their meaning while it writes (service/ahead.py)
            self.ahead_task = asyncio.ensure_future(ahead.read_ahead(
                engine, self.ahead, self.stop_watch,
                lambda message: self.log(message, t.MessageType.Warning)))
        if self.settings.watch:
            self.watch_task = asyncio.ensure_future(
                watch_async(engine, self.notify_changed, self.stop_watch, self.watch_error))
            await self.watch_task

    def watch_error(self, message: str | None) -> None:
        self.engine_error = message
        if message:
            self.log(f"pi-event-search: {message}", t.MessageType.Error)

    async def run_blocking(self, fn: Callable[..., T], *args: Any, **kw: Any) -> T:
        """Run engine work in a thread; a cancelled request interrupts its SQL."""
        cancel = threading.Event()
        engine = await self.ready_engine()

        def call() -> T:
            conn = engine.reader()
            conn.set_progress_handler(lambda: 1 if cancel.is_set() else 0, 20_000)
            try:
                return fn(*args, **kw)
            finally:
                conn.set_progress_handler(None, 0)

        try:
            return await asyncio.wrap_future(self.read_pool.submit(call))
        except asyncio.CancelledError:
            cancel.set()
            raise
