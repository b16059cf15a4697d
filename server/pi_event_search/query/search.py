"""Full-text search: rank fragments with weighted bm25, coalesce them per event, page honestly.

Authorization and filters are part of the SQL (never applied to results afterwards), so limits,
pages and counts only ever see what the caller may see.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import asdict, dataclass
from typing import Any

from pi_event_search.core import cursors
from pi_event_search.core.authz import Scope, under_sql
from pi_event_search.core.cursors import StaleCursor as StaleCursor  # its home; imported from here too
from pi_event_search.core.filters import Filters as Filters  # its home; imported from here too
from pi_event_search.core.wire import Hit
from pi_event_search.index import store
from pi_event_search.query.asof import as_of, unfiltered
from pi_event_search.query.parse import Parsed, parse
from pi_event_search.query.prefixes import expand
from pi_event_search.query.shapes import EVENT_COLUMNS, hit_from_row
from pi_event_search.query.snippets import snippet

# bm25 is negative (lower is better); multiplying by a weight > 1 promotes a kind.
KIND_WEIGHTS = {
    "session.name": 2.0, "user.text": 1.5, "bash.command": 1.4, "tool.call": 1.3,
    "assistant.text": 1.2, "summary.compaction": 1.1, "summary.branch": 1.1,
    "tool.result": 1.0, "bash.output": 1.0, "custom.message": 0.8,
}
COLUMN_WEIGHTS = (1.0, 0.5)  # fragment text, then meta (tool name, error state, custom type)
MAX_LIMIT = 200
CANDIDATES = 1000  # a query matching more fragments ranks the newest this many (README)
_TOKEN = re.compile(r"[^\W_]+")


@dataclass(slots=True)
class Page:
    hits: list[Hit]
    next_cursor: str | None


def _in(column: str, values: list[str], where: list[str], params: list[Any]) -> None:
    if values:
        where.append(f"{column} IN ({','.join('?' * len(values))})")
        params.extend(values)


def event_filters(f: Filters, scope: Scope) -> tuple[list[str], list[Any]]:
    """WHERE clauses on `e` (events) and `s` (sessions), authorization first."""
    auth, params = scope.event_sql(f.session_id)
    where = [auth]
    if f.session_id:
        where.append("s.session_id = ?")
        params.append(f.session_id)
    if f.cwd:
        sql, values = under_sql("s.cwd_canon", f.cwd)
        where.append(sql)
        params += values
    _in("e.role", f.roles, where, params)
    _in("e.tool_name", f.tools, where, params)
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
    if f.file:
        where.append(_file_clause(f.file, params))
    return where, params


def _file_clause(path: str, params: list[Any]) -> str:
    if path.startswith("/"):
        cond, values = under_sql("r.path", path)
        params += values
    else:
        tail = "/" + path.lstrip("./")
        params += [path, -len(tail), tail]
        cond = "(r.path = ? OR substr(r.path, ?) = ?)"
    return f"EXISTS (SELECT 1 FROM file_refs r WHERE r.eid = e.eid AND {cond})"


@dataclass(frozen=True, slots=True)
class Picked:
    """One event chosen for a page: its evidence fragment and whether it matched only through an
    inflection of a query word (tier 1)."""

    eid: int
    fid: int
    tier: int = 0


def search(conn: sqlite3.Connection, query: str, filters: Filters, scope: Scope, *,
           limit: int = 20, cursor: str | None = None, prefix_last: bool = False) -> Page:
    limit = max(1, min(limit, MAX_LIMIT))
    parsed = parse(query, prefix_last=prefix_last)
    key = cursors.key(query, asdict(filters), scope.roots, scope.current_session, scope.cutoff,
                      prefix_last)
    # One read transaction: the page, its hits and the generation come from one snapshot, so a
    # writer committing in between can neither shift a page nor swap a fragment under a fid.
    mine = not conn.in_transaction
    if mine:
        conn.execute("BEGIN")
    try:
        gen = store.generation(conn)
        offset = cursors.decode(cursor, key, gen, other="query or filters",
                                again="search") if cursor else 0
        own = as_of(conn, scope, filters.session_id)  # the caller's own session, as of its cutoff
        where, params = event_filters(unfiltered(filters) if own else filters, scope)
        if own:
            own.filter_sql(filters, where, params)
        if parsed.match is None:
            if query.strip():
                return Page([], None)
            picked = _recent(conn, filters, where, params, limit + 1, offset)
        else:
            picked = _ranked(conn, expand(conn, parsed), filters, where, params, scope.fts_filter(),
                             offset + limit + 1)[offset:]
        more = len(picked) > limit
        hits = _hits(conn, picked[:limit], parsed, where, params, offset, scope)
        if own:
            for hit in hits:
                own.patch(hit)
    finally:
        if mine and conn.in_transaction:
            conn.execute("COMMIT")
    return Page(hits, cursors.encode(key, gen, offset + limit) if more else None)


def _ranked(conn: sqlite3.Connection, parsed: Parsed, f: Filters, where: list[str],
            params: list[Any], scope_fts: str | None, need: int) -> list[Picked]:
    """Events matching the words as typed, best first; then, when those are fewer than the
    page needs, the events that match only through inflections (README, Ranking)."""
    assert parsed.match is not None
    deep = need > CANDIDATES // 2
    exact = _coalesce(_scored(conn, parsed.match, f, where, params, scope_fts, deep))
    picked = [Picked(eid, fid) for eid, fid in exact[:need]]
    if len(exact) >= need or parsed.inflected is None:
        return picked
    seen = {eid for eid, _ in exact}
    more = _coalesce(_scored(conn, parsed.inflected, f, where, params, scope_fts, deep))
    return picked + [Picked(eid, fid, 1) for eid, fid in more if eid not in seen][:need]


def _scored(conn: sqlite3.Connection, match: str, f: Filters, where: list[str],
            params: list[Any], scope_fts: str | None, deep: bool) -> list[tuple[Any, ...]]:
    """(fid, eid, kind, score, ts_ms) of the candidates.

    bm25 needs each phrase's document frequency, which FTS5 counts with a pass over every match
    in the index (2.4 ms for `error` at 1 GB, more for phrases and prefixes): a full window of
    common words is ranked by kind and length instead, as bm25 would rank it if each term
    occurred once. Smaller windows get bm25 of the query's own phrases (a second, cheap FTS5
    query over the candidates' rowid range; the directory and tool phrases that narrowed the
    window are not scored)."""
    narrow = " AND ".join(x for x in (scope_fts, _tool_phrases(f)) if x)
    full = f"({match}) AND {narrow}" if narrow else match
    rows = _window(conn, full, f, where, params, deep)
    if not rows:
        return rows
    if len(rows) >= CANDIDATES and not deep:
        avg = sum(size for _, _, _, size, _ in rows) / len(rows) or 1.0
        return [(fid, eid, kind, -2.2 / (1.3 + 0.9 * size / avg), ts)
                for fid, eid, kind, size, ts in rows]
    fids = [fid for fid, *_ in rows]
    lo, hi = min(fids), max(fids)
    bm25 = dict(_tuples(conn).execute(
        f"SELECT rowid, bm25(fts, {COLUMN_WEIGHTS[0]}, {COLUMN_WEIGHTS[1]}) FROM fts "
        "WHERE fts MATCH ? AND rowid BETWEEN ? AND ?", (match, lo, hi)).fetchall())
    return [(fid, eid, kind, bm25.get(fid, 0.0), ts) for fid, eid, kind, _, ts in rows]


# Kinds whose FTS meta column always names the event's tool (tool.call fragments name their own
# call, which need not be the event's first): a tool filter on them can narrow inside FTS5.
_TOOL_META_KINDS = frozenset(("tool.result", "bash.command", "bash.output"))


def _tool_phrases(f: Filters) -> str | None:
    if not f.tools or not f.kinds or not set(f.kinds) <= _TOOL_META_KINDS:
        return None
    phrases = [" ".join(_TOKEN.findall(t)) for t in f.tools]
    if not all(phrases):
        return None
    return "meta : (" + " OR ".join('"' + p.replace('"', '""') + '"' for p in phrases) + ")"


def _window(conn: sqlite3.Connection, match: str, f: Filters, where: list[str],
            params: list[Any], deep: bool) -> list[tuple[Any, ...]]:
    """(fid, eid, kind, size, ts_ms) of the visible, filtered matching fragments: the newest
    CANDIDATES of them in FTS rowid order (SQLite drives from FTS5 and stops there), or every
    one for deep pages. The size is the stored text's (compressed text counted at 2.5
    characters a byte), read from the record header without loading the text."""
    kind_where, kind_params = _fragment_filters(f)
    extra = (" AND " + " AND ".join(kind_where)) if kind_where else ""
    window = "" if deep else f"ORDER BY fts.rowid DESC LIMIT {CANDIDATES}"
    sql = f"""
      SELECT f.fid, f.eid, f.kind,
             length(f.text) * (CASE typeof(f.text) WHEN 'blob' THEN 2.5 ELSE 1.0 END), e.ts_ms
      FROM fts JOIN fragments f ON f.fid = fts.rowid JOIN events e ON e.eid = f.eid
      JOIN sessions s ON s.sid = e.sid
      WHERE fts MATCH ? AND {' AND '.join(where)}{extra} {window}"""
    return _tuples(conn).execute(sql, [match, *params, *kind_params]).fetchall()


def _fragment_filters(f: Filters) -> tuple[list[str], list[Any]]:
    """Clauses on the fragment `f`: its kind, and not a call or result of an excluded tool (the
    fragment's meta is the tool's name, with " error" after a failed result's)."""
    where: list[str] = []
    params: list[Any] = []
    _in("f.kind", f.kinds, where, params)
    if f.exclude_tools:
        names = [*f.exclude_tools, *(f"{t} error" for t in f.exclude_tools)]
        where.append("NOT (f.kind IN ('tool.call', 'tool.result') "
                     f"AND f.meta IN ({','.join('?' * len(names))}))")
        params += names
    return where, params


def _tuples(conn: sqlite3.Connection) -> sqlite3.Cursor:
    """A cursor yielding plain tuples: the window is up to CANDIDATES rows per query, each
    unpacked right next to its SELECT, where building sqlite3.Row objects would cost more than
    the FTS5 lookup."""
    cur = conn.cursor()
    cur.row_factory = None
    return cur


_NO_TIME = -(1 << 62)


def _coalesce(rows: list[tuple[Any, ...]]) -> list[tuple[int, int]]:
    """One (eid, fid) per event, its strongest fragment as evidence; best score first, then
    newest, then eid. Scores are negative (lower is better); a kind weight > 1 promotes."""
    best: dict[int, tuple[float, int, int]] = {}
    weights = KIND_WEIGHTS
    for fid, eid, kind, raw, ts in rows:
        score = raw * weights.get(kind, 1.0)
        old = best.get(eid)
        if old is None or score < old[0] or (score == old[0] and fid < old[1]):
            best[eid] = (score, fid, _NO_TIME if ts is None else ts)
    order = sorted(best.items(), key=lambda kv: (kv[1][0], -kv[1][2], kv[0]))
    return [(eid, v[1]) for eid, v in order]


def _recent(conn: sqlite3.Connection, f: Filters, where: list[str], params: list[Any],
            limit: int, offset: int) -> list[Picked]:
    """Empty query: the newest events passing the filters, evidence = their first fragment."""
    kind_where, kind_params = _fragment_filters(f)
    kinds = (" AND " + " AND ".join(kind_where)) if kind_where else ""
    sql = f"""
      SELECT e.eid,
        (SELECT f.fid FROM fragments f WHERE f.eid = e.eid{kinds} ORDER BY f.fid LIMIT 1) AS fid
      FROM events e JOIN sessions s ON s.sid = e.sid
      WHERE {' AND '.join(where)} AND fid IS NOT NULL
      ORDER BY e.ts_ms DESC, e.eid DESC LIMIT ? OFFSET ?"""
    rows = conn.execute(sql, [*kind_params, *params, limit, offset]).fetchall()
    return [Picked(r["eid"], r["fid"]) for r in rows]


def _hits(conn: sqlite3.Connection, picked: list[Picked], parsed: Parsed, where: list[str],
          params: list[Any], offset: int, scope: Scope) -> list[Hit]:
    """The page's hits in one query (the same predicate again), snippets cut for them only."""
    if not picked:
        return []
    sql = f"""
      SELECT f.fid AS fid, f.frag AS frag, f.kind AS kind, f.text AS text, {EVENT_COLUMNS}
      FROM fragments f JOIN events e ON e.eid = f.eid JOIN sessions s ON s.sid = e.sid
      WHERE f.fid IN ({','.join('?' * len(picked))}) AND {' AND '.join(where)}"""
    rows = {r["fid"]: r for r in conn.execute(sql, [*(p.fid for p in picked), *params])}
    names: dict[str, str | None] = {}
    hits = []
    for i, p in enumerate(picked):
        r = rows.get(p.fid)
        if r is None:
            continue
        words = parsed.forms if p.tier else parsed.words
        score = 0.0 if parsed.match is None else 1.0 / (1 + offset + i)
        # bm25 draws on statistics of the whole index, sessions the caller may not see
        # included: its value would tell how often a term occurs there. The score shown is the
        # rank, nothing more.
        terms = None if p.tier else len(parsed.words)
        sid = r["session_id"]
        if sid not in names:
            names[sid] = scope.session_name(conn, sid, r["session_name"])
        hits.append(hit_from_row(
            r, fragment_id=r["frag"], kind=r["kind"], score=score, session_name=names[sid],
            snippet=snippet(r["text"], words, parsed.prefix, terms, conn)))
    return hits
