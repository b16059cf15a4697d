"""What a session shows of itself in the sessions list and in a group of search results: its
file, name, first prompt, times and event count (docs/protocol.md, SessionInfo and Group).

Everything is counted over the events the caller may see (the caller's own session only up to
its cutoff). The name and the first prompt are recorded text: the index holds them masked
(core/secrets.py) and without control bytes; a person who asked to reveal credentials gets them
read back from the session file, still without control bytes.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from pi_event_search.core import secrets
from pi_event_search.core.authz import Scope
from pi_event_search.core.wire import SessionBase
from pi_event_search.index.textcodec import unpack
from pi_event_search.query.shapes import source
from pi_event_search.source import jsonl
from pi_event_search.source.projection import project

PROMPT_CHARS = 200  # a first prompt is cut here, with `…`
_MASKED = secrets.MARK.split("{", 1)[0]  # "[redacted: ": the index masked something here
_NAME_TRIES = 5  # session_info entries read back, newest first, to find the current name's


def about(conn: sqlite3.Connection, scope: Scope, sids: list[int], *, reveal: bool = False
          ) -> dict[int, SessionBase]:
    """The shared fields of each visible session among `sids` (row ids), by row id."""
    out: dict[int, SessionBase] = {}
    for sid in dict.fromkeys(sids):
        row = conn.execute("SELECT sid, session_id, path, cwd, created, name, parent_path "
                           "FROM sessions WHERE sid = ?", (sid,)).fetchone()
        if row is not None:
            out[sid] = _about(conn, scope, row, reveal)
    return out


def _about(conn: sqlite3.Connection, scope: Scope, row: sqlite3.Row, reveal: bool) -> SessionBase:
    session_id = row["session_id"]
    where, params = scope.event_sql(session_id)

    def events(cond: str, order: str, columns: str = "e.ts AS ts", limit: int = 1
               ) -> list[sqlite3.Row]:
        return conn.execute(
            f"SELECT {columns} FROM events e JOIN sessions s ON s.sid = e.sid "
            f"WHERE e.sid = ? AND {cond} AND {where} ORDER BY {order} LIMIT ?",
            [row["sid"], *params, limit]).fetchall()

    count = conn.execute(f"SELECT count(*) AS n FROM events e JOIN sessions s ON s.sid = e.sid "
                         f"WHERE e.sid = ? AND {where}", [row["sid"], *params]).fetchone()["n"]
    last = events("e.ts_ms IS NOT NULL", "e.ts_ms DESC, e.seq DESC")
    started = row["created"]
    if started is None:
        first = events("e.ts IS NOT NULL", "e.seq")
        started = first[0]["ts"] if first else None
    name = scope.session_name(conn, session_id, row["name"])
    if reveal and name and _MASKED in name:
        name = _revealed_name(row, name, events(
            "e.entry_type = 'session_info'", "e.seq DESC",
            "e.byte_off AS byte_off, e.sub AS sub, e.lhash AS lhash", _NAME_TRIES))
    return {
        "sessionId": session_id, "path": row["path"], "uri": source(row["path"], 1, 0)["uri"],
        "cwd": row["cwd"], "name": secrets.scrub(name, reveal=reveal) if name else None,
        "firstPrompt": _first_prompt(conn, row, events, reveal), "started": started,
        "updated": last[0]["ts"] if last else None, "events": count,
        "parentSession": _parent(conn, scope, row["parent_path"]),
    }


def _first_prompt(conn: sqlite3.Connection, row: sqlite3.Row, events: Any, reveal: bool
                  ) -> str | None:
    """The first user message's text in file order (the first one that has text), whitespace
    collapsed, at most PROMPT_CHARS characters."""
    found = events("e.role = 'user' AND EXISTS (SELECT 1 FROM fragments f WHERE f.eid = e.eid "
                   "AND f.kind = 'user.text')", "e.seq",
                   "e.eid AS eid, e.byte_off AS byte_off, e.sub AS sub, e.lhash AS lhash")
    if not found:
        return None
    ev = found[0]
    texts = [unpack(r["text"], conn) for r in conn.execute(
        "SELECT text FROM fragments WHERE eid = ? AND kind = 'user.text' ORDER BY fid",
        (ev["eid"],))]
    text = " ".join(texts)
    if reveal and _MASKED in text:
        entry = jsonl.read_entry(row["path"], ev["byte_off"], ev["sub"], ev["lhash"])
        if entry is not None:  # else the file changed since: the masked text stays
            event = project(entry, row["cwd"], bounded=False, reveal=True)
            text = " ".join(f.text for f in event.fragments if f.kind == "user.text")
    return _cut(secrets.scrub(jsonl.valid_text(text), reveal=reveal))


def _cut(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= PROMPT_CHARS else flat[:PROMPT_CHARS - 1] + "…"


def _revealed_name(row: sqlite3.Row, masked: str, infos: list[sqlite3.Row]) -> str:
    """The current name as recorded: from the newest session_info entry whose name, masked, is
    the one the index holds."""
    for info in infos:
        entry = jsonl.read_entry(row["path"], info["byte_off"], info["sub"], info["lhash"])
        if entry is None:
            continue
        name = project(entry, row["cwd"], bounded=False, reveal=True).tree.get("name")
        if isinstance(name, str) and secrets.scrub(name) == masked:
            return name
    return masked


def _parent(conn: sqlite3.Connection, scope: Scope, parent_path: str | None) -> str | None:
    """The parent session's path, unless the parent is an indexed session the caller may not
    see (as piEvents/trace masks it). A parent recorded by its id (Oh My Pi's forks) is named by
    its file when indexed."""
    if not parent_path:
        return None
    visible, params = scope.session_sql("s")
    row = conn.execute(
        f"SELECT {visible} AS visible, s.path, s.session_id = ? AS by_id FROM sessions s "
        "WHERE s.path = ? OR s.session_id = (SELECT session_id FROM files WHERE path = ?) "
        "OR s.session_id = ? LIMIT 1",
        [*params, parent_path, parent_path, parent_path, parent_path]).fetchone()
    if row is not None and not row["visible"]:
        return None
    return str(row["path"]) if row is not None and row["by_id"] else parent_path
