"""The extractor registry an index was projected with (meta `extractors`), and what a writer with
another registry does about it.

All processes on one index should share a registry (the user file does that), but each may have
its own: the writer's decides what is indexed. A writer whose registry differs from the record
marks for projection again only the session files that hold a custom entry of a type whose
extractor was added, changed or removed, and records its own registry, in one transaction. The
pass that follows rebuilds those files (their status is no longer `indexed`, so the pass parses
them whole) with the new registry; every other session keeps its rows as they are. A writer
killed in between leaves the marks: the next pass rebuilds them all the same.

Custom entries keep their type in the events' facts. Rows written before the type was kept have
none: they count as holding every type, once (their new rows keep it).
"""

from __future__ import annotations

import sqlite3

import orjson

from pi_event_search.index import store
from pi_event_search.source.extractors import EMPTY, Registry, from_json

META_KEY = "extractors"


def recorded(conn: sqlite3.Connection) -> Registry | None:
    """The registry the index was projected with; None for an index that records none."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (META_KEY,)).fetchone()
    return None if row is None else from_json(row["value"])


def holding(conn: sqlite3.Connection, types: set[str]) -> list[str]:
    """The indexed session files holding a custom entry of one of these types (or of no type
    recorded), in path order."""
    if not types:
        return []
    sids: set[int] = set()
    for row in conn.execute("SELECT DISTINCT sid, facts FROM events WHERE entry_type = 'custom'"):
        facts = orjson.loads(row["facts"]) if row["facts"] else {}
        custom_type = facts.get("customType")
        if not isinstance(custom_type, str) or custom_type in types:
            sids.add(row["sid"])
    if not sids:
        return []
    marks = ",".join("?" * len(sids))
    return [r["path"] for r in conn.execute(
        f"SELECT DISTINCT f.path FROM sessions s JOIN files f ON f.path = s.path "
        f"WHERE s.sid IN ({marks}) AND f.status = 'indexed' ORDER BY f.path", sorted(sids))]


def reconcile(conn: sqlite3.Connection, wanted: Registry | None) -> tuple[Registry, list[str]]:
    """The registry a writer projects with, and the session files it marked for projection
    again: `wanted` made the index's (nothing is written when the index records it already), or
    for a process without a usable registry (None), the index's own, left as it is."""
    old = recorded(conn)
    if wanted is None or old == wanted:
        return old or EMPTY, []
    with store.transaction(conn):
        old = recorded(conn)  # again, inside the write transaction
        if old == wanted:
            return wanted, []
        paths = holding(conn, wanted.changed(old or EMPTY))
        # Not `indexed`: the next pass parses the file whole (ingest._rebuild), as a new one.
        conn.executemany("UPDATE files SET status = 'new' WHERE path = ?", [(p,) for p in paths])
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                     (META_KEY, wanted.to_json()))
    return wanted, paths
