"""Bulk mode (a first index or a rebuild): indexes built at the end, FTS5 merging off until one
final merge. The flag it leaves while a load is unfinished is read by progress.bulk_pending.
"""

from __future__ import annotations

import sqlite3

from pi_event_search.index.store import transaction

# Indexes whose keys arrive in random order during a load: built once after a bulk load instead of
# row by row (the others grow at their right edge, and drops during a load need fragments_eid).
DEFERRED_INDEXES = {
    "events_ts": "CREATE INDEX IF NOT EXISTS events_ts ON events(ts_ms)",
    "relations_target": "CREATE INDEX IF NOT EXISTS relations_target ON relations(target, type)",
    "file_refs_path": "CREATE INDEX IF NOT EXISTS file_refs_path ON file_refs(path)",
}
BULK_CACHE_KB = 16_000  # page cache while loading (the default is 32 MB; FTS5 writes elsewhere)
# FTS5's in-memory index of pending rows while loading (default 1 MB): fewer, larger segments.
BULK_FTS_HASH = 16_000_000
FTS_AUTOMERGE, FTS_HASH = 4, 1 << 20  # FTS5's defaults, restored after a bulk load
BULK_CHECKPOINT_PAGES = 16384  # WAL pages between checkpoints while loading (fewer fsyncs)


def bulk_begin(conn: sqlite3.Connection) -> None:
    """Enter bulk mode in one transaction: the flag, no FTS5 automerge (segments are merged once at
    the end), deferred indexes dropped. Idempotent, so a killed load is simply resumed."""
    with transaction(conn):
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('bulk', '1')")
        conn.execute("INSERT INTO fts(fts, rank) VALUES ('automerge', 0)")
        conn.execute("INSERT INTO fts(fts, rank) VALUES ('hashsize', ?)", (BULK_FTS_HASH,))
        for name in DEFERRED_INDEXES:
            conn.execute(f"DROP INDEX IF EXISTS {name}")
    conn.execute(f"PRAGMA cache_size = -{BULK_CACHE_KB}")
    conn.execute(f"PRAGMA wal_autocheckpoint = {BULK_CHECKPOINT_PAGES}")


def bulk_indexes(conn: sqlite3.Connection) -> None:
    """Build the indexes a bulk load deferred (bulk_begin drops them again should it resume)."""
    with transaction(conn):
        for sql in DEFERRED_INDEXES.values():
            conn.execute(sql)


def bulk_end(conn: sqlite3.Connection) -> None:
    """Leave bulk mode: build the deferred indexes, merge the FTS5 segments into one, restore
    automerge and clear the flag, all in one transaction (a kill here leaves bulk mode pending)."""
    with transaction(conn):
        for sql in DEFERRED_INDEXES.values():
            conn.execute(sql)
        conn.execute("INSERT INTO fts(fts) VALUES ('optimize')")
        conn.execute("INSERT INTO fts(fts, rank) VALUES ('automerge', ?)", (FTS_AUTOMERGE,))
        conn.execute("INSERT INTO fts(fts, rank) VALUES ('hashsize', ?)", (FTS_HASH,))
        conn.execute("DELETE FROM meta WHERE key = 'bulk'")
    conn.execute("PRAGMA cache_size = -32000")
    conn.execute("PRAGMA wal_autocheckpoint = 1000")
    # The merge left the old segments' pages free: give them back (auto_vacuum = INCREMENTAL).
    conn.executescript("PRAGMA incremental_vacuum;")  # execute() would free one page only
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
