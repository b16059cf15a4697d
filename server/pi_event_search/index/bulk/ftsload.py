"""A bulk load's full-text index, written by a second SQLite writer on the second core.

FTS5's tokenizing and segment writing are two thirds of a cold index's writer, and SQLite has one
writer per database. So a bulk load into an empty full-text index sends its FTS5 rows to a worker
process (ftsworker.py) that writes them into a side database, `<index>.fts-load.sqlite3`: the
same table definition, fed in the same order, its transactions committed and rolled back right
after the writer's (this is the writer's `store.Follower`). The main index gets an empty
placeholder row per fragment meanwhile, so that every committed fragment has its full-text row
as always. The load ends by copying the side index's shadow tables over the main one's in one
transaction: the same tokenizer over the same rows gives the same bytes.

The main index stays the source of truth. A load killed midway leaves its fragments, their
placeholders and a flag; the next pass empties the side file, feeds it the fragments already
committed (from their stored text), and carries on (or, without a side load, indexes them in the
main index). The side file belongs to the writer lease: `<index>.fts-load-<epoch>.sqlite3`, the
epoch of the lease that loads (service/lease.py). A new holder never waits on an older one's side
file, even a stopped holder's that is still open and locked: it deletes it and starts its own
(the stopped one's worker writes on into a deleted file; its next write transaction raises
LeaseLost). The side file never holds anything the main index does not.
"""

from __future__ import annotations

import contextlib
import os
import queue
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol

from pi_event_search.index import locks, memo, store, textcodec

try:
    import fcntl
    import resource
except ImportError:  # not POSIX: no side load (begin returns None), one writer as before
    fcntl = resource = None  # type: ignore[assignment]
from pi_event_search.core.authz import place_tokens, with_places
from pi_event_search.index.bulk.ftsworker import COMMIT, DELETE, END, INSERT, ROLLBACK, frame
from pi_event_search.index.fulltext import INSERT_SQL, FullText, with_parts
from pi_event_search.index.readahead import cores

_SHADOW = ("fts_data", "fts_idx", "fts_docsize", "fts_config")
_CATCH_UP_ROWS = 2000
FRAME_CHARS = 1 << 20
QUEUED = 12

def _main_file(conn: sqlite3.Connection) -> str:
    return str(next(r["file"] for r in conn.execute("PRAGMA database_list")
                    if r["name"] == "main"))


def side_path(conn: sqlite3.Connection) -> Path:
    """This lease's side file (the epoch is the writer's own: store.begin checks it)."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'lease'").fetchone()
    return Path(f"{_main_file(conn)}.fts-load-{row['value'] if row is not None else 0}.sqlite3")


def side_files(index: str) -> list[Path]:
    """Every side file of an index, of any lease (and of versions that named it without)."""
    folder, name = os.path.split(index)
    return [p for p in Path(folder or ".").glob(f"{name}.fts-load*")
            if p.name.split(".fts-load", 1)[1][:1] in ("-", ".")]


# Seconds another engine of this process (the same lease, so the same side file) may hold the
# side file: two engines of one process both bulk loading (a library user's).
OTHER_LOADER_WAIT = 120.0


def begin(conn: sqlite3.Connection, scope: Scope, *, first: bool = False) -> FtsLoad | None:
    """Start a side load for a bulk load into an empty full-text index (or, `first`, an index
    whose only rows are this first pass's newest sessions: caught up like a killed load's), with
    two cores or more (PIES_FTS_LOAD=0 turns it off, =1 forces it); None when the rows go to the
    main index as usual. The load belongs to `scope` from its creation: whatever raises after
    it (LeaseLost, a lock, a full disk), the scope's exit stops its worker and unlocks it."""
    resumed = conn.execute("SELECT 1 FROM meta WHERE key = 'fts_load'").fetchone() is not None
    forced = os.environ.get("PIES_FTS_LOAD")
    load = None
    if fcntl is not None and (forced == "1" or (forced != "0" and cores() >= 2)):
        if not resumed and not first \
                and conn.execute("SELECT 1 FROM fts_docsize LIMIT 1").fetchone():
            return None  # not empty: a side index could not be copied in
        # No side file possible here (a read-only directory...): one writer, as before.
        with contextlib.suppress(OSError):
            load = FtsLoad(conn, side_path(conn))
    if load is not None:
        scope.load = load
    if load is None:
        if resumed:  # a killed side load left placeholders: the real rows, here and now
            with store.transaction(conn):
                _reindex(conn)
                conn.execute("DELETE FROM meta WHERE key = 'fts_load'")
        return None
    with store.transaction(conn):
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('fts_load', '1')")
    load.catch_up()
    return load


class Scope(Protocol):
    """Where a pass keeps its side load (bulk/passscope.py)."""

    load: FtsLoad | None


class FtsLoad(FullText):
    """The full-text route of a bulk load (see the module's doc): placeholders in the main
    index, the real rows to the worker; its transactions follow the main index's."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        super().__init__(conn)
        self.path = path
        self.feeding = True  # until close_input: rows go to the side database
        self.lock: int | None = None
        self.abandoned = False
        for stale in side_files(_main_file(conn)):  # older leases' files (this lease's own
            if not stale.name.startswith(path.name):  # may be another engine's, loading)
                stale.unlink(missing_ok=True)
        self.lock = locks.wait_lock(path, OTHER_LOADER_WAIT, "another engine's bulk load")
        try:
            os.ftruncate(self.lock, 0)  # whatever a killed load left: rebuilt from the fragments
            for extra in ("-journal", "-wal", "-shm"):
                Path(str(path) + extra).unlink(missing_ok=True)
            self.proc = subprocess.Popen(  # noqa: S603 - our own module, our own interpreter
                [sys.executable, "-m", "pi_event_search.index.bulk.ftsworker", str(path)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except BaseException:
            self._unlock()
            raise
        # Rows go over in frames of about FRAME_CHARS characters of text, at most QUEUED of them
        # waiting: enough to carry the worker over the writer's pauses (a commit, a big file).
        self.q: queue.Queue[tuple[bytes, Any]] = queue.Queue(QUEUED)
        self.pending: list[tuple[Any, ...]] = []
        self.pending_chars = 0
        self.error: BaseException | None = None
        self.cpu = 0.0  # the worker's, once it is done
        self.rss = (0.0, 0.0)  # peak MB of this process and of the worker, once it is done
        self.thread = threading.Thread(target=self._run, name="pies-fts-send", daemon=True)
        try:
            self.thread.start()
        except BaseException:
            self.proc.kill()
            self.proc.wait()
            self._unlock()
            raise

    def insert(self, rows: list[tuple[Any, ...]]) -> None:
        """Placeholders here (every committed fragment has its full-text row; the copy at the
        end replaces them all), the rows themselves to the side database."""
        if not self.feeding:
            super().insert(rows)
        elif rows:
            super().insert([(r[0], "", "") for r in rows])
            self.send((INSERT, list(rows)))

    def delete(self, rows: Iterable[tuple[Any, ...]]) -> None:
        if not self.feeding:
            super().delete(rows)
            return
        rows = list(rows)
        super().delete([(r[0], "", "") for r in rows])
        self.send((DELETE, rows))

    def send(self, op: tuple[bytes, Any]) -> None:
        if op[0] == INSERT:
            for row in op[1]:
                self.pending.append(row)
                self.pending_chars += len(row[1])
                if self.pending_chars >= FRAME_CHARS:
                    self._put((INSERT, self.pending))
                    self.pending, self.pending_chars = [], 0
            return
        if self.pending:
            self._put((INSERT, self.pending))
            self.pending, self.pending_chars = [], 0
        self._put(op)

    def _put(self, op: tuple[bytes, Any]) -> None:
        if self.error is None or op[0] == END:  # after an error the thread drains to END
            self.q.put(op)

    def commit(self) -> None:
        if self.feeding:
            self.send((COMMIT, None))

    def rollback(self) -> None:
        if self.feeding:
            self.send((ROLLBACK, None))

    def catch_up(self) -> None:
        """The fragments a killed load already committed, with their text as indexed."""
        for rows in _committed(self.conn):
            self.send((INSERT, rows))
        self.commit()

    def _run(self) -> None:
        """Hand the writer's rows and transaction ends to the worker process, in order."""
        stdin = self.proc.stdin
        assert stdin is not None
        try:
            while True:
                op, rows = self.q.get()
                if op == END and self.abandoned:
                    self.proc.kill()
                    break
                stdin.write(frame(op, rows))
                if op == END:
                    break
            out, err = self.proc.communicate()
            if self.abandoned:
                return
            if self.proc.returncode != 0:
                raise RuntimeError(f"full-text worker exited with {self.proc.returncode}: "
                                   f"{err.decode(errors='replace')[-2000:]}")
            self.cpu = float(out.split()[1])
            self.rss = _peak_rss()
        except BaseException as exc:  # noqa: BLE001 - reported by finish, which falls back
            self.error = exc
            self.proc.kill()
            while self.q.get()[0] != END:  # never leave the writer blocked on a full queue
                pass

    def abandon(self) -> None:
        """The load stops here (an error in the pass): the flags stay, the next pass resumes. The
        worker process is gone, its pipes closed and the side file unlocked when this returns."""
        self.abandoned = True
        try:
            self.close_input()
            self.thread.join()
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
                if pipe is not None:
                    with contextlib.suppress(OSError):
                        pipe.close()
            self._unlock()

    def _unlock(self) -> None:
        """Release the side file's lock, once, on every path (success, error, abandon)."""
        if self.lock is not None:
            fd, self.lock = self.lock, None
            locks.unlock(fd)

    def close_input(self) -> None:
        """No more rows: the side thread merges its segments (FTS5 optimize) while the writer
        does its own end-of-load work."""
        if self.feeding:
            self.feeding = False
            self.send((END, None))

    def finish(self) -> None:
        """Copy the side index into the main one (or, should the side load have failed, index
        the fragments' text in the main one directly), clear the flag, drop the side file."""
        self.close_input()
        self.thread.join()
        path = _main_file(self.conn)
        # A connection of its own: FTS5 caches the index structure per connection and reloads
        # it when another connection commits, never after its own writes to the shadow tables.
        copier = sqlite3.connect(path, isolation_level=None, timeout=60, factory=memo.Connection)
        copier.row_factory = sqlite3.Row
        copier.guard = getattr(self.conn, "guard", None)  # the writer lease's check
        try:
            copier.execute("ATTACH ? AS side", (str(self.path),))
            with store.transaction(copier):
                if self.error is not None or not _same_rows(copier):
                    _reindex(copier)
                else:
                    for table in _SHADOW:
                        copier.execute(f"DELETE FROM main.{table}")
                        copier.execute(f"INSERT INTO main.{table} SELECT * FROM side.{table}")
                copier.execute("DELETE FROM meta WHERE key = 'fts_load'")
            copier.execute("DETACH side")
        finally:
            copier.close()
        self.path.unlink(missing_ok=True)
        self._unlock()


def _peak_rss() -> tuple[float, float]:
    """Peak resident MB of this process and of its waited-for children (the worker)."""
    if resource is None:
        return (0.0, 0.0)
    return (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)


def _same_rows(conn: sqlite3.Connection) -> bool:
    """The side index holds exactly the fragments' rows (count, largest and sum of the ids)."""
    main = conn.execute("SELECT count(*), max(fid), total(fid) FROM main.fragments").fetchone()
    side = conn.execute("SELECT count(*), max(id), total(id) FROM side.fts_docsize").fetchone()
    return tuple(main) == tuple(side)


def _reindex(conn: sqlite3.Connection) -> None:
    conn.execute("INSERT INTO main.fts(fts) VALUES ('delete-all')")
    for rows in _committed(conn):
        conn.executemany(INSERT_SQL.replace("INTO fts", "INTO main.fts"), with_parts(rows))


def _committed(conn: sqlite3.Connection) -> Iterator[list[tuple[Any, ...]]]:
    """Every fragment as the full-text index takes it, in fid order, in batches."""
    places: dict[str | None, str] = {}
    batch: list[tuple[Any, ...]] = []
    for r in conn.execute(
            "SELECT f.fid AS fid, f.text AS text, f.meta AS meta, s.cwd_canon AS canon "
            "FROM main.fragments f JOIN main.events e ON e.eid = f.eid "
            "JOIN main.sessions s ON s.sid = e.sid ORDER BY f.fid"):
        if r["canon"] not in places:
            places[r["canon"]] = place_tokens(r["canon"])
        batch.append((r["fid"], textcodec.unpack(r["text"], conn),
                      with_places(r["meta"], places[r["canon"]])))
        if len(batch) >= _CATCH_UP_ROWS:
            yield batch
            batch = []
    if batch:
        yield batch
