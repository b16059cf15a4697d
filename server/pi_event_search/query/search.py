"""Full-text search: filters, pages and hits (the ranking itself is ranking.py's).

Authorization and filters are part of the SQL (never applied to results afterwards), so limits,
pages and counts only ever see what the caller may see.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any

from pi_event_search.core import cursors, secrets
from pi_event_search.core.authz import Scope, canonical, under_sql
from pi_event_search.core.cursors import StaleCursor as StaleCursor  # its home; imported from here too
from pi_event_search.core.filters import Filters as Filters  # its home; imported from here too
from pi_event_search.core.wire import DidYouMean, Hit
from pi_event_search.index import store
from pi_event_search.query.asof import AsOf, as_of, unfiltered
from pi_event_search.query.expansions import camel_parts, synonyms
from pi_event_search.query.filepaths import relative_tail, targets
from pi_event_search.query.inflect import forms
from pi_event_search.query.parse import Parsed, parse
from pi_event_search.query.prefixes import expand
from pi_event_search.query.ranking import Picked, Position, Query, fragment_filters, ranked
from pi_event_search.query.shapes import EVENT_COLUMNS, hit_from_row
from pi_event_search.query.snippets import snippet
from pi_event_search.query.spelling import Visible, corrected

MAX_LIMIT = 200


@dataclass(slots=True)
class Page:
    hits: list[Hit]
    next_cursor: str | None
    did_you_mean: DidYouMean | None = None


def _in(column: str, values: list[str], where: list[str], params: list[Any]) -> None:
    if values:
        where.append(f"{column} IN ({','.join('?' * len(values))})")
        params.extend(values)


def session_filters(f: Filters, scope: Scope) -> tuple[list[str], list[Any]]:
    """The clauses that choose sessions (`s`): authorization first, then sessionId and cwd."""
    auth, params = scope.event_sql(f.session_id)
    where = [auth]
    if f.session_id:
        where.append("s.session_id = ?")
        params.append(f.session_id)
    if f.cwd:
        sql, values = under_sql("s.cwd_canon", canonical(f.cwd) or f.cwd)
        where.append(sql)
        params += values
    return where, params


def event_filters(conn: sqlite3.Connection, f: Filters, scope: Scope) -> tuple[list[str], list[Any]]:
    """WHERE clauses on `e` (events) and `s` (sessions), authorization first."""
    where, params = session_filters(f, scope)
    _in("e.role", f.roles, where, params)
    _in("e.tool_name", [secrets.scrub(t) for t in f.tools], where, params)  # stored masked
    _in("e.branch_state", f.branch_states, where, params)
    _in("e.selection_state", f.selection_states, where, params)
    if f.since_ms is not None:
        where.append("e.ts_ms >= ?")
        params.append(f.since_ms)
    if f.until_ms is not None:
        where.append("e.ts_ms < ?")
        params.append(f.until_ms)
    if f.errors:
        where.append("e.is_error = 1")
    if f.secrets:
        where.append("e.secrets IS NOT NULL")
    if f.file:
        where.append(_file_clause(conn, f.file, scope, params))
    return where, params


def _file_clause(conn: sqlite3.Connection, path: str, scope: Scope, params: list[Any]) -> str:
    """Events with evidence about the file (or directory) a typed path names: resolved against
    the roots when relative; for a trusted caller (no roots), the end of the stored path."""
    found = targets(conn, path, scope.roots)
    if found:
        parts = []
        for target in found:
            sql, values = target.under_sql("r.path")
            parts.append(sql)
            params += values
        cond = " OR ".join(parts)
    elif (tail := relative_tail(path)) is not None and scope.roots is None:
        params += [-len(tail) - 1, "/" + tail]
        cond = "substr(r.path, ?) = ?"
    else:
        cond = "0"
    return f"EXISTS (SELECT 1 FROM file_refs r WHERE r.eid = e.eid AND ({cond}))"


@dataclass(slots=True)
class Question:
    """One search as its queries see it: the parsed text, the WHERE clauses on `e` and `s` (the
    caller's scope and the filters) and the ranking (None when the text has no searchable term:
    the newest events are listed instead)."""

    parsed: Parsed
    filters: Filters
    where: list[str]
    params: list[Any]
    own: AsOf | None  # the caller's own session, as of its cutoff
    ranking: Query | None


def question(conn: sqlite3.Connection, parsed: Parsed, filters: Filters, scope: Scope,
             relax: bool = False) -> Question:
    own = as_of(conn, scope, filters.session_id)
    where, params = event_filters(conn, unfiltered(filters) if own else filters, scope)
    if own:
        own.filter_sql(filters, where, params)
    ranking = None if parsed.match is None else Query(
        expand(conn, parsed), filters, where, params, scope.fts_filter(), relax)
    return Question(parsed, filters, where, params, own, ranking)


def understood(conn: sqlite3.Connection, query: str, parsed: Parsed, filters: Filters,
               scope: Scope, exact: bool) -> tuple[Parsed, DidYouMean | None]:
    """The query as searched (its words the index holds nowhere the caller may search
    corrected, unless `exact`, which only suggests), and what was corrected."""
    did = None
    if parsed.terms:
        where, params = scope.searchable_sql()
        kinds, values = fragment_filters(Filters(custom_types=filters.custom_types))
        did = corrected(conn, query, parsed, Visible([where, *kinds], [*params, *values],
                                                     scope.fts_filter()))
    if did is not None and not exact:
        parsed = parse(did["query"], prefix_last=parsed.prefix is not None,
                       settled=parsed.settled)
    return parsed, did


@contextmanager
def snapshot(conn: sqlite3.Connection) -> Iterator[None]:
    """One read transaction: a page, its hits and the generation come from one snapshot, so a
    writer committing in between can neither shift a page nor swap a fragment under a fid."""
    mine = not conn.in_transaction
    if mine:
        conn.execute("BEGIN")
    try:
        yield
    finally:
        if mine and conn.in_transaction:
            conn.execute("COMMIT")


def search(conn: sqlite3.Connection, query: str, filters: Filters, scope: Scope, *,
           limit: int = 20, cursor: str | None = None, prefix_last: bool = False,
           exact: bool = False, settled: bool = False) -> Page:
    """A page of hits; `exact` (protocol `match: "all"`): only events holding every word."""
    limit = max(1, min(limit, MAX_LIMIT))
    parsed = parse(query, prefix_last=prefix_last, settled=settled)
    key = cursors.key(query, asdict(filters), scope.roots, scope.current_session, scope.cutoff,
                      prefix_last, exact, parsed.settled)
    with snapshot(conn):
        gen = store.generation(conn)
        at = cursors.decode(cursor, key, gen, other="query or filters",
                            again="search") if cursor else ()
        parsed, did = understood(conn, query, parsed, filters, scope, exact)
        q = question(conn, parsed, filters, scope, relax=not exact)
        if q.ranking is None:
            if query.strip():
                return Page([], None)
            offset = position(at, 1)[0]
            picked = _recent(conn, filters, q.where, q.params, limit + 1, offset)
            after: tuple[int, ...] | None = (offset + limit,) if len(picked) > limit else None
            picked = picked[:limit]
        else:
            start = Position(*position(at, 2)) if at else Position()
            offset = start.shown
            picked, end = ranked(conn, q.ranking, start, limit)
            after = None if end is None else (end.shown, end.below)
        hits = hits_of(conn, q, picked, range(offset, offset + len(picked)), scope)
    return Page(hits, cursors.encode(key, gen, *after) if after else None, did)


def position(at: tuple[int, ...], size: int) -> tuple[int, ...]:
    """A cursor's position, checked to have the shape this kind of page uses."""
    if not at:
        return (0,) * size
    if len(at) != size:
        raise StaleCursor("not a cursor issued by this server")
    return at


def recent_sql(f: Filters, where: list[str], params: list[Any]) -> tuple[str, list[Any]]:
    """Empty query: the newest events passing the filters (eid, sid and fid = the evidence,
    their first fragment passing the fragment filters), newest first, then the higher eid."""
    kind_where, kind_params = fragment_filters(f)
    kinds = (" AND " + " AND ".join(kind_where)) if kind_where else ""
    sql = f"""
      SELECT e.eid AS eid, e.sid AS sid,
        (SELECT f.fid FROM fragments f WHERE f.eid = e.eid{kinds} ORDER BY f.fid LIMIT 1) AS fid
      FROM events e JOIN sessions s ON s.sid = e.sid
      WHERE {' AND '.join(where)} AND fid IS NOT NULL
      ORDER BY e.ts_ms DESC, e.eid DESC"""
    return sql, [*kind_params, *params]


def _recent(conn: sqlite3.Connection, f: Filters, where: list[str], params: list[Any],
            limit: int, offset: int) -> list[Picked]:
    sql, values = recent_sql(f, where, params)
    rows = conn.execute(f"{sql} LIMIT ? OFFSET ?", [*values, limit, offset]).fetchall()
    return [Picked(r["eid"], r["fid"], r["sid"]) for r in rows]


def hits_of(conn: sqlite3.Connection, q: Question, picked: list[Picked], ranks: Iterable[int],
            scope: Scope) -> list[Hit]:
    """The hits of these picked events in one query (the same predicate again), snippets cut
    for them only; `ranks`: each one's 0-based position in the whole order (its score)."""
    if not picked:
        return []
    parsed = q.parsed
    sql = f"""
      SELECT f.fid AS fid, f.frag AS frag, f.kind AS kind, f.text AS text, {EVENT_COLUMNS}
      FROM fragments f JOIN events e ON e.eid = f.eid JOIN sessions s ON s.sid = e.sid
      WHERE f.fid IN ({','.join('?' * len(picked))}) AND {' AND '.join(q.where)}"""
    rows = {r["fid"]: r for r in conn.execute(sql, [*(p.fid for p in picked), *q.params])}
    loose = _loose_words(parsed) if parsed.match is not None else ()
    names: dict[str, str | None] = {}
    hits = []
    for p, rank in zip(picked, ranks, strict=True):
        r = rows.get(p.fid)
        if r is None:
            continue
        score = 0.0 if parsed.match is None else 1.0 / (1 + rank)
        # The model's score draws on statistics of the whole index, sessions the caller may
        # not see included: its value would tell how often a term occurs there. The score
        # shown is the rank, nothing more.
        sid = r["session_id"]
        if sid not in names:
            names[sid] = scope.session_name(conn, sid, r["session_name"])
        hit = hit_from_row(
            r, fragment_id=r["frag"], kind=r["kind"], score=score, session_name=names[sid],
            snippet=snippet(r["text"], loose, parsed.prefix, None, conn, parts=True),
            matched=list(p.matched) if p.matched is not None else [],
            missing=list(p.missing))
        hits.append(q.own.patch(hit) if q.own else hit)
    return hits


def _loose_words(parsed: Parsed) -> tuple[str, ...]:
    """The words a hit's snippet marks: the query's, their inflections, their synonyms and a
    camelCase term's parts of three letters or more (`marker3x4`'s 3, x and 4 would mark every
    digit and letter of the text)."""
    out = dict.fromkeys(parsed.forms)
    for t in parsed.terms:
        if t.word:
            out.update(dict.fromkeys(f for w in synonyms(t.word) for f in forms(w)))
        out.update(dict.fromkeys(p for p in camel_parts(t.raw) or () if len(p) > 2))
    return tuple(out)
