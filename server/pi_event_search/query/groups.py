"""Search results grouped by session: the one event-level ranking (ranking.py), seen per session.

A group's `top` is its session's first hit in the event-level order (the very hit, score and all,
that the event-level search shows at that position); groups come in the order of their tops; a
group's `matches` counts its session's events in the whole event-level result.

A page walks the one order (ranking.py) from its cursor only until it has found one session more
than it shows (the next page starts at that session's top); a later page never shows again a
session whose top was on an earlier page: the sessions of the events before the cursor. `matches`
counts each session's events in the whole order.
"""

from __future__ import annotations

import sqlite3
from dataclasses import asdict, dataclass
from typing import Any

from pi_event_search.core import cursors
from pi_event_search.core.authz import Scope
from pi_event_search.core.filters import Filters
from pi_event_search.core.wire import DidYouMean, Group
from pi_event_search.index import store
from pi_event_search.query.parse import parse
from pi_event_search.query.ranking import (
    TOP,
    Picked,
    Position,
    Query,
    fragment_filters,
    order,
    rest,
    walk,
)
from pi_event_search.query.search import (
    MAX_LIMIT,
    Question,
    hits_of,
    position,
    question,
    recent_sql,
    snapshot,
    understood,
)
from pi_event_search.query.sessioninfo import about


@dataclass(slots=True)
class GroupPage:
    groups: list[Group]
    next_cursor: str | None
    did_you_mean: DidYouMean | None = None


def grouped(conn: sqlite3.Connection, query: str, filters: Filters, scope: Scope, *,
            limit: int = 20, cursor: str | None = None, prefix_last: bool = False,
            reveal: bool = False, exact: bool = False, settled: bool = False) -> GroupPage:
    """A page of `limit` sessions (1..200) of the results of a search."""
    limit = max(1, min(limit, MAX_LIMIT))
    parsed = parse(query, prefix_last=prefix_last, settled=settled)
    key = cursors.key("groupBy", "session", query, asdict(filters), scope.roots,
                      scope.current_session, scope.cutoff, prefix_last, exact, parsed.settled)
    with snapshot(conn):
        gen = store.generation(conn)
        at = cursors.decode(cursor, key, gen, other="query or filters",
                            again="search") if cursor else ()
        parsed, did = understood(conn, query, parsed, filters, scope, exact)
        q = question(conn, parsed, filters, scope, relax=not exact)
        if q.ranking is None:
            if query.strip():
                return GroupPage([], None)
            offset = position(at, 1)[0]
            tops, counts = _recent(conn, q, limit + 1, offset)
            after: tuple[int, ...] | None = (offset + limit,) if len(tops) > limit else None
            tops = tops[:limit]
            ranks = [0] * len(tops)  # the newest events: every score is 0
        else:
            start = Position(*position(at, 2)) if at else Position()
            tops, ranks, end = _ranked(conn, q.ranking, start, limit)
            after = None if end is None else (end.shown, end.below)
            counts = _counts(conn, q.ranking, [p.sid for p in tops])
        groups = _groups(conn, q, scope, tops, ranks, counts, reveal)
    return GroupPage(groups, cursors.encode(key, gen, *after) if after else None, did)


def _groups(conn: sqlite3.Connection, q: Question, scope: Scope, tops: list[Picked],
            ranks: list[int], counts: dict[int, int], reveal: bool) -> list[Group]:
    hits = {h["sessionId"]: h for h in hits_of(conn, q, tops, ranks, scope)}
    sessions = about(conn, scope, [p.sid for p in tops], reveal=reveal)
    out: list[Group] = []
    for p in tops:
        base = sessions.get(p.sid)
        hit = hits.get(base["sessionId"]) if base is not None else None
        if base is not None and hit is not None:
            out.append({**base, "matches": counts.get(p.sid, 1), "top": hit})
    return out


def _ranked(conn: sqlite3.Connection, q: Query, at: Position, limit: int
            ) -> tuple[list[Picked], list[int], Position | None]:
    """The first hit of each of the next `limit` sessions from `at`, their 0-based ranks, and
    the position of the next session's first hit (None when there is none)."""
    seen = _sessions_before(conn, q, at)
    tops: list[Picked] = []
    ranks: list[int] = []
    before = at
    for pick, after in walk(conn, q, at):
        if pick.sid not in seen:
            if len(tops) == limit:
                return tops, ranks, before
            seen.add(pick.sid)
            tops.append(pick)
            ranks.append(after.shown - 1)
        before = after
    return tops, ranks, None


def _matching(q: Query) -> tuple[str, list[Any]]:
    """FROM and WHERE of the visible, filtered fragments a MATCH expression (the first
    parameter) finds, joined to their events `e` and sessions `s`."""
    kind_where, kind_params = fragment_filters(q.filters)
    extra = "".join(f" AND {w}" for w in kind_where)
    return (f"FROM fts JOIN fragments f ON f.fid = fts.rowid JOIN events e ON e.eid = f.eid "
            f"JOIN sessions s ON s.sid = e.sid WHERE fts MATCH ? AND {' AND '.join(q.where)}"
            f"{extra}", [*q.params, *kind_params])


def _sessions_before(conn: sqlite3.Connection, q: Query, at: Position) -> set[int]:
    """The sessions with an event before `at`: in the scored order, and in the rest after it,
    those with a matching fragment at or above the position's fid bound."""
    seen = {s.sid for s in order(conn, q)[:at.shown]}
    expr = rest(conn, q)
    if at.below < TOP and expr is not None:
        frm, params = _matching(q)
        seen |= {r["sid"] for r in conn.execute(
            f"SELECT DISTINCT e.sid AS sid {frm} AND fts.rowid >= ?", [expr, *params, at.below])}
    return seen


def _counts(conn: sqlite3.Connection, q: Query, sids: list[int]) -> dict[int, int]:
    """Each session's events in the whole order: the scored ones, then the rest."""
    if not sids:
        return {}
    wanted = set(sids)
    counts: dict[int, int] = {}
    listed = order(conn, q)
    for s in listed:
        if s.sid in wanted:
            counts[s.sid] = counts.get(s.sid, 0) + 1
    expr = rest(conn, q)
    if expr is not None:
        frm, params = _matching(q)
        scored = {s.eid for s in listed}
        for r in conn.execute(
                f"SELECT e.sid AS sid, e.eid AS eid {frm} "
                f"AND e.sid IN ({','.join('?' * len(sids))}) GROUP BY e.eid",
                [expr, *params, *sids]):
            if r["eid"] not in scored:
                counts[r["sid"]] = counts.get(r["sid"], 0) + 1
    return counts


def _recent(conn: sqlite3.Connection, q: Question, limit: int, offset: int
            ) -> tuple[list[Picked], dict[int, int]]:
    """Empty query: the event-level answer lists the newest events passing the filters; the
    sessions of its events in that order, from the `offset`th, each with its newest one, and how
    many there are. The walk stops at the last session wanted: a first page reads a few hundred
    events, not every event of the index."""
    sql, params = recent_sql(q.filters, q.where, q.params)
    tops: dict[int, Picked] = {}
    skipped: set[int] = set()
    for r in conn.execute(sql, params):
        sid = r["sid"]
        if sid in tops or sid in skipped:
            continue
        if len(skipped) < offset:
            skipped.add(sid)
            continue
        tops[sid] = Picked(r["eid"], r["fid"], sid)
        if len(tops) == limit:
            break
    if not tops:
        return [], {}
    kind_where, kind_params = fragment_filters(q.filters)
    kinds = "".join(f" AND {w}" for w in kind_where)
    counts = {r["sid"]: r["n"] for r in conn.execute(
        f"SELECT e.sid AS sid, count(*) AS n FROM events e JOIN sessions s ON s.sid = e.sid "
        f"WHERE {' AND '.join(q.where)} AND e.sid IN ({','.join('?' * len(tops))}) "
        f"AND EXISTS (SELECT 1 FROM fragments f WHERE f.eid = e.eid{kinds}) GROUP BY e.sid",
        [*q.params, *tops, *kind_params])}
    return list(tops.values()), counts
