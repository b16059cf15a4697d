"""The visible, filtered fragments an FTS5 MATCH finds: the SQL every part of a search shares
(evidence.py's candidates, ranking.py's rest after the scored order, groups.py's counts).

Authorization, the caller's places and the filters are part of each query's SQL, never applied to
rows afterwards.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from typing import Any

from pi_event_search.core.filters import Filters
from pi_event_search.query.parse import Parsed

# bm25 is negative (lower is better); multiplying by a weight > 1 promotes a kind.
KIND_WEIGHTS = {
    "session.name": 2.0, "user.text": 1.5, "bash.command": 1.4, "tool.call": 1.3,
    "assistant.text": 1.2, "summary.compaction": 1.1, "summary.branch": 1.1,
    "tool.result": 1.0, "bash.output": 1.0, "custom.message": 0.8, "custom.entry": 0.8,
    "context.edit": 1.0, "system.prompt": 0.5,
}
# fragment text, then meta (tool name, error state, custom type), then identifier parts
COLUMN_WEIGHTS = (1.0, 0.5, 0.0)
_TOKEN = re.compile(r"[^\W_]+")


@dataclass(frozen=True, slots=True)
class Query:
    """What a ranking is computed from: the parsed query, its filters (SQL on e and s with their
    parameters), and the FTS5 phrases of the caller's scope that narrow the matches."""

    parsed: Parsed
    filters: Filters
    where: list[str]
    params: list[Any]
    scope_fts: str | None
    relax: bool = False  # partial hits too (match "any"); False: every term per event ("all")


def words(match: str) -> str:
    """`match` held by the words as written (the text and meta columns), not by identifier parts
    (the parts column: an expansion, evidence.py weighs it apart)."""
    return f"{{text meta}} : ({match})"


def narrowed(q: Query, match: str) -> str:
    """`match` in the words as written, narrowed inside FTS5 to the caller's places and the
    filtered tools: the MATCH expression every query of one ranking uses."""
    narrow = " AND ".join(x for x in (q.scope_fts, _tool_phrases(q.filters)) if x)
    return f"{words(match)} AND {narrow}" if narrow else words(match)


def narrowed_any(q: Query, match: str) -> str:
    """`match` as it stands (its own columns), narrowed as `narrowed` narrows."""
    narrow = " AND ".join(x for x in (q.scope_fts, _tool_phrases(q.filters)) if x)
    return f"({match}) AND {narrow}" if narrow else match


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


def window(conn: sqlite3.Connection, match: str, q: Query, rowids: str, limit: int | None
            ) -> list[tuple[Any, ...]]:
    """(fid, eid, kind, size, ts_ms, sid, stored length, NULL) of the visible, filtered matching
    fragments in a rowid range, newest first (SQLite drives from FTS5 and stops at the limit).
    The size is the stored text's (compressed text counted at 2.5 characters a byte), read from
    the record header without loading the text (evidence.Row's shape; its ending is not read)."""
    kind_where, kind_params = fragment_filters(q.filters)
    extra = (" AND " + " AND ".join(kind_where)) if kind_where else ""
    sql = f"""
      SELECT f.fid, f.eid, f.kind,
             length(f.text) * (CASE typeof(f.text) WHEN 'blob' THEN 2.5 ELSE 1.0 END), e.ts_ms,
             e.sid, length(f.text), NULL
      FROM fts JOIN fragments f ON f.fid = fts.rowid JOIN events e ON e.eid = f.eid
      JOIN sessions s ON s.sid = e.sid
      WHERE fts MATCH ? AND {rowids} AND {' AND '.join(q.where)}{extra}
      ORDER BY fts.rowid DESC{f' LIMIT {int(limit)}' if limit else ''}"""
    return tuples(conn).execute(sql, [match, *q.params, *kind_params]).fetchall()


# Fragment kinds a search matches only when its kind filter names them.
OPT_IN_KINDS = ["system.prompt"]


def fragment_filters(f: Filters) -> tuple[list[str], list[Any]]:
    """Clauses on the fragment `f`: its kind, not a call or result of an excluded tool (the
    fragment's meta is the tool's name, with " error" after a failed result's), and no custom
    entry's text of a type outside the server's registry (its meta is the custom type)."""
    where: list[str] = []
    params: list[Any] = []
    if f.kinds:
        where.append(f"f.kind IN ({','.join('?' * len(f.kinds))})")
        params += f.kinds
    else:  # system prompts match only when asked for: every session repeats them
        where.append(f"f.kind NOT IN ({','.join('?' * len(OPT_IN_KINDS))})")
        params += OPT_IN_KINDS
    if f.exclude_tools:
        names = [*f.exclude_tools, *(f"{t} error" for t in f.exclude_tools)]
        where.append("NOT (f.kind IN ('tool.call', 'tool.result') "
                     f"AND f.meta IN ({','.join('?' * len(names))}))")
        params += names
    where.append(f"(f.kind <> 'custom.entry' OR f.meta IN "
                 f"({','.join('?' * len(f.custom_types))}))")
    params += f.custom_types
    return where, params


def tuples(conn: sqlite3.Connection) -> sqlite3.Cursor:
    """A cursor yielding plain tuples: a window is hundreds of rows, each made a NamedTuple next to
    its SELECT (read by name), where sqlite3.Row objects would cost more than the FTS5 lookup."""
    cur = conn.cursor()
    cur.row_factory = None
    return cur
