"""What one indexing pass holds beyond its rows, and the one place that lets it go.

A pass may start a bulk load's full-text worker process and lock the side file (ftsload), switch
its connection to bulk settings (mode.bulk_begin) and leave a write transaction open when a
COMMIT fails (a full disk). Should anything raise, at any step, the scope's exit stops the
worker, releases the side file's lock and puts the connection back as a new pass expects it:
before, an error outside the per-file handling left the worker running and the lock held, and
the same process's next pass waited two minutes on its own lock, every time.
"""

from __future__ import annotations

import contextlib
import sqlite3
from types import TracebackType

from pi_event_search.index.bulk.ftsload import FtsLoad

CACHE_KB, AUTOCHECKPOINT = 32_000, 1000  # store._open's page cache; SQLite's default


class PassScope:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.load: FtsLoad | None = None  # the bulk load's side load, once started

    def __enter__(self) -> PassScope:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is None:
            return
        try:
            if self.load is not None:
                self.load.abandon()  # the flags stay in the index: the next pass resumes
        finally:
            self.load = None
            reset(self.conn)


def reset(conn: sqlite3.Connection) -> None:
    """The write connection as a new pass expects it: no transaction open (a failed COMMIT
    leaves one), the ordinary page cache and checkpoints. Best effort: the connection may be the
    reason the pass failed."""
    with contextlib.suppress(sqlite3.Error):
        if conn.in_transaction:
            conn.execute("ROLLBACK")
    with contextlib.suppress(sqlite3.Error):
        conn.execute(f"PRAGMA cache_size = -{CACHE_KB}")
        conn.execute(f"PRAGMA wal_autocheckpoint = {AUTOCHECKPOINT}")
