"""The files table as an indexing pass reads it, and whether a pass would change anything.

A full rescan compares every file's stat with what the last pass left; this keeps that cheap: the
table is read once and reused while nothing has written to the index.
"""

from __future__ import annotations

import sqlite3
import time
from typing import NamedTuple

from pi_event_search.index import store
from pi_event_search.source.discovery import RACY_NS, Observation


class FileRow(NamedTuple):
    """A files row as a pass reads it (a tuple: thousands are compared per pass, and
    sqlite3.Row looks each name up)."""

    path: str
    root: str
    dev: int | None
    ino: int | None
    size: int | None
    mtime_ns: int | None
    session_id: str | None
    status: str
    reason: str | None
    canonical_path: str | None


# The SELECT is spelled from FileRow's fields: a row maps to a FileRow by name, in one place.
_SELECT_FILES = f"SELECT {', '.join(FileRow._fields)} FROM files"


class Settled(dict[str, tuple[object, ...]]):
    """path -> (root, dev, ino, size, mtime_ns) of each file whose last pass left it settled
    (indexed, duplicate or skipped), with the number of indexed ones."""

    indexed = 0
    pending = False  # a bulk load is unfinished


# The files table as this connection last read it, while nothing has been written to the index
# since (`PRAGMA data_version` moves on other connections' commits, total_changes on our own).
# Connections take no weak references: the few most recent are kept, by identity.
_KNOWN: dict[int, tuple[sqlite3.Connection, tuple[int, int], dict[str, FileRow],
                        Settled]] = {}


def known_files(conn: sqlite3.Connection) -> tuple[dict[str, FileRow], Settled]:
    key = (conn.execute("PRAGMA data_version").fetchone()["data_version"], conn.total_changes)
    cached = _KNOWN.get(id(conn))
    if cached is not None and cached[0] is conn and cached[1] == key:
        return cached[2], cached[3]
    rows = map(FileRow._make, conn.execute(_SELECT_FILES))
    known = {r.path: r for r in rows}
    settled = Settled((p, (r.root, r.dev, r.ino, r.size, r.mtime_ns)) for p, r in known.items()
                       if r.status in ("indexed", "duplicate", "skipped"))
    settled.indexed = sum(1 for r in known.values() if r.status == "indexed")
    settled.pending = store.bulk_pending(conn)
    _KNOWN.pop(id(conn), None)
    while len(_KNOWN) >= 4:
        del _KNOWN[next(iter(_KNOWN))]
    _KNOWN[id(conn)] = (conn, key, known, settled)
    return known, settled


def quiet(observed: list[Observation], known: dict[str, FileRow],
           settled: Settled, roots: set[str]) -> bool:
    """Every file under `roots` (the directories this pass scans: files under others are not its
    business) is as the last pass left it (same root, identity, size and mtime; indexed,
    duplicate or skipped; old enough that its mtime cannot hide a change) and none is gone: with
    the same inputs, the pass would change nothing."""
    if settled.pending:
        return False
    mine = sum(1 for r in known.values() if r.root in roots)
    if len(observed) != mine or sum(1 for v in settled.values() if v[0] in roots) != mine:
        return False
    racy = time.time_ns() - RACY_NS
    for obs in observed:
        if settled.get(obs.path) != (obs.root, obs.dev, obs.ino, obs.size, obs.mtime_ns) \
                or obs.mtime_ns > racy:
            return False
    return True
