"""Index state and counts. With a scope, only what that caller may see (counts included)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

from pi_event_search import store
from pi_event_search.authz import Scope
from pi_event_search.discovery import SessionDir


def status(conn: sqlite3.Connection, index_path: Path, dirs: list[SessionDir],
           scope: Scope | None) -> dict[str, Any]:
    visible, params = (scope or Scope(None)).session_sql("s")
    count = conn.execute(
        f"SELECT count(*), coalesce(sum(s.entries), 0) FROM sessions s WHERE {visible}",
        params).fetchone()
    fragments = conn.execute(
        f"SELECT count(*) FROM fragments f JOIN events e ON e.eid = f.eid "
        f"JOIN sessions s ON s.sid = e.sid WHERE {visible}", params).fetchone()[0]

    def listing(state: str) -> list[dict[str, Any]]:
        return [{"sessionId": sid, "path": path, "error": err} for sid, path, err in conn.execute(
            f"SELECT s.session_id, s.path, s.error FROM sessions s WHERE s.state = ? AND {visible}",
            [state, *params])]

    duplicates = [{"sessionId": sid, "path": path, "canonicalPath": canon}
                  for sid, path, canon in conn.execute(
                      "SELECT f.session_id, f.path, f.canonical_path FROM files f "
                      "JOIN sessions s ON s.session_id = f.session_id "
                      f"WHERE f.status = 'duplicate' AND {visible}", params)]
    bad = [{"sessionId": sid, "path": path, "badLines": n, "detail": detail}
           for sid, path, n, detail in conn.execute(
               "SELECT f.session_id, f.path, f.bad_lines, f.bad_detail FROM files f "
               "JOIN sessions s ON s.path = f.path "
               f"WHERE f.bad_lines > 0 AND {visible}", params)]
    skipped = [] if scope is not None and scope.roots is not None else [
        {"path": path, "reason": reason} for path, reason in conn.execute(
            "SELECT path, reason FROM files WHERE status = 'skipped' ORDER BY path")]
    size = sum(os.path.getsize(p) for p in (str(index_path), f"{index_path}-wal")
               if os.path.exists(p))
    return {
        "index": {"path": str(index_path), "bytes": size, "schemaVersion": store.SCHEMA_VERSION,
                  "generation": store.generation(conn)},
        "sessions": count[0], "events": count[1], "fragments": fragments,
        "stale": listing("stale"), "unavailable": listing("unavailable"),
        "duplicates": duplicates, "badLines": bad, "skipped": skipped,
        "sessionDirs": [d.path for d in dirs],
        "roots": list(scope.roots) if scope is not None and scope.roots is not None else None,
    }
