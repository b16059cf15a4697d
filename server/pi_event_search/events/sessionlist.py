"""The sessions list (piEvents/sessions, `pi-event-search sessions`): every session the caller
may see that has an indexed event, newest first (by its newest event), in pages.

Filters: `sessionId` and `cwd` choose sessions; `since` and `until` keep the sessions active in
that window (newest event at or after `since`, first event before `until`); every other filter
(kind, role, tool, errors, file, secrets, branch and selection states) keeps the sessions holding
at least one event that passes it. The counts are the session's own, unfiltered.

The cursor names the last session shown by its place in the order (its newest event's time and
its row id), not by an offset: it stays valid when the index changes. A session that gets a new
event meanwhile moves to the top of the list, above the cursor.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from collections import Counter
from dataclasses import asdict
from typing import Any

from pi_event_search.core import cursors
from pi_event_search.core.authz import Scope
from pi_event_search.core.filters import Filters
from pi_event_search.core.wire import SessionInfo
from pi_event_search.events.neighbours import Tree
from pi_event_search.query.asof import as_of, unfiltered
from pi_event_search.query.ranking import fragment_filters
from pi_event_search.query.search import event_filters, session_filters, snapshot
from pi_event_search.query.sessioninfo import about
from pi_event_search.query.shapes import node_from_row

MAX_LIMIT = 200
_NO_TIME = -(1 << 62)  # the place of a session none of whose events has a time: last


def sessions(conn: sqlite3.Connection, filters: Filters, scope: Scope, *, limit: int = 50,
             cursor: str | None = None, reveal: bool = False
             ) -> tuple[list[SessionInfo], str | None]:
    limit = max(1, min(limit, MAX_LIMIT))
    key = cursors.key("sessions", asdict(filters), scope.roots, scope.current_session,
                      scope.cutoff)
    with snapshot(conn):
        # Generation 0 in every cursor: a place in the order does not go stale.
        at = cursors.decode(cursor, key, 0, other="filters", again="list") if cursor else None
        if at is not None and len(at) != 2:
            raise cursors.StaleCursor("not a cursor issued by this server")
        rows = _page(conn, filters, scope, limit + 1, at)
        more = len(rows) > limit
        rows = rows[:limit]
        infos = about(conn, scope, [r["sid"] for r in rows], reveal=reveal)
        out: list[SessionInfo] = []
        for r in rows:
            base = infos.get(r["sid"])
            first = Tree(conn, scope, r["session_id"]).root(r["sid"])
            if base is not None and first is not None:
                out.append({**base, "kinds": _kinds(conn, scope, r["sid"], r["session_id"]),
                            "first": node_from_row(first)})
    last = rows[-1] if rows else None
    return out, (cursors.encode(key, 0, last["k"], last["sid"]) if more and last else None)


def _page(conn: sqlite3.Connection, f: Filters, scope: Scope, limit: int,
          at: tuple[int, ...] | None) -> list[dict[str, Any]]:
    """The sessions of the page: row id, session id and place in the order (`k`, the newest
    event's time). The visible events are walked newest first (the time index): a session's
    first event in this walk is its newest, so the sessions come in the list's order, and the
    walk stops at the last one wanted. A first page reads the few thousand newest events, not
    every event of the index; a later page starts its walk at its cursor and asks each session
    it meets whether it has a newer event (then it was listed before)."""
    chosen, params = session_filters(f, scope)
    where = " AND ".join(chosen)
    start: list[str] = []
    start_params: list[Any] = []
    if at is not None and at[0] != _NO_TIME:
        start.append(" AND (e.ts_ms <= ? OR e.ts_ms IS NULL)")
        start_params.append(at[0])
    elif at is not None:
        start.append(" AND e.ts_ms IS NULL")
    held, held_params = _holding(conn, f, scope)
    checks: list[str] = []
    check_params: list[Any] = []
    if f.until_ms is not None:  # its first event before `until`
        checks.append(f"EXISTS (SELECT 1 FROM events e WHERE e.sid = s.sid AND {where} "
                      "AND e.ts_ms < ?)")
        check_params += [*params, f.until_ms]
    if held:
        checks.append(held)
        check_params += held_params
    seen: set[int] = set()
    out: list[dict[str, Any]] = []
    walk = conn.execute(
        f"SELECT e.sid AS sid, e.ts_ms AS ts, s.session_id AS session_id FROM events e "
        f"JOIN sessions s ON s.sid = e.sid WHERE {where}{''.join(start)} "
        "ORDER BY e.ts_ms DESC, e.sid DESC", [*params, *start_params])
    for r in walk:
        sid = r["sid"]
        if sid in seen:
            continue
        seen.add(sid)
        k = _NO_TIME if r["ts"] is None else r["ts"]
        if f.since_ms is not None and k < f.since_ms:  # every later session's newest is older
            break
        if at is not None and ((k == at[0] and sid >= at[1])
                               or _newer(conn, where, params, sid, at[0])):
            continue  # listed before the cursor
        if checks and not conn.execute(
                f"SELECT 1 FROM sessions s WHERE s.sid = ? AND {' AND '.join(checks)}",
                [sid, *check_params]).fetchone():
            continue
        out.append({"sid": sid, "k": k, "session_id": r["session_id"]})
        if len(out) == limit:
            break
    return out


def _newer(conn: sqlite3.Connection, where: str, params: list[Any], sid: int, k: int) -> bool:
    """Whether the session has a visible event newer than `k` (a place in the order)."""
    newer = "e.ts_ms IS NOT NULL" if k == _NO_TIME else "e.ts_ms > ?"
    return conn.execute(
        f"SELECT 1 FROM events e JOIN sessions s ON s.sid = e.sid WHERE e.sid = ? AND {where} "
        f"AND {newer} LIMIT 1", [sid, *params, *([] if k == _NO_TIME else [k])]).fetchone() \
        is not None


def _holding(conn: sqlite3.Connection, f: Filters, scope: Scope) -> tuple[str | None, list[Any]]:
    """The event-level filters as a condition on the session `s`: it holds an event passing
    them (None when there are none)."""
    event_level = dataclasses.replace(f, cwd=None, since_ms=None, until_ms=None)
    if event_level == Filters(session_id=f.session_id):
        return None, []
    own = as_of(conn, scope, f.session_id)
    where, params = event_filters(conn, unfiltered(event_level) if own else event_level, scope)
    if own:
        own.filter_sql(event_level, where, params)
    kind_where, kind_params = fragment_filters(f)
    if kind_where:
        where.append("EXISTS (SELECT 1 FROM fragments f WHERE f.eid = e.eid AND "
                     f"{' AND '.join(kind_where)})")
        params += kind_params
    return f"EXISTS (SELECT 1 FROM events e WHERE e.sid = s.sid AND {' AND '.join(where)})", params


def _kinds(conn: sqlite3.Connection, scope: Scope, sid: int, session_id: str) -> dict[str, int]:
    """The session's events by kind: an event counts once for each kind it holds."""
    where, params = scope.event_sql(session_id)
    counts: Counter[str] = Counter()
    for r in conn.execute(f"SELECT e.kinds AS kinds, count(*) AS n FROM events e "
                          f"JOIN sessions s ON s.sid = e.sid WHERE e.sid = ? AND {where} "
                          "GROUP BY e.kinds", [sid, *params]):
        for kind in dict.fromkeys(k for k in r["kinds"].split(",") if k):
            counts[kind] += r["n"]
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
