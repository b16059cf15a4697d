"""Index state and counts. With a scope, only what that caller may see (counts included)."""

from __future__ import annotations

import os
import sqlite3
from dataclasses import replace
from pathlib import Path

from pi_event_search.core.authz import Scope
from pi_event_search.core.wire import (
    BadLines,
    Duplicate,
    SessionDirInfo,
    SessionProblem,
    Skipped,
    StatusResult,
)
from pi_event_search.index import store
from pi_event_search.meaning import minilm
from pi_event_search.source.discovery import SessionDir


def _fragments(conn: sqlite3.Connection, visible: str, params: list[object]) -> int:
    """The fragments of the visible sessions, walked from the side that holds fewer entries:
    the visible sessions, or the others (then taken from the total, which the fragments' own
    index counts at once). Joining every fragment to its event and session cost 45 ms at 1 GB,
    and clients ask for the status after each change of the index. Sessions, their events and
    fragments are only ever deleted together, so the total holds no fragment of no session."""
    split = conn.execute(
        f"SELECT coalesce(sum(s.entries), 0) AS everything, coalesce(sum(CASE WHEN ({visible}) "
        "IS 1 THEN s.entries ELSE 0 END), 0) AS seen FROM sessions s", params).fetchone()
    walk = ("SELECT count(*) AS n FROM sessions s CROSS JOIN events e ON e.sid = s.sid "
            "CROSS JOIN fragments f ON f.eid = e.eid WHERE ")
    if split["seen"] * 2 < split["everything"]:
        return int(conn.execute(walk + visible, params).fetchone()["n"])
    total = conn.execute("SELECT count(*) AS n FROM fragments").fetchone()["n"]
    return int(total - conn.execute(walk + f"({visible}) IS NOT 1", params).fetchone()["n"])


def status(conn: sqlite3.Connection, index_path: Path, dirs: list[SessionDir],
           scope: Scope | None) -> StatusResult:
    visible, params = (scope or Scope(None)).session_sql("s")
    count = conn.execute(
        "SELECT count(*) AS sessions, coalesce(sum(s.entries), 0) AS events FROM sessions s "
        f"WHERE {visible}", params).fetchone()
    secret_events = conn.execute(
        "SELECT count(*) AS n FROM events e JOIN sessions s ON s.sid = e.sid "
        f"WHERE e.secrets IS NOT NULL AND {visible}", params).fetchone()["n"]
    fragments = _fragments(conn, visible, params)
    by_source = {r["source"]: r["n"] for r in conn.execute(
        f"SELECT s.source, count(*) AS n FROM sessions s WHERE {visible} GROUP BY s.source "
        "ORDER BY s.source", params)}

    def listing(state: str) -> list[SessionProblem]:
        return [{"sessionId": r["session_id"], "path": r["path"], "error": r["error"]}
                for r in conn.execute(
                    "SELECT s.session_id, s.path, s.error FROM sessions s "
                    f"WHERE s.state = ? AND {visible}", [state, *params])]

    duplicates: list[Duplicate] = [{"sessionId": r["session_id"], "path": r["path"],
                   "canonicalPath": r["canonical_path"]}
                  for r in conn.execute(
                      "SELECT f.session_id, f.path, f.canonical_path FROM files f "
                      "JOIN sessions s ON s.session_id = f.session_id "
                      f"WHERE f.status = 'duplicate' AND {visible}", params)]
    bad: list[BadLines] = [{"sessionId": r["session_id"], "path": r["path"], "badLines": r["bad_lines"],
            "detail": r["bad_detail"]}
           for r in conn.execute(
               "SELECT f.session_id, f.path, f.bad_lines, f.bad_detail FROM files f "
               "JOIN sessions s ON s.path = f.path "
               f"WHERE f.bad_lines > 0 AND {visible}", params)]
    found, found_params = (scope or Scope(None)).found_sql("path")
    skipped: list[Skipped] = [] if scope is not None and scope.roots is not None else [
        {"path": r["path"], "reason": r["reason"]} for r in conn.execute(
            f"SELECT path, reason FROM files WHERE status = 'skipped' AND {found} ORDER BY path",
            found_params)]
    size = sum(os.path.getsize(p) for p in (str(index_path), f"{index_path}-wal")
               if os.path.exists(p))
    return {
        "index": {"path": str(index_path), "bytes": size, "schemaVersion": store.SCHEMA_VERSION,
                  "generation": store.generation(conn)},
        "sessions": count["sessions"], "sessionsBySource": by_source, "events": count["events"],
        "fragments": fragments,
        "stale": listing("stale"), "unavailable": listing("unavailable"),
        "duplicates": duplicates, "badLines": bad, "skipped": skipped,
        "sessionDirs": [d.path for d in dirs],
        "directories": directories(conn, dirs, scope),
        "roots": list(scope.roots) if scope is not None and scope.roots is not None else None,
        "secretEvents": secret_events,
        "order": minilm.describe(),
    }


def directories(conn: sqlite3.Connection | None, dirs: list[SessionDir],
                scope: Scope | None) -> list[SessionDirInfo]:
    """Each directory this process reads, why, how, and how many of the caller's sessions it
    holds (None without an index to count in)."""
    out: list[SessionDirInfo] = []
    for d in dirs:
        count: int | None = None
        if conn is not None:
            visible, params = replace(scope or Scope(None),
                                      found_in=((d.path, d.depth),)).session_sql("s")
            count = conn.execute(f"SELECT count(*) AS n FROM sessions s WHERE {visible}",
                                 params).fetchone()["n"]
        out.append({"path": d.path, "layout": d.layout, "origin": d.origin, "live": d.live,
                    "exists": os.path.isdir(d.path), "sessions": count})
    return out
