"""One fixed ranking of a query's events, walked page by page from a position.

Ranking every match of a common word costs a pass over all of them (bm25 needs each phrase's
document frequency), so the matches are ranked in tiers: the newest CANDIDATES visible matching
fragments form the first tier, the next CANDIDATES the second, and so on. A tier never splits an
event (an event's fragments have consecutive fids, so a tier ends with the whole of its last
event). Events ranked by relevance inside a tier; tiers newest first; the events matching the
words as typed (phase 0) before those matching only through an inflection (phase 1). A page
starts where the cursor's Position says and reads only the tiers it needs, so the order is the
same for any page size and a later page costs about what the first does.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pi_event_search.query.matches import COLUMN_WEIGHTS, KIND_WEIGHTS, tuples, window, words

# Their home is matches.py; search.py and groups.py import them from here too.
from pi_event_search.query.matches import Query as Query
from pi_event_search.query.matches import fragment_filters as fragment_filters
from pi_event_search.query.matches import narrowed as narrowed
from pi_event_search.query.relax import relaxed

CANDIDATES = 1000  # matching fragments per tier (README, Ranking)
TOP = 1 << 62  # above every fid: the first tier's bound
PARTIAL = 2  # the phase of the partial matches, after every event holding all terms
_NO_TIME = -(1 << 62)


@dataclass(frozen=True, slots=True)
class Position:
    """Where a page starts: the phase, the tier (its fragments have fid < below), the events of
    that tier already shown, and the hits shown before (the next hit's rank)."""

    phase: int = 0
    below: int = TOP
    skip: int = 0
    rank: int = 0


@dataclass(frozen=True, slots=True)
class Picked:
    """One event chosen for a page: its evidence fragment, whether it matched only through an
    inflection of a query word (tier 1), and its session's row id (grouping by session)."""

    eid: int
    fid: int
    tier: int = 0
    sid: int = 0
    # A partial hit (tier 2, relax.py): the query terms it holds, lacks, and its turn supplied.
    matched: tuple[str, ...] | None = None
    missing: tuple[str, ...] = ()
    turn: tuple[str, ...] = ()
    turn_eid: int | None = None


def ranked(conn: sqlite3.Connection, q: Query, at: Position, limit: int
           ) -> tuple[list[Picked], Position | None]:
    """Up to `limit` events from `at`, and the position after them (None at the end)."""
    picked: list[Picked] = []
    for pick, after in _walk(conn, q, at):
        if len(picked) == limit:
            return picked, at
        picked.append(pick)
        at = after
    return picked, None


def _walk(conn: sqlite3.Connection, q: Query, at: Position
          ) -> Iterator[tuple[Picked, Position]]:
    """Every event from `at` on, each with the position just after it."""
    phase, below, skip, rank = at.phase, at.below, at.skip, at.rank
    while phase < PARTIAL:
        match = q.parsed.match if phase == 0 else q.parsed.inflected
        if match is None:
            break
        events, lower = _tier(conn, q, match, below, phase)
        for i in range(skip, len(events)):
            rank += 1
            eid, fid, sid = events[i]
            yield Picked(eid, fid, phase, sid), Position(phase, below, i + 1, rank)
        if lower is not None:
            below, skip = lower, 0
        elif phase == 0 and q.parsed.inflected is not None:
            phase, below, skip = 1, TOP, 0
        else:
            phase, below, skip = PARTIAL, TOP, 0
    if not q.relax or q.parsed.match is None:
        return
    partial = relaxed(conn, q)
    for i in range(skip, len(partial)):
        rank += 1
        r = partial[i]
        yield (Picked(r.eid, r.fid, PARTIAL, r.sid, r.matched, r.missing, r.turn, r.turn_eid),
               Position(PARTIAL, TOP, i + 1, rank))


def walk(conn: sqlite3.Connection, q: Query, at: Position
         ) -> Iterator[tuple[Picked, Position]]:
    """Every event from `at` on in the one order, each with the position just after it (the
    grouping by session reads the order this way)."""
    return _walk(conn, q, at)


def _tier(conn: sqlite3.Connection, q: Query, match: str, below: int, phase: int
          ) -> tuple[list[tuple[int, int, int]], int | None]:
    """The ranked (eid, fid, sid) of the tier below `below`, and the next tier's bound (None
    when this is the last tier). Phase 1 leaves out events that match the words as typed."""
    full = narrowed(q, match)
    rows = window(conn, full, q, f"fts.rowid < {int(below)}", CANDIDATES)
    lower = None
    if len(rows) >= CANDIDATES:
        last_fid, last_eid = rows[-1][0], rows[-1][1]
        first = conn.execute("SELECT min(fid) AS fid FROM fragments WHERE eid = ?",
                             (last_eid,)).fetchone()["fid"]
        if first < last_fid:  # the rest of the tier's last event
            rows += window(conn, full, q, f"fts.rowid >= {int(first)} AND "
                                           f"fts.rowid < {int(last_fid)}", None)
        lower = first
    if not rows:
        return [], None
    scored = _scored(conn, match, rows)
    if phase == 1:
        exact = _matching(conn, narrowed(q, str(q.parsed.match)), rows)
        typed = {eid for fid, eid, *_ in rows if fid in exact}
        scored = [r for r in scored if r[1] not in typed]
    return _coalesce(scored), lower


def _scored(conn: sqlite3.Connection, match: str, rows: list[tuple[Any, ...]]
            ) -> list[tuple[Any, ...]]:
    """(fid, eid, kind, score, ts_ms, sid) of a tier's rows (fid, eid, kind, size, ts_ms, sid).

    bm25 needs each phrase's document frequency, which FTS5 counts with a pass over every match
    in the index (2.4 ms for `error` at 1 GB, more for phrases and prefixes): a full tier of
    common words is ranked by kind and length instead, as bm25 would rank it if each term
    occurred once. A last, smaller tier gets bm25 of the query's own phrases (a second, cheap
    FTS5 query over the tier's rowid range; the directory and tool phrases that narrowed the
    window are not scored)."""
    if len(rows) >= CANDIDATES:
        avg = sum(size for _, _, _, size, _, _ in rows) / len(rows) or 1.0
        return [(fid, eid, kind, -2.2 / (1.3 + 0.9 * size / avg), ts, sid)
                for fid, eid, kind, size, ts, sid in rows]
    fids = [fid for fid, *_ in rows]
    bm25 = dict(tuples(conn).execute(
        f"SELECT rowid, bm25(fts, {', '.join(map(str, COLUMN_WEIGHTS))}) FROM fts "
        "WHERE fts MATCH ? AND rowid BETWEEN ? AND ?", (words(match), min(fids), max(fids))
    ).fetchall())
    return [(fid, eid, kind, bm25.get(fid, 0.0), ts, sid) for fid, eid, kind, _, ts, sid in rows]


def _matching(conn: sqlite3.Connection, match: str, rows: list[tuple[Any, ...]]) -> set[int]:
    """The fids among a tier's rowid range that `match` matches."""
    fids = [fid for fid, *_ in rows]
    return {r["fid"] for r in conn.execute(
        "SELECT rowid AS fid FROM fts WHERE fts MATCH ? AND rowid BETWEEN ? AND ?",
        (match, min(fids), max(fids)))}


def _coalesce(rows: list[tuple[Any, ...]]) -> list[tuple[int, int, int]]:
    """One (eid, fid, sid) per event, its strongest fragment as evidence; best score first, then
    newest, then eid. Scores are negative (lower is better); a kind weight > 1 promotes."""
    best: dict[int, tuple[float, int, int, int]] = {}
    weights = KIND_WEIGHTS
    for fid, eid, kind, raw, ts, sid in rows:
        score = raw * weights.get(kind, 1.0)
        old = best.get(eid)
        if old is None or score < old[0] or (score == old[0] and fid < old[1]):
            best[eid] = (score, fid, _NO_TIME if ts is None else ts, sid)
    order = sorted(best.items(), key=lambda kv: (kv[1][0], -kv[1][2], kv[0]))
    return [(eid, v[1], v[3]) for eid, v in order]
