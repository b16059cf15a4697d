"""The engine facade the CLI and the language server share: one index, its directories, and the
operations (refresh, search, read, trace, status). No protocol types here.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from dataclasses import fields
from pathlib import Path
from typing import Any

from pi_event_search.core import locations
from pi_event_search.core.authz import Scope
from pi_event_search.core.errors import EngineError
from pi_event_search.core.eventref import Ref
from pi_event_search.core.wire import (
    EventAt,
    Indexing,
    LineOriginResult,
    ReadResult,
    SecretsResult,
    Source,
    StatusResult,
    TraceResult,
)
from pi_event_search.events.audit import secret_events
from pi_event_search.events.event_at import event_at
from pi_event_search.events.locate import locate
from pi_event_search.events.reader import read_event
from pi_event_search.events.trace import trace_event
from pi_event_search.files.filehistory import History, file_history
from pi_event_search.files.lineorigin import line_origin
from pi_event_search.index import indexer, locks, progress, store, textcodec, writes
from pi_event_search.index.filestate import FilesCache
from pi_event_search.index.status import status
from pi_event_search.query.search import Filters, Page, search
from pi_event_search.service.lease import Lease
from pi_event_search.source import jsonl
from pi_event_search.source.discovery import SessionDir, default_dirs, scan

READ_REFRESH_WAIT = 1.0  # seconds a read waits for the index held by an indexing pass
REINDEX_WAIT = 10.0  # seconds a reader's piEvents/reindex waits for the writer to index paths
OPENING = "index is being opened by another process; retrying"


class IndexOpening(EngineError):
    """The index cannot be opened yet because another process is creating it: retry."""


class IndexRefused(EngineError):
    """The index path holds a database that is not ours: retrying cannot help."""


def _valid(value: Any) -> Any:
    if isinstance(value, str):
        return jsonl.valid_text(value)
    if isinstance(value, list):
        return [_valid(v) for v in value]
    return value


class Engine:
    """One index for one process. The process holding the writer lease (lease.py) owns the write
    connection: it alone refreshes. Every process reads through per-thread read-only connections
    that see the writer's commits at once (docs/process-model.md)."""

    def __init__(self, index_path: Path, dirs: list[SessionDir]) -> None:
        self.index_path = index_path
        self.dirs = dirs
        self.lease = Lease(index_path)
        self._conn: sqlite3.Connection | None = None  # the write connection, while the writer
        self._files = FilesCache()  # what the last pass left in the files table (idle refreshes)
        self._write_lock = threading.Lock()
        self._local = threading.local()
        # False: the lease is freed after each write (a server that does not watch: it writes
        # only when asked, and must leave the index to a server that follows it).
        self.keep_lease = True
        index_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._users = locks.try_lock(Path(f"{index_path}.users"), shared=True)  # in use
        # The schema exists and is current (or IndexBusy). The lease is taken only by a process
        # about to write (a pass, a server's background task): one that only reads never holds it.
        store.connect(index_path).close()

    @staticmethod
    def open(index_path: Path | None, extra_dirs: list[str]) -> Engine:
        path = index_path or locations.default_index_path(store.SCHEMA_VERSION)
        try:
            return Engine(path, default_dirs(locations.pi_sessions_dir(), extra_dirs))
        except store.ForeignDatabase as exc:
            raise IndexRefused(str(exc)) from exc
        except (store.IndexBusy, locks.Busy) as exc:
            raise IndexOpening(f"{OPENING}: {exc}") from exc
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise IndexOpening(f"{OPENING}: {exc}") from exc
            raise EngineError(f"cannot open index {path}: {exc}") from exc
        except sqlite3.DatabaseError as exc:
            raise EngineError(f"cannot open index {path}: {exc}") from exc

    # -- roles -----------------------------------------------------------------------------
    @property
    def writer(self) -> bool:
        return self._conn is not None

    @property
    def conn(self) -> sqlite3.Connection | None:
        """The write connection (taking the lease if it is free); None while another process
        writes."""
        self.take_writer()
        return self._conn

    def take_writer(self) -> bool:
        """Become the index's writer if no other process is (never waits)."""
        if self._conn is not None:
            return True
        if not self.lease.try_take():
            return False
        try:
            self._conn = store.connect(self.index_path)
        except BaseException:
            self.lease.release()
            raise
        if self.index_path == locations.default_index_path(store.SCHEMA_VERSION):
            store.remove_older_versions(self.index_path)
        return True

    def yield_writer(self) -> None:
        """Free the lease now unless this process keeps it (a pass can fail before it writes)."""
        with self._write_lock:
            self._done_writing()

    def _done_writing(self) -> None:
        """Under the write lock, after a write: free the lease unless this process keeps it."""
        if not self.keep_lease and self._conn is not None:
            self._conn.close()
            self._conn = None
            self.lease.release()

    def writer_pid(self) -> int | None:
        return self.lease.holder()

    def reader(self) -> sqlite3.Connection:
        """A per-thread read-only connection (WAL readers never block the writer). When another
        connection has committed since this one last looked (PRAGMA data_version), dictionaries
        the writer trained meanwhile are loaded before the read."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = store.connect(self.index_path, readonly=True)
            self._local.version = None
        version = conn.execute("PRAGMA data_version").fetchone()["data_version"]
        if version != self._local.version:
            textcodec.load(conn)
            self._local.version = version
        return conn

    def indexing(self) -> Indexing | None:
        return progress.indexing(self.reader())

    def generation(self) -> int:
        return store.generation(self.reader())

    # -- writing (the writer only) -----------------------------------------------------------
    def refresh(self, progress: indexer.Progress | None = None) -> indexer.Report:
        """A full pass, when this process is (or can become) the writer; otherwise nothing is
        written and the report says what the index holds."""
        with self._write_lock:
            if not self.take_writer():
                return self._as_read()
            assert self._conn is not None
            try:
                return indexer.refresh(self._conn, self.dirs, progress, self._files)
            finally:
                self._done_writing()

    def refresh_or_wait(self, progress: indexer.Progress | None, seconds: float
                        ) -> indexer.Report:
        """The CLI's pass: as the writer when no other process is one (or the writer goes
        meanwhile); otherwise wait, at most `seconds`, for the writer to have indexed every
        session file as it is now. Then answer from what is committed."""
        end = time.monotonic() + seconds
        want: set[str] | None = None
        while True:
            if self.take_writer():
                return self.refresh(progress)
            done, want = self._indexed(want)
            if done or time.monotonic() >= end:
                return self._as_read()
            time.sleep(0.05)

    def refresh_file(self, path: str) -> None:
        """Bring one session file up to date for a read that found it changed: that file alone,
        when it is still the indexed session file, and without waiting long for an indexing
        pass that holds the index (the watcher or the next pass catches the change). Only the
        writer does (or a process that takes the lease for each write, when it is free); a reader
        answers from what the writer has committed."""
        if not self._write_lock.acquire(timeout=READ_REFRESH_WAIT):
            return
        try:
            if (self._conn is not None or not self.keep_lease) and self.take_writer():
                assert self._conn is not None
                indexer.refresh_paths(self._conn, {path})
        finally:
            self._done_writing()
            self._write_lock.release()

    def refresh_paths(self, paths: set[str]) -> indexer.Report:
        """Refresh just these files when that is enough to be exact, else everything. A process
        that is not the writer waits (bounded) until the writer has indexed them."""
        with self._write_lock:
            if not self.take_writer():
                self.wait_indexed(paths or None, REINDEX_WAIT)
                return self._as_read()
            conn = self._conn
            assert conn is not None
            try:
                report = indexer.refresh_paths(conn, paths) if paths else None
                return report if report is not None \
                    else indexer.refresh(conn, self.dirs, files=self._files)
            finally:
                self._done_writing()

    def wait_indexed(self, paths: set[str] | None, seconds: float) -> bool:
        """Wait until the index holds these files as they are now (None: every session file of
        the scanned directories) and no pass is under way, for at most `seconds`."""
        end = time.monotonic() + seconds
        want = paths
        while True:
            done, want = self._indexed(want)
            if done:
                return True
            if time.monotonic() >= end:
                return False
            time.sleep(0.02)

    def _indexed(self, paths: set[str] | None) -> tuple[bool, set[str] | None]:
        """Whether the index holds these files as they are now, and the files asked about: None
        (every session file) waits for the pass under way, then lists the directories once, and
        the caller's next poll reuses that list instead of scanning again."""
        conn = self.reader()
        if paths is None:
            if progress.indexing(conn) is not None or writes.bulk_pending(conn):
                return False, None
            paths = {o.path for o in scan(self.dirs)[0]}
        for path in paths:
            try:
                st = os.stat(path)
            except OSError:
                continue  # gone: nothing to wait for
            row = conn.execute("SELECT size, mtime_ns, status FROM files WHERE path = ?",
                               (path,)).fetchone()
            if row is None or row["status"] == "new" \
                    or (row["size"], row["mtime_ns"]) != (st.st_size, st.st_mtime_ns):
                return False, paths
        return True, paths

    def _as_read(self) -> indexer.Report:
        return indexer.Report(generation=store.generation(self.reader()))

    def search(self, query: str, filters: Filters, scope: Scope, *, limit: int = 20,
               cursor: str | None = None, prefix_last: bool = False) -> Page:
        # Text from argv (surrogate escapes) or JSON (lone \uD800) may hold lone surrogates.
        clean = {f.name: _valid(getattr(filters, f.name)) for f in fields(filters)}
        return search(self.reader(), jsonl.valid_text(query), Filters(**clean), scope, limit=limit,
                      cursor=cursor if cursor is None else jsonl.valid_text(cursor),
                      prefix_last=prefix_last)

    def read(self, ref: str | Ref, scope: Scope, **kw: Any) -> ReadResult:
        target = ref if isinstance(ref, Ref) else Ref.parse(ref)
        return read_event(self.reader(), self.refresh_file, target, scope, **kw)

    def trace(self, ref: str | Ref, scope: Scope) -> TraceResult:
        target = ref if isinstance(ref, Ref) else Ref.parse(ref)
        return trace_event(self.reader(), target, scope)

    def locate(self, refs: list[Ref], scope: Scope) -> dict[tuple[str, str], Source]:
        """Where each visible event among `refs` is, in one pass (a note's links)."""
        return locate(self.reader(), refs, scope)

    def event_at(self, path: str, line: int, scope: Scope) -> EventAt | None:
        return event_at(self.reader(), path, line, scope)

    def secrets(self, scope: Scope) -> SecretsResult:
        return secret_events(self.reader(), scope)

    def status(self, scope: Scope | None) -> StatusResult:
        return status(self.reader(), self.index_path, self.dirs, scope)

    def file_history(self, path: str, scope: Scope, *, limit: int = 50,
                     cursor: str | None = None) -> History:
        return file_history(self.reader(), path, scope, limit=limit, cursor=cursor)

    def line_origin(self, path: str, line_text: str, scope: Scope) -> LineOriginResult:
        return line_origin(self.reader(), path, line_text, scope)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self.lease.release()
        if self._users is not None:
            locks.unlock(self._users)
            self._users = None
