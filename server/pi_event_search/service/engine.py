"""The engine facade the CLI and the language server share: one index, its directories, and the
operations (refresh, search, read, trace, status). No protocol types here.
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import fields
from pathlib import Path
from typing import Any

from pi_event_search.core import locations
from pi_event_search.core.authz import Scope
from pi_event_search.core.errors import EngineError
from pi_event_search.core.eventref import Ref
from pi_event_search.core.wire import EventAt, LineOriginResult, ReadResult, Source, StatusResult, TraceResult
from pi_event_search.events.event_at import event_at
from pi_event_search.events.locate import locate
from pi_event_search.events.reader import read_event
from pi_event_search.events.trace import trace_event
from pi_event_search.files.filehistory import History, file_history
from pi_event_search.files.lineorigin import line_origin
from pi_event_search.index import indexer, store
from pi_event_search.index.status import status
from pi_event_search.query.search import Filters, Page, search
from pi_event_search.source import jsonl
from pi_event_search.source.discovery import SessionDir, default_dirs

READ_REFRESH_WAIT = 1.0  # seconds a read waits for the index held by an indexing pass


def _valid(value: Any) -> Any:
    if isinstance(value, str):
        return jsonl.valid_text(value)
    if isinstance(value, list):
        return [_valid(v) for v in value]
    return value


class Engine:
    """Owns the write connection (one indexing pass at a time per process) and opens readers."""

    def __init__(self, index_path: Path, dirs: list[SessionDir]) -> None:
        self.index_path = index_path
        self.dirs = dirs
        self.conn = store.connect(index_path)
        self._write_lock = threading.Lock()
        self._local = threading.local()

    @staticmethod
    def open(index_path: Path | None, extra_dirs: list[str]) -> Engine:
        path = index_path or locations.default_index_path()
        try:
            return Engine(path, default_dirs(locations.pi_sessions_dir(), extra_dirs))
        except store.ForeignDatabase as exc:
            raise EngineError(str(exc)) from exc
        except sqlite3.DatabaseError as exc:
            raise EngineError(f"cannot open index {path}: {exc}") from exc

    def reader(self) -> sqlite3.Connection:
        """A per-thread read connection (WAL readers never block the writer)."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = store.connect(self.index_path, readonly=True)
            self._local.conn = conn
        return conn

    def refresh(self, progress: indexer.Progress | None = None) -> indexer.Report:
        with self._write_lock:
            return indexer.refresh(self.conn, self.dirs, progress)

    def refresh_file(self, path: str) -> None:
        """Bring one session file up to date for a read that found it changed: that file alone,
        when it is still the indexed session file, and without waiting long for an indexing
        pass that holds the index (the watcher or the next pass catches the change)."""
        if not self._write_lock.acquire(timeout=READ_REFRESH_WAIT):
            return
        try:
            indexer.refresh_paths(self.conn, {path})
        finally:
            self._write_lock.release()

    def refresh_paths(self, paths: set[str]) -> indexer.Report:
        """Refresh just these files when that is enough to be exact, else everything."""
        with self._write_lock:
            report = indexer.refresh_paths(self.conn, paths) if paths else None
            return report if report is not None else indexer.refresh(self.conn, self.dirs)

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

    def status(self, scope: Scope | None) -> StatusResult:
        return status(self.reader(), self.index_path, self.dirs, scope)

    def file_history(self, path: str, scope: Scope, *, limit: int = 50,
                     cursor: str | None = None) -> History:
        return file_history(self.reader(), path, scope, limit=limit, cursor=cursor)

    def line_origin(self, path: str, line_text: str, scope: Scope) -> LineOriginResult:
        return line_origin(self.reader(), path, line_text, scope)

    def close(self) -> None:
        self.conn.close()
