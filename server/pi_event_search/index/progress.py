"""Progress of a long indexing pass: bytes done against bytes to do, and an estimate of the time
left from the rate so far (what the CLI prints and the server's $/progress messages carry); and
the pass's progress as the index itself records it for the processes that only read."""

from __future__ import annotations

import sqlite3
import time
from typing import Any, cast

import orjson

from pi_event_search.core.wire import Indexing


class Eta:
    """Counts the bytes of the files a pass applies; `text()` says how far it is and how long is
    left, once enough has been done for the rate to mean something."""

    def __init__(self, total_bytes: int) -> None:
        self.total = total_bytes
        self.done = 0
        self.start = time.monotonic()

    def add(self, nbytes: int) -> None:
        self.done += nbytes

    def seconds_left(self) -> float | None:
        elapsed = time.monotonic() - self.start
        if self.done <= 0 or elapsed < 0.5 or self.done >= self.total:
            return None
        return (self.total - self.done) * elapsed / self.done

    def text(self) -> str:
        if self.total <= 0:
            return ""
        mb = f"{self.done / 1e6:,.0f} of {self.total / 1e6:,.0f} MB"
        left = self.seconds_left()
        return mb if left is None else f"{mb}, about {_duration(left)} left"


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{max(1, round(seconds))} s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    return f"{minutes // 60} h {minutes % 60:02d} min"


# How far the writer's pass has come, for every process reading the index (meta 'indexing',
# written in the writer's own transactions; absent when the index is complete and current).
FIRST_INDEX, REBUILD, REFRESH = "first-index", "rebuild", "refresh"


def publish(conn: sqlite3.Connection, phase: str, done: int, total: int) -> None:
    """Inside the writer's open transaction."""
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('indexing', ?)",
                 (orjson.dumps({"phase": phase, "done": done, "total": total}).decode(),))


def clear(conn: sqlite3.Connection) -> None:
    conn.execute("DELETE FROM meta WHERE key = 'indexing'")


def indexing(conn: sqlite3.Connection) -> Indexing | None:
    """The `indexing` member of a search result (docs/protocol.md): None when complete."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'indexing'").fetchone()
    if row is None:
        return None
    state = orjson.loads(row["value"])
    done, total = int(state["done"]), int(state["total"])
    out: dict[str, Any] = {"phase": state["phase"], "sessionsIndexed": done,
                           "sessionsTotal": total,
                           "percent": min(100, 100 * done // total) if total else 0}
    return cast(Indexing, out)


def bulk_pending(conn: sqlite3.Connection) -> bool:
    """A bulk load started and did not finish (it was killed): the next pass completes it."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'bulk'").fetchone()
    return row is not None and row["value"] == "1"
