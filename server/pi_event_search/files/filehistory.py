"""A file's Pi history: the visible events with evidence that they changed or read it. Changes
come before reads, newest first within each; an event that did both is listed once, as a change.
"""

from __future__ import annotations

import posixpath
import sqlite3
from dataclasses import dataclass
from typing import Any

from pi_event_search.core import cursors
from pi_event_search.core.authz import Scope
from pi_event_search.core.wire import FileHistoryResult, FileHit
from pi_event_search.files.filerefs import file_hit
from pi_event_search.index import store, textcodec
from pi_event_search.query.filepaths import TargetFile, target_file
from pi_event_search.query.shapes import EVENT_COLUMNS
from pi_event_search.source.pitools import FILE_CHANGE_TOOLS, FILE_READ_TOOLS

MAX_LIMIT = 200
PATH_KEYS = ("path: ", "file_path: ")  # how tools.normalize_arguments prints a path argument


@dataclass(slots=True)
class History:
    hits: list[FileHit]
    next_cursor: str | None
    changed: int
    read: int

    def wire(self) -> FileHistoryResult:
        return {"hits": self.hits, "nextCursor": self.next_cursor,
                "counts": {"changed": self.changed, "read": self.read}}


def file_history(conn: sqlite3.Connection, path: str, scope: Scope, *, limit: int = 50,
                 cursor: str | None = None) -> History:
    target = target_file(conn, path, scope.roots)
    if target is None:
        return History([], None, 0, 0)
    limit = max(1, min(limit, MAX_LIMIT))
    key = cursors.key(target.path, scope.roots, scope.current_session, scope.cutoff)
    gen = store.generation(conn)
    at = cursors.decode(cursor, key, gen, other="file", again="ask") if cursor else (0,)
    if len(at) != 1:
        raise cursors.StaleCursor("not a cursor issued by this server")
    offset = at[0]
    where, params = _where(target, scope)
    # The group counts ride along as window functions: one pass over the file's evidence.
    rows = conn.execute(
        f"SELECT {EVENT_COLUMNS}, max(r.op = 'changed') AS changed, "
        "group_concat(r.op || ' ' || r.label) AS tags, count(*) OVER () AS total, "
        "sum(max(r.op = 'changed')) OVER () AS changed_total FROM file_refs r "
        "JOIN events e ON e.eid = r.eid JOIN sessions s ON s.sid = e.sid "
        f"WHERE {where} GROUP BY e.eid ORDER BY changed DESC, e.ts_ms DESC, e.eid DESC "
        "LIMIT ? OFFSET ?", [*params, limit + 1, offset]).fetchall()
    frags = _fragments(conn, [row["eid"] for row in rows[:limit]])
    hits = [_hit(conn, scope, target, row, frags.get(row["eid"], []), offset + i)
            for i, row in enumerate(rows[:limit])]
    changed, total = (rows[0]["changed_total"], rows[0]["total"]) if rows else \
        _counts(conn, where, params) if offset else (0, 0)
    more = len(rows) > limit
    return History(hits, cursors.encode(key, gen, offset + limit) if more else None, changed,
                   total - changed)


def _counts(conn: sqlite3.Connection, where: str, params: list[Any]) -> tuple[int, int]:
    """(changed, total) events, for a page past the end."""
    row = conn.execute(
        "SELECT coalesce(sum(changed), 0) AS changed, count(*) AS total FROM (SELECT "
        "max(r.op = 'changed') AS changed FROM file_refs r JOIN events e ON e.eid = r.eid "
        f"JOIN sessions s ON s.sid = e.sid WHERE {where} GROUP BY e.eid)", params).fetchone()
    return row["changed"], row["total"]


def _fragments(conn: sqlite3.Connection, eids: list[int]) -> dict[int, list[sqlite3.Row]]:
    """The fragments of a page's events, in one query."""
    out: dict[int, list[sqlite3.Row]] = {}
    for f in conn.execute(
            "SELECT eid, frag, kind, text, meta FROM fragments "
            f"WHERE eid IN ({','.join('?' * len(eids))}) ORDER BY fid", eids):
        out.setdefault(f["eid"], []).append(f)
    return out


def _where(target: TargetFile, scope: Scope) -> tuple[str, list[Any]]:
    paths, path_params = target.sql("r.path")
    auth, auth_params = scope.event_sql(None)
    return f"{paths} AND {auth}", [*path_params, *auth_params]


def _hit(conn: sqlite3.Connection, scope: Scope, target: TargetFile, row: sqlite3.Row,
         frags: list[sqlite3.Row], rank: int) -> FileHit:
    op = "changed" if row["changed"] else "read"
    tags = set(row["tags"].split(","))
    label = "recorded" if f"{op} recorded" in tags else "derived"
    frag_id, kind, text, mark = _evidence(conn, target, row, frags, op, label)
    return file_hit(conn, scope, row, fragment_id=frag_id, kind=kind, text=text, mark=mark,
                    relation=f"file-{op}", label=label, score=1.0 / (1 + rank))


def _evidence(conn: sqlite3.Connection, target: TargetFile, row: sqlite3.Row,
              frags: list[sqlite3.Row], op: str, label: str) -> tuple[str, str, str, str]:
    """The fragment that shows the evidence: the tool call naming the file, else a summary, else
    the event's first fragment. Also the text to mark in its snippet."""
    tools = FILE_CHANGE_TOOLS if op == "changed" else FILE_READ_TOOLS
    base = posixpath.basename(target.path)
    if label == "derived":
        for f in frags:
            if f["kind"] != "tool.call" or f["meta"] not in tools:
                continue
            text = textcodec.unpack(f["text"], conn)
            raw = _path_argument(text)
            if raw is not None and target.holds(raw, row["cwd"]):
                return f["frag"], f["kind"], text, raw
    for f in frags:
        if f["kind"].startswith("summary.") or label == "derived":
            return f["frag"], f["kind"], textcodec.unpack(f["text"], conn), base
    return row["entry_type"], row["entry_type"], "", base


def _path_argument(text: str) -> str | None:
    for line in text.split("\n", 8)[1:8]:
        for key in PATH_KEYS:
            if line.startswith(key):
                return line[len(key):]
    return None
