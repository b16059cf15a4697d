"""Where a writer's full-text rows go, and what a commit of the main index owes them.

Passed explicitly down an indexing pass (indexer -> ingest -> rows, sessions) and to its
WriteBatch. The plain route writes the main index's FTS5 table in the same transaction; a bulk
load's route (ftsload.FtsLoad) also feeds a side database whose transactions follow the main
one's: commit and rollback are called right after the main index's.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any

INSERT_SQL = "INSERT INTO fts (rowid, text, meta) VALUES (?,?,?)"
DELETE_SQL = "INSERT INTO fts (fts, rowid, text, meta) VALUES ('delete', ?, ?, ?)"


class FullText:
    """The main index's full-text table, written in the writer's own transaction."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def insert(self, rows: list[tuple[Any, ...]]) -> None:
        """(fid, text, meta) rows."""
        self.conn.executemany(INSERT_SQL, rows)

    def delete(self, rows: Iterable[tuple[Any, ...]]) -> None:
        """Forget (fid, original text, meta) rows: a contentless FTS5 table needs the text."""
        self.conn.executemany(DELETE_SQL, rows)

    def commit(self) -> None:
        """The main index committed (nothing more to do here)."""

    def rollback(self) -> None:
        """The main index rolled back (nothing more to do here)."""
