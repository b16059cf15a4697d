"""One fixed order of a query's events, walked page by page from a position.

The order is evidence.py's, its best events read again for their meaning (meaning.py): every
candidate event scored once, best first, remembered while the index is unchanged, so that every
page of one question reads the same list and a later page costs what a slice does. After it,
so that walking to the end lists every event holding every term, come the other events holding
every term in one fragment, newest first, read in windows of fids (an event's fragments have
consecutive fids, so a window never splits one).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass

from pi_event_search.index import memo
from pi_event_search.query import meaning
from pi_event_search.query.evidence import Row, Scored, every_term, scored, spans, weights

# Their home is matches.py; search.py and groups.py import them from here too.
from pi_event_search.query.matches import Query as Query
from pi_event_search.query.matches import fragment_filters as fragment_filters
from pi_event_search.query.matches import narrowed_any, window

TOP = 1 << 62  # above every fid
WINDOW = 500  # fragments of the rest read at a time


@dataclass(frozen=True, slots=True)
class Position:
    """Where a page starts: the events shown before it, and in the rest after the scored order,
    the fid every fragment still to read lies below."""

    shown: int = 0
    below: int = TOP


@dataclass(frozen=True, slots=True)
class Picked:
    """One event chosen for a page: its evidence fragment, its session's row id (grouping by
    session), and the query terms (labels) it holds and lacks (None: a listing of the newest
    events, no query)."""

    eid: int
    fid: int
    sid: int = 0
    matched: tuple[str, ...] | None = None
    missing: tuple[str, ...] = ()


def order(conn: sqlite3.Connection, q: Query) -> list[Scored]:
    """The query's scored order; remembered while the index is unchanged."""
    known = memo.of(conn, "order")
    w = weights()
    key = (q.parsed, repr(q.filters), tuple(q.where), tuple(map(repr, q.params)), q.scope_fts,
           q.relax, repr(w), os.environ.get("PI_EVENT_SEARCH_MEANING"))
    found: list[Scored] | None = known.get(key)
    if found is None:
        found = scored(conn, q, exact=not q.relax)
        found = known[key] = meaning.reranked(conn, q.parsed, found, w)
    return found


def ranked(conn: sqlite3.Connection, q: Query, at: Position, limit: int
           ) -> tuple[list[Picked], Position | None]:
    """Up to `limit` events from `at`, and the position after them (None at the end)."""
    picked: list[Picked] = []
    for pick, after in walk(conn, q, at):
        if len(picked) == limit:
            return picked, at
        picked.append(pick)
        at = after
    return picked, None


def walk(conn: sqlite3.Connection, q: Query, at: Position
         ) -> Iterator[tuple[Picked, Position]]:
    """Every event from `at` on in the one order, each with the position just after it."""
    events = order(conn, q)
    shown = at.shown
    for i in range(shown, len(events)):
        s = events[i]
        shown = i + 1
        yield Picked(s.eid, s.fid, s.sid, s.matched, s.missing), Position(shown)
    expr = rest(conn, q)
    if expr is None:
        return
    listed = {s.eid for s in events}
    labels = tuple(t.label for t in q.parsed.terms)
    below = at.below
    while True:
        rows = window(conn, expr, q, f"fts.rowid < {int(below)}", WINDOW)
        if not rows:
            return
        window_rows = [Row._make(row) for row in rows]
        firsts = spans(conn, sorted({r.eid for r in window_rows}))  # one query a window
        for r in window_rows:
            first = firsts[r.eid][0]
            if r.eid not in listed:
                listed.add(r.eid)
                shown += 1
                yield Picked(r.eid, r.fid, r.sid, labels, ()), Position(shown, first)
            below = min(below, first)
        if len(rows) < WINDOW:
            return


def rest(conn: sqlite3.Connection, q: Query) -> str | None:
    """The expression of the events after the scored order: those holding every term."""
    expr = every_term(conn, q)
    return None if expr is None else narrowed_any(q, expr)

