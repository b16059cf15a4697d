"""Full-text search: rank fragments with weighted bm25, coalesce them per event, page honestly.

Authorization and filters are part of the SQL (never applied to results afterwards), so limits,
pages and counts only ever see what the caller may see.
"""

from __future__ import annotations

import base64
import hashlib
import sqlite3
from dataclasses import asdict, dataclass
from typing import Any, NamedTuple

import orjson

from pi_event_search import store
from pi_event_search.asof import as_of, unfiltered
from pi_event_search.authz import Scope
from pi_event_search.filters import Filters as Filters  # its home; imported from here too
from pi_event_search.hits import hit_from_row, snippets
from pi_event_search.query import parse

# bm25 is negative (lower is better); multiplying by a weight > 1 promotes a kind.
KIND_WEIGHTS = {
    "session.name": 2.0, "user.text": 1.5, "bash.command": 1.4, "tool.call": 1.3,
    "assistant.text": 1.2, "summary.compaction": 1.1, "summary.branch": 1.1,
    "tool.result": 1.0, "bash.output": 1.0, "custom.message": 0.8,
}
COLUMN_WEIGHTS = (1.0, 0.5)  # fragment text, then meta (tool name, error state, custom type)
MAX_LIMIT = 200
CANDIDATES = 1000  # a query matching more fragments ranks the newest this many (README)


class StaleCursor(ValueError):
    pass


@dataclass(slots=True)
class Page:
    hits: list[dict[str, Any]]
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
        root = f.cwd.rstrip("/") or "/"
        where.append("(s.cwd_canon = ? OR substr(s.cwd_canon, 1, ?) = ?)")
        prefix = root if root.endswith("/") else root + "/"
        params += [root, len(prefix), prefix]
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
        root = path.rstrip("/") or "/"
        prefix = root if root.endswith("/") else root + "/"
        params += [root, len(prefix), prefix]
        cond = "(r.path = ? OR substr(r.path, 1, ?) = ?)"
    else:
        tail = "/" + path.lstrip("./")
        params += [path, -len(tail), tail]
        cond = "(r.path = ? OR substr(r.path, ?) = ?)"
    return f"EXISTS (SELECT 1 FROM file_refs r WHERE r.eid = e.eid AND {cond})"


def _weight_sql() -> str:
    cases = " ".join(f"WHEN '{k}' THEN {w}" for k, w in KIND_WEIGHTS.items())
    return f"(CASE f.kind {cases} ELSE 1.0 END)"


# What hits.hit_from_row reads, selected by both queries below (read by name, in any order).
_HIT_COLUMNS = (
    "e.eid, e.entry_id, e.entry_type, e.role, e.tool_name, e.is_error, e.ts, e.line, e.byte_off, "
    "e.branch_state, e.context_role, e.selection_state, s.session_id, s.cwd, s.name, s.path")


class _Candidate(NamedTuple):
    """An event that answers the query, with its evidence: the best fragment."""

    row: sqlite3.Row
    score: float
    fid: int
    frag: str
    kind: str


def search(conn: sqlite3.Connection, query: str, filters: Filters, scope: Scope, *,
           limit: int = 20, cursor: str | None = None, prefix_last: bool = False) -> Page:
    limit = max(1, min(limit, MAX_LIMIT))
    parsed = parse(query, prefix_last=prefix_last)
    key = _cursor_key(query, filters, scope, prefix_last)
    gen = store.generation(conn)
    offset = _decode_cursor(cursor, key, gen) if cursor else 0
    own = as_of(conn, scope, filters.session_id)  # the caller's own session, as of its cutoff
    where, params = event_filters(unfiltered(filters) if own else filters, scope)
    if own:
        own.filter_sql(filters, where, params)
    if parsed.match is None:
        if query.strip():
            return Page([], None)
        rows = _recent(conn, filters, where, params, limit + 1, offset)
    else:
        rows = _ranked(conn, parsed.match, filters, where, params, limit + 1, offset,
                       scope.fts_filter())
    more = len(rows) > limit
    rows = rows[:limit]
    texts = snippets(conn, parsed.match, [c.fid for c in rows])
    # bm25 draws on statistics of the whole index, sessions the caller may not see included: its
    # value would tell how often a term occurs there. The score shown is the rank, nothing more.
    hits = [hit_from_row(c.row, 1.0 / (1 + offset + i) if parsed.match is not None else c.score,
                         c.frag, c.kind, texts[c.fid]) for i, c in enumerate(rows)]
    for hit in hits:
        hit["sessionName"] = scope.session_name(conn, hit["sessionId"], hit["sessionName"])
        if own:
            own.patch(hit)
    return Page(hits, _encode_cursor(key, gen, offset + limit) if more else None)


def _ranked(conn: sqlite3.Connection, match: str, f: Filters, where: list[str],
            params: list[Any], limit: int, offset: int, scope_fts: str | None
            ) -> list[_Candidate]:
    kind_where: list[str] = []
    kind_params: list[Any] = []
    _in("f.kind", f.kinds, kind_where, kind_params)
    extra = (" AND " + " AND ".join(kind_where)) if kind_where else ""
    # Candidates: visible, filtered matches, newest first, at most CANDIDATES of them (bm25 is
    # computed only for those). Deep pages rank every match.
    deep = offset + limit > CANDIDATES // 2
    window = "" if deep else f"ORDER BY fts.rowid DESC LIMIT {CANDIDATES}"
    sql = f"""
      WITH scored AS (
        SELECT f.eid, f.fid, f.frag, f.kind,
               bm25(fts, {COLUMN_WEIGHTS[0]}, {COLUMN_WEIGHTS[1]}) * {_weight_sql()} AS score
        FROM fts JOIN fragments f ON f.fid = fts.rowid JOIN events e ON e.eid = f.eid
        JOIN sessions s ON s.sid = e.sid
        WHERE fts MATCH ? AND {' AND '.join(where)}{extra} {window}),
      best AS (SELECT *, row_number() OVER (PARTITION BY eid ORDER BY score, fid) AS rn
               FROM scored)
      SELECT {_HIT_COLUMNS}, best.fid AS fid, best.frag AS frag, best.kind AS kind,
             -best.score AS score FROM best
      JOIN events e ON e.eid = best.eid JOIN sessions s ON s.sid = e.sid
      WHERE rn = 1 ORDER BY best.score, e.ts_ms DESC, e.eid LIMIT ? OFFSET ?"""
    full = f"({match}) AND {scope_fts}" if scope_fts else match
    rows = conn.execute(sql, [full, *params, *kind_params, limit, offset]).fetchall()
    return [_Candidate(r, r["score"], r["fid"], r["frag"], r["kind"]) for r in rows]


def _recent(conn: sqlite3.Connection, f: Filters, where: list[str], params: list[Any],
            limit: int, offset: int) -> list[_Candidate]:
    """Empty query: the newest events passing the filters, evidence = their first fragment."""
    kind_where: list[str] = []
    kind_params: list[Any] = []
    _in("f.kind", f.kinds, kind_where, kind_params)
    kinds = (" AND " + " AND ".join(kind_where)) if kind_where else ""
    sql = f"""
      SELECT {_HIT_COLUMNS}, 0.0 AS score,
        (SELECT f.fid FROM fragments f WHERE f.eid = e.eid{kinds} ORDER BY f.fid LIMIT 1) AS fid
      FROM events e JOIN sessions s ON s.sid = e.sid
      WHERE {' AND '.join(where)} AND fid IS NOT NULL
      ORDER BY e.ts_ms DESC, e.eid DESC LIMIT ? OFFSET ?"""
    rows = conn.execute(sql, [*kind_params, *params, limit, offset]).fetchall()
    out = []
    for r in rows:
        frag = conn.execute("SELECT frag, kind FROM fragments WHERE fid = ?", (r["fid"],)
                            ).fetchone()
        out.append(_Candidate(r, r["score"], r["fid"], frag["frag"], frag["kind"]))
    return out


def _cursor_key(query: str, f: Filters, scope: Scope, prefix_last: bool) -> str:
    blob = orjson.dumps([query, asdict(f), scope.roots, scope.current_session, scope.cutoff,
                         prefix_last])
    return hashlib.blake2b(blob, digest_size=8).hexdigest()


def _encode_cursor(key: str, gen: int, offset: int) -> str:
    return base64.urlsafe_b64encode(orjson.dumps({"k": key, "g": gen, "o": offset})).decode()


def _decode_cursor(cursor: str, key: str, gen: int) -> int:
    try:
        data = orjson.loads(base64.urlsafe_b64decode(cursor.encode()))
        offset = int(data["o"])
        same = data["k"] == key
        fresh = int(data["g"]) == gen
    except (ValueError, KeyError, TypeError) as exc:
        raise StaleCursor("not a cursor issued by this server") from exc
    if not same:
        raise StaleCursor("the cursor belongs to another query or filters")
    if not fresh:
        raise StaleCursor("the index changed since this cursor was issued; search again")
    return offset
