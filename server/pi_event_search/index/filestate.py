"""The files table as an indexing pass reads it, and whether a pass would change anything.

A full rescan compares every file's stat with what the last pass left; this keeps that cheap: the
table is read once and reused while nothing has written to the index.
"""

from __future__ import annotations

import sqlite3
import time
from typing import NamedTuple

from pi_event_search.index import progress
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


class FilesCache:
    """The files table as one write connection last read it, while nothing has been written to
    the index since (`PRAGMA data_version` moves on other connections' commits, total_changes on
    our own). Its owner (the engine, one per write connection) passes it to every pass."""

    def __init__(self) -> None:
        self._conn: sqlite3.Connection | None = None
        self._key: tuple[int, int] | None = None
        self._value: tuple[dict[str, FileRow], Settled] | None = None

    def read(self, conn: sqlite3.Connection) -> tuple[dict[str, FileRow], Settled]:
        key = (conn.execute("PRAGMA data_version").fetchone()["data_version"], conn.total_changes)
        if self._value is not None and self._conn is conn and self._key == key:
            return self._value
        self._conn, self._key, self._value = conn, key, known_files(conn)
        return self._value


def known_files(conn: sqlite3.Connection) -> tuple[dict[str, FileRow], Settled]:
    """The files table now, and which files the last pass left settled."""
    rows = map(FileRow._make, conn.execute(_SELECT_FILES))
    known = {r.path: r for r in rows}
    settled = Settled((p, (r.root, r.dev, r.ino, r.size, r.mtime_ns)) for p, r in known.items()
                       if r.status in ("indexed", "duplicate", "skipped"))
    settled.indexed = sum(1 for r in known.values() if r.status == "indexed")
    settled.pending = progress.bulk_pending(conn)
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
