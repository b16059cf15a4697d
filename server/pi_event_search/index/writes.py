"""How the writer writes: write batches committed every half second (a bulk load's less often)."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable

from pi_event_search.index.fulltext import FullText
from pi_event_search.index.store import begin, bump_generation

BULK_COMMIT_FACTOR = 4  # a bulk load commits 4 times less often (each commit writes a segment)


class WriteBatch:
    """One write transaction over several files, committed every `seconds`: a cold index pays
    few fsyncs, and the write lock is never held long. Files apply without savepoints
    (ingest.apply_file says why); a commit that changed anything bumps the generation in the same
    transaction.
    """

    def __init__(self, conn: sqlite3.Connection, seconds: float = 0.5, *,
                 fulltext: FullText | None = None) -> None:
        self.conn, self.seconds = conn, seconds
        self.fulltext = fulltext  # its own transactions end right after this one's
        self.before_commit: Callable[[], None] | None = None  # last writes of a transaction
        self.started: float | None = None
        self.dirty = False

    def begin(self) -> None:
        if self.started is None:
            begin(self.conn)
            self.started = time.monotonic()

    def commit(self) -> None:
        if self.started is not None:
            if self.before_commit is not None:
                self.before_commit()
            if self.dirty:
                bump_generation(self.conn)
            self.conn.execute("COMMIT")
            self.started, self.dirty = None, False
            if self.fulltext is not None:
                self.fulltext.commit()

    def maybe_commit(self) -> bool:
        """Commit when the batch is `seconds` old, or at once when the writer lease is being
        handed over (service/lease.py: this transaction holds the taker back)."""
        yielding = getattr(self.conn, "yielding", None)
        if self.started is not None and (time.monotonic() - self.started > self.seconds
                                         or (yielding is not None and yielding())):
            self.commit()
            return True
        return False

    def rollback(self) -> None:
        if self.started is not None:
            # A failed COMMIT (a full disk) may have rolled back already: the error to report is
            # that one, not "no transaction is active".
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            self.started, self.dirty = None, False
            if self.fulltext is not None:
                self.fulltext.rollback()

    def __enter__(self) -> WriteBatch:
        return self

    def __exit__(self, exc_type: object, *_: object) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.rollback()
