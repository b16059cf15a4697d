"""When a pass last read each session directory, and which directories no pass has read for long.

The index is shared by processes configured with different directories, and each answers only
from its own (core/authz.py `found_in`), so rows of a directory this pass does not read are not
this pass's to judge: another process may read it. Only when no pass of any process has read a
directory for FORGET_AFTER are its rows dropped (a process that reads it again indexes it again:
the index is a cache). Stamps live in `meta` as `dir_seen:<path>` = Unix seconds.
"""

from __future__ import annotations

import sqlite3
import time

FORGET_AFTER = 14 * 86400  # seconds without any pass reading a directory: its rows go
RESTAMP = 86400  # an idle pass writes its stamps again after this long (one small write a day)
_KEY = "dir_seen:"


def _stamps(conn: sqlite3.Connection) -> dict[str, float]:
    return {r["key"][len(_KEY):]: float(r["value"]) for r in conn.execute(
        "SELECT key, value FROM meta WHERE key >= ? AND key < ?", (_KEY, _KEY[:-1] + ";"))}


def due(conn: sqlite3.Connection, roots: set[str], now: float | None = None) -> bool:
    """Whether a pass over `roots` should write its stamps although it writes nothing else."""
    now = time.time() if now is None else now
    seen = _stamps(conn)
    return any(now - seen.get(r, 0.0) >= RESTAMP for r in roots)


def stamp(conn: sqlite3.Connection, roots: set[str], now: float | None = None) -> None:
    """Inside a write transaction: these directories were read now."""
    now = time.time() if now is None else now
    conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) "
                     "DO UPDATE SET value = excluded.value",
                     [(_KEY + r, str(int(now))) for r in sorted(roots)])


def forgotten(conn: sqlite3.Connection, others: set[str], now: float | None = None
              ) -> set[str]:
    """Inside a write transaction: which of `others` (directories of indexed files that this pass
    did not read) no pass has read for FORGET_AFTER. One never stamped (an index from before the
    stamps) is stamped now: its time starts here."""
    now = time.time() if now is None else now
    seen = _stamps(conn)
    new = {r for r in others if r not in seen}
    if new:
        stamp(conn, new, now)
    gone = {r for r in others - new if now - seen[r] >= FORGET_AFTER}
    conn.executemany("DELETE FROM meta WHERE key = ?", [(_KEY + r,) for r in sorted(gone)])
    return gone
