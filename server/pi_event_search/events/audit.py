"""The credential audit (`pi-event-search secrets`, piEvents/secrets): which visible events held a
credential, of which kinds and how many, never a value (the index holds none)."""

from __future__ import annotations

import sqlite3

from pi_event_search.core.authz import Scope
from pi_event_search.core.eventref import format_ref
from pi_event_search.core.wire import SecretEvent, SecretsResult


def secret_events(conn: sqlite3.Connection, scope: Scope) -> SecretsResult:
    """Every visible event whose texts held a credential, newest session first, in append order."""
    where, params = scope.event_sql(None)
    events: list[SecretEvent] = []
    sessions: set[str] = set()
    for r in conn.execute(
            "SELECT s.session_id, e.entry_id, e.ts, e.secrets FROM events e "
            "JOIN sessions s ON s.sid = e.sid "
            f"WHERE e.secrets IS NOT NULL AND {where} ORDER BY s.created DESC, s.sid, e.seq",
            params):
        counts = [part.rpartition(":") for part in r["secrets"].split(",")]
        sessions.add(r["session_id"])
        events.append({"ref": format_ref(r["session_id"], r["entry_id"]),
                       "sessionId": r["session_id"], "entryId": r["entry_id"], "timestamp": r["ts"],
                       "kinds": [kind for kind, _, _ in counts],
                       "count": sum(int(n) for _, _, n in counts)})
    return {"events": events, "sessions": len(sessions)}
