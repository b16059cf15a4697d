"""The engine facade the CLI and the language server share: one index, its directories, and the
operations (refresh, search, read, trace, status). No protocol types here.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import fields, replace
from pathlib import Path
from typing import Any, TypeVar

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
    SessionsResult,
    Source,
    StatusResult,
    TraceResult,
)
from pi_event_search.events.audit import secret_events
from pi_event_search.events.event_at import event_at
from pi_event_search.events.locate import locate
from pi_event_search.events.reader import read_event
from pi_event_search.events.sessionlist import sessions
from pi_event_search.events.trace import trace_event
from pi_event_search.files.filehistory import History, file_history
from pi_event_search.files.lineorigin import line_origin
from pi_event_search.index import (
    damage,
    indexer,
    locks,
    progress,
    registry,
    store,
    textcodec,
    wanted,
)
from pi_event_search.index.filestate import FilesCache
from pi_event_search.query.groups import GroupPage, grouped
from pi_event_search.query.search import Filters, Page, search
from pi_event_search.query.status import status
from pi_event_search.service.lease import Lease, LeaseLost
from pi_event_search.source import jsonl, sessiondirs
from pi_event_search.source.discovery import SessionDir, merged, scan
from pi_event_search.source.extractors import EMPTY, Registry

READ_REFRESH_WAIT = 1.0  # seconds a read waits for the index held by an indexing pass
REINDEX_WAIT = 10.0  # seconds a reader's piEvents/reindex waits for the writer to index paths
OPENING = "index is being opened by another process; retrying"
T = TypeVar("T")


class IndexOpening(EngineError):
    """The index cannot be opened yet because another process is creating it: retry."""


class IndexRefused(EngineError):
    """The index cannot be used and retrying cannot help (a database that is not ours, a path
    that cannot hold a file, no permission, a damaged file that is not ours to move)."""


class IndexDamaged(EngineError):
    """SQLite reports the index corrupt: it was moved aside and is being rebuilt."""


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

    def __init__(self, index_path: Path, dirs: list[SessionDir],
                 extractors: Registry | None = EMPTY) -> None:
        self.index_path = index_path
        self.dirs = dirs
        # This process's extractor registry: what it indexes when it writes (index/registry.py),
        # and the only custom types whose `custom.entry` text it shows, whoever indexed them.
        # None (its setting held nothing usable): the index's own, whatever it is.
        self.extractors = extractors
        self.lease = Lease(index_path)
        self._conn: sqlite3.Connection | None = None  # the write connection, while the writer
        self._files = FilesCache()  # what the last pass left in the files table (idle refreshes)
        # Held by a write (a pass, a file's refresh); reentrant: a write takes the lease inside it.
        self._write_lock = threading.RLock()
        # Taking and letting go of the writer role, from any thread: request threads and the
        # server's background task race for it (two of them both found no writer and both took
        # the lease; a reindex arriving meanwhile opened a second write connection).
        self._role = threading.RLock()
        self._local = threading.local()
        # False: the lease is freed after each write (a server that does not watch: it writes
        # only when asked, and must leave the index to a server that follows it).
        self.keep_lease = True
        self.recovered: str | None = None  # what this process did with a damaged index
        self._ino: int | None = None  # the index file the write connection has open
        self._wanted: Path | None = None
        self._users: int | None = None
        # Why this process cannot write the index (a read-only file system, a directory it may
        # not write): it then opens it for reading only, creates no file beside it, and never
        # indexes; every answer comes from the index as it is (None: it may write).
        self.read_only = _unwritable(index_path)
        if self.read_only is not None:
            if not index_path.is_file():
                raise IndexRefused(f"cannot create the index {index_path}: {self.read_only}")
            self._open_read_only()
            return
        try:
            index_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        except FileExistsError as exc:  # the index's directory is a file
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR),
                                     str(index_path.parent)) from exc
        self._users = locks.try_lock(Path(f"{index_path}.users"), shared=True)  # in use
        # Which directories this process reads, for whichever process writes (wanted.py).
        self._wanted = wanted.announce(index_path, dirs)
        try:
            # The schema exists and is current (or IndexBusy). The lease is taken only by a
            # process about to write (a pass, a server's background task): one that only reads
            # never holds it; and by one that finds an older schema, which it drops only then.
            try:
                store.connect(index_path, rebuild=False).close()
            except store.OldSchema as exc:
                if not self.take_writer():
                    raise store.IndexBusy(f"{exc}; another process writes it") from exc
        except BaseException:
            self.close()  # a failed open keeps no descriptor
            raise

    def _open_read_only(self) -> None:
        """Check the index can answer as it is: ours and of the current schema (an older one
        would need a rebuild this process cannot make)."""
        with contextlib.closing(store.connect(self.index_path, readonly=True,
                                              immutable=self._immutable())) as conn:
            if not store.current(conn):
                raise IndexRefused(f"cannot open the index {self.index_path}: it needs a rebuild "
                                   f"(an older schema, or not an index), and {self.read_only}")

    def _immutable(self) -> bool:
        """SQLite opens a WAL index read-only only beside its -wal and -shm files, which a
        process that cannot write cannot create: without them no writer is under way (a writer
        keeps them while it is open), so the file is read as it is."""
        return self.read_only is not None and not Path(f"{self.index_path}-wal").exists()

    @property
    def cannot_index(self) -> str | None:
        """One line saying this process cannot index, and why (None: it can)."""
        if self.read_only is None:
            return None
        return f"cannot index: {self.read_only}; answering from the index as it is"

    @staticmethod
    def open(index_path: Path | None, extra_dirs: list[str],
             extractors: Registry | None = EMPTY, *,
             dirs: list[SessionDir] | None = None) -> Engine:
        """Every error ends in one of two: IndexOpening (it may pass: busy, locked, a full disk;
        retry) or IndexRefused (it will not: say why). A damaged index at a path this project
        manages is moved aside and a new one is opened in its place. `dirs`: the session
        directories, else Pi's as it resolves them and `extra_dirs` (sessiondirs.py)."""
        default = locations.default_index_path(store.SCHEMA_VERSION)
        path = index_path or default
        if dirs is None:
            dirs = sessiondirs.configured(extra=extra_dirs)
        ino = damage.inode(path)
        try:
            return _open(path, dirs, extractors)
        except IndexDamaged as exc:
            if not damage.managed(path, default):
                raise IndexRefused(f"{path} is damaged ({exc}) and was not created by "
                                   "pi-event-search: move it away, or choose another index "
                                   "path") from exc
            moved = _classified(path, lambda: damage.move_aside(path, ino))
        engine = _open(path, dirs, extractors)
        if moved is not None:
            engine.recovered = _recovered(path, moved)
        return engine

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
        """Become the index's writer if no other process is, or its writer has gone silent
        (stopped: lease.py); never waits long. One thread at a time; the write connection is
        replaced only between writes (a write under way finds out itself: LeaseLost)."""
        if self.read_only is not None:
            return False
        with self._role:
            if self._conn is not None and (self.lease.lost or self.replaced()):
                if not self._write_lock.acquire(blocking=False):
                    return False  # a write under way on the old connection ends first
                try:
                    if self.lease.lost:
                        self._drop_writer()  # another process took the lease meanwhile
                    elif self.replaced():
                        self._conn.close()  # the index was moved aside: write the new one
                        self._conn = store.connect(self.index_path)
                        self._ino = damage.inode(self.index_path)
                        self.lease.guard(self._conn)
                finally:
                    self._write_lock.release()
            if self._conn is not None:
                return True
            ino = damage.inode(self.index_path)
            self._conn = self.lease.try_take(lambda: store.connect(self.index_path))
            if self._conn is None:
                return False
            self._ino = ino
            if self.index_path == locations.default_index_path(store.SCHEMA_VERSION):
                store.remove_older_versions(self.index_path)
            return True

    def still_writer(self) -> bool:
        """Whether this process still holds the lease (False once another took it over)."""
        if self._conn is not None and self.lease.lost:
            with self._write_lock:
                self._drop_writer()
        return self._conn is not None

    def _drop_writer(self) -> None:
        with self._role:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            self.lease.release()

    def yield_writer(self) -> None:
        """Free the lease now unless this process keeps it (a pass can fail before it writes)."""
        with self._write_lock:
            self._done_writing()

    def _done_writing(self) -> None:
        """Under the write lock, after a write: free the lease unless this process keeps it."""
        if not self.keep_lease and self._conn is not None:
            self._drop_writer()

    def writer_pid(self) -> int | None:
        return self.lease.holder()

    def writer_stalled(self) -> str | None:
        return self.lease.stalled()

    def replaced(self) -> bool:
        """The write connection's file is no longer the index (a damaged one moved aside)."""
        return self._conn is not None and damage.inode(self.index_path) != self._ino

    def reader(self) -> sqlite3.Connection:
        """A per-thread read-only connection (WAL readers never block the writer). When another
        connection has committed since this one last looked (PRAGMA data_version), dictionaries
        the writer trained meanwhile are loaded before the read. A connection to a file that is
        no longer the index (moved aside, damaged) is replaced by one to the new index."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        ino = damage.inode(self.index_path)
        if conn is not None and ino != self._local.ino:
            conn.close()
            conn = None
        if conn is None:
            conn = self._local.conn = store.connect(self.index_path, readonly=True,
                                                    immutable=self._immutable())
            self._local.version, self._local.ino = None, ino
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
    def refresh(self, progress: indexer.Progress | None = None, wait: float | None = None
                ) -> indexer.Report:
        """A full pass, when this process is (or can become) the writer; otherwise nothing is
        written and the report says what the index holds. `wait`: at most this long for a pass
        under way in this process (then the report of what the index holds)."""
        with self._writes(wait) as free:
            if not free or not self.take_writer():
                return self._as_read()
            assert self._conn is not None
            try:
                return self._writing(lambda c: indexer.refresh(
                    c, self.scanned(), progress, self._files, self.extractors))
            except LeaseLost:
                return self._as_read()
            finally:
                self._done_writing()

    def refresh_or_wait(self, progress: indexer.Progress | None, seconds: float
                        ) -> indexer.Report:
        """The CLI's pass: as the writer when no other process is one (or the writer goes
        meanwhile); otherwise wait, at most `seconds`, for the writer to have indexed every
        session file as it is now. Then answer from what is committed."""
        end = time.monotonic() + seconds
        want: set[str] | None = None
        while self.read_only is None:  # else nobody may be writing it: nothing to wait for
            if self.take_writer():
                return self.refresh(progress)
            done, want = self._indexed(want)
            if done or time.monotonic() >= end:
                return self._as_read()
            time.sleep(0.05)
        return self._as_read()

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
                with contextlib.suppress(LeaseLost):
                    self._writing(lambda c: indexer.refresh_paths(c, {path}, self.extractors))
        finally:
            self._done_writing()
            self._write_lock.release()

    def refresh_paths(self, paths: set[str], wait: float | None = None) -> indexer.Report:
        """Refresh just these files when that is enough to be exact, else everything. A process
        that is not the writer waits (bounded) until the writer has indexed them; `wait` bounds
        the wait for a pass under way in this process (refresh)."""
        with self._writes(wait) as free:
            if not free or self.read_only is not None:
                return self._as_read()
            if not self.take_writer():
                self.wait_indexed(paths or None, REINDEX_WAIT)
                return self._as_read()
            def run(conn: sqlite3.Connection) -> indexer.Report:
                report = indexer.refresh_paths(conn, paths, self.extractors) if paths else None
                return report if report is not None \
                    else indexer.refresh(conn, self.scanned(), files=self._files,
                                         extractors=self.extractors)
            try:
                return self._writing(run)
            except LeaseLost:
                return self._as_read()
            finally:
                self._done_writing()

    @contextlib.contextmanager
    def _writes(self, wait: float | None) -> Iterator[bool]:
        """The write lock, waiting at most `wait` seconds for it (None: as long as it takes);
        yields whether it is held."""
        free = self._write_lock.acquire(timeout=-1 if wait is None else wait)
        try:
            yield free
        finally:
            if free:
                self._write_lock.release()

    def _writing(self, run: Callable[[sqlite3.Connection], T]) -> T:
        """A write on the write connection; should SQLite find the index damaged, it is moved
        aside and the write runs again on the new, empty index (a first index)."""
        assert self._conn is not None
        try:
            return run(self._conn)
        except LeaseLost:
            self._drop_writer()
            raise
        except sqlite3.DatabaseError as exc:
            if not self.heal(exc, self._ino):
                raise
        if not self.take_writer():
            raise IndexDamaged("the index was damaged; another process rebuilds it")
        assert self._conn is not None
        return run(self._conn)

    def _reading(self, run: Callable[[sqlite3.Connection], T]) -> T:
        conn = self.reader()
        try:
            return run(conn)
        except sqlite3.DatabaseError as exc:
            if self.heal(exc, self._local.ino):
                raise IndexDamaged(f"the index was damaged ({exc}); it was moved aside and is "
                                   "being rebuilt: try again in a moment") from exc
            raise

    def heal(self, exc: BaseException, ino: int | None) -> bool:
        """SQLite found the index damaged in use: move it aside (when this project manages its
        path) and create the new one, which the writer's next pass fills. False when `exc` is
        not damage, or the file is not ours to move."""
        default = locations.default_index_path(store.SCHEMA_VERSION)
        if self.read_only is not None or not damage.corrupt(exc) \
                or not damage.managed(self.index_path, default):
            return False
        moved = damage.move_aside(self.index_path, ino)
        store.connect(self.index_path).close()
        if moved is not None:
            self.recovered = _recovered(self.index_path, moved)
        return True

    def wait_indexed(self, paths: set[str] | None, seconds: float) -> bool:
        """Wait until the index holds these files as they are now (None: every session file of
        the scanned directories) and no pass is under way, for at most `seconds`."""
        end = time.monotonic() + seconds
        want = paths
        while True:
            done, want = self._indexed(want)
            if done or self.read_only is not None:  # no writer of ours will come: answer now
                return done
            if time.monotonic() >= end:
                return False
            time.sleep(0.02)

    def _indexed(self, paths: set[str] | None) -> tuple[bool, set[str] | None]:
        """Whether the index holds these files as they are now, and the files asked about: None
        (every session file) waits for the pass under way, then lists the directories once, and
        the caller's next poll reuses that list instead of scanning again."""
        conn = self.reader()
        if paths is None:
            if progress.indexing(conn) is not None or progress.bulk_pending(conn):
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

    def set_dirs(self, dirs: list[SessionDir]) -> bool:
        """Read these directories from now on (a changed setting); whether they changed. Answers
        follow at once; the writer's next pass (the caller asks for one) reads them."""
        if dirs == self.dirs:
            return False
        old = self._wanted
        self.dirs = dirs
        self._wanted = wanted.announce(self.index_path, dirs)
        wanted.withdraw(old)
        return True

    def scanned(self) -> list[SessionDir]:
        """What this process's passes read: its own directories, then those the other processes
        on the index read (wanted.py); each process answers only from its own (_here)."""
        return merged([*self.dirs, *wanted.others(self.index_path, self._wanted,
                                                  clean=self.writer)])

    def _here(self, scope: Scope) -> Scope:
        """The caller's scope, narrowed to the sessions found in this process's own directories:
        the index is shared, and a directory another process reads (another user setting, a
        project Pi trusts there) is none of this one's business, whatever it holds."""
        return replace(scope, found_in=tuple((d.path, d.depth) for d in self.dirs))

    def search(self, query: str, filters: Filters, scope: Scope, *, limit: int = 20,
               cursor: str | None = None, prefix_last: bool = False, exact: bool = False,
               settled: bool = False) -> Page:
        query, filters, cursor = _cleaned(query, filters, cursor)
        here = self._here(scope)
        return self._reading(lambda c: search(c, query, self._registered(c, filters), here,
                                              limit=limit, cursor=cursor, prefix_last=prefix_last,
                                              exact=exact, settled=settled))

    def search_groups(self, query: str, filters: Filters, scope: Scope, *, limit: int = 20,
                      cursor: str | None = None, prefix_last: bool = False,
                      reveal_secrets: bool = False, exact: bool = False,
                      settled: bool = False) -> GroupPage:
        """The search's results grouped by session (query/groups.py)."""
        query, filters, cursor = _cleaned(query, filters, cursor)
        here = self._here(scope)
        return self._reading(lambda c: grouped(c, query, self._registered(c, filters), here,
                                               limit=limit, cursor=cursor, prefix_last=prefix_last,
                                               reveal=reveal_secrets, exact=exact,
                                               settled=settled))

    def sessions(self, filters: Filters, scope: Scope, *, limit: int = 50,
                 cursor: str | None = None, reveal_secrets: bool = False) -> SessionsResult:
        """The sessions list, newest first (events/sessionlist.py)."""
        _, filters, cursor = _cleaned("", filters, cursor)
        here = self._here(scope)
        found, after = self._reading(lambda c: sessions(c, self._registered(c, filters), here,
                                                        limit=limit, cursor=cursor,
                                                        reveal=reveal_secrets))
        return {"sessions": found, "nextCursor": after}

    def _registered(self, conn: sqlite3.Connection, filters: Filters) -> Filters:
        """Custom entries are found only for the types of this process's own registry."""
        return replace(filters, custom_types=list(self.extractors_for(conn).types))

    def read(self, ref: str | Ref, scope: Scope, **kw: Any) -> ReadResult:
        target = ref if isinstance(ref, Ref) else Ref.parse(ref)
        return self._reading(lambda c: read_event(c, self.refresh_file, target, self._here(scope),
                                                  extractors=self.extractors_for(c), **kw))

    def extractors_for(self, conn: sqlite3.Connection) -> Registry:
        """The registry this process shows custom entries of: its own, else the index's."""
        if self.extractors is not None:
            return self.extractors
        return registry.recorded(conn) or EMPTY

    def trace(self, ref: str | Ref, scope: Scope) -> TraceResult:
        target = ref if isinstance(ref, Ref) else Ref.parse(ref)
        return self._reading(lambda c: trace_event(c, target, self._here(scope)))

    def locate(self, refs: list[Ref], scope: Scope) -> dict[tuple[str, str], Source]:
        """Where each visible event among `refs` is, in one pass (a note's links)."""
        return self._reading(lambda c: locate(c, refs, self._here(scope)))

    def event_at(self, path: str, line: int, scope: Scope) -> EventAt | None:
        return self._reading(lambda c: event_at(c, path, line, self._here(scope)))

    def secrets(self, scope: Scope) -> SecretsResult:
        return secret_events(self.reader(), self._here(scope))

    def status(self, scope: Scope | None) -> StatusResult:
        result = self._reading(lambda c: status(c, self.index_path, self.dirs,
                                                self._here(scope or Scope(None))))
        if self.recovered:
            result["index"]["recovered"] = self.recovered
        if self.cannot_index is not None:
            result["index"]["readOnly"] = self.cannot_index
        return result

    def file_history(self, path: str, scope: Scope, *, limit: int = 50,
                     cursor: str | None = None) -> History:
        here = self._here(scope)
        return self._reading(lambda c: file_history(c, path, here, limit=limit, cursor=cursor))

    def line_origin(self, path: str, line_text: str, scope: Scope) -> LineOriginResult:
        return self._reading(lambda c: line_origin(c, path, line_text, self._here(scope)))

    def close(self) -> None:
        self._drop_writer()
        wanted.withdraw(self._wanted)
        self._wanted = None
        if self._users is not None:
            locks.unlock(self._users)
            self._users = None


def _cleaned(query: str, filters: Filters, cursor: str | None
             ) -> tuple[str, Filters, str | None]:
    """Text from argv (surrogate escapes) or JSON (lone \\uD800) may hold lone surrogates."""
    clean = {f.name: _valid(getattr(filters, f.name)) for f in fields(filters)}
    return (jsonl.valid_text(query), Filters(**clean),
            cursor if cursor is None else jsonl.valid_text(cursor))


def _unwritable(index_path: Path) -> str | None:
    """Why this process cannot write the index or create it (None: it can, or its directory
    does not exist yet, which opening then creates or refuses as it always has)."""
    exists = index_path.is_file()
    try:
        if os.statvfs(index_path if exists else index_path.parent).f_flag & os.ST_RDONLY:
            return "the index is on a read-only file system"
    except OSError:
        return None
    for what in (index_path.parent, *([index_path] if exists else [])):
        if not os.access(what, os.W_OK, effective_ids=os.access in os.supports_effective_ids):
            return f"no permission to write {what}"
    return None


def _recovered(path: Path, moved: Path) -> str:
    return f"the index {path} was damaged; it was moved aside to {moved} and is being rebuilt"


def _classified(path: Path, run: Callable[[], T]) -> T:
    """Run an opening step; its error as IndexOpening (it may pass), IndexDamaged or
    IndexRefused (it will not pass by waiting)."""
    try:
        return run()
    except store.ForeignDatabase as exc:
        raise IndexRefused(str(exc)) from exc
    except (store.IndexBusy, locks.Busy) as exc:
        raise IndexOpening(f"{OPENING}: {exc}") from exc
    except (sqlite3.Error, OSError) as exc:
        if damage.corrupt(exc):
            raise IndexDamaged(str(exc)) from exc
        what = f"cannot open the index {path}: {exc}"
        raise (IndexOpening(f"{what}; retrying") if damage.transient(exc)
               else IndexRefused(what)) from exc


def _open(path: Path, dirs: list[SessionDir], extractors: Registry | None) -> Engine:
    return _classified(path, lambda: Engine(path, dirs, extractors))
