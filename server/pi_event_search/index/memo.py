"""What a connection remembers between queries while the index has not changed.

Some answers depend only on what the index holds: a prefix's terms from the vocabulary, for one.
A connection keeps them until the index changes: `PRAGMA data_version` moves when another
connection commits (the writer, for every reader), `total_changes` when this one writes. Kept on
the connection itself (store.connect opens every connection with this class), so it goes with it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

MAX_ENTRIES = 256  # per kind; a full memo is emptied (answers are cheap to compute again)


class Connection(sqlite3.Connection):
    """An index connection with a memo of answers, valid for one state of the index."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.memo: dict[str, dict[Any, Any]] = {}
        self.memo_key: tuple[int, int] | None = None
        # Run inside each write transaction (store.begin): the writer lease's check.
        self.guard: Callable[[sqlite3.Connection], None] | None = None
        # True while the writer lease is being handed over: a write batch commits at once.
        self.yielding: Callable[[], bool] | None = None


def of(conn: sqlite3.Connection, kind: str) -> dict[Any, Any]:
    """The connection's memo of `kind`, emptied when the index changed since it was filled (a
    connection of another class remembers nothing: a new, empty dict each time)."""
    if not isinstance(conn, Connection):
        return {}
    key = (conn.execute("PRAGMA data_version").fetchone()["data_version"], conn.total_changes)
    if key != conn.memo_key:
        conn.memo.clear()
        conn.memo_key = key
    entries = conn.memo.setdefault(kind, {})
    if len(entries) >= MAX_ENTRIES:
        entries.clear()
    return entries
