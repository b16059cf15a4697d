"""The sessions table: a session's row created from its header, its state and tip updated as its
file is applied, the row dropped with everything that hangs off it. (A session's entry rows are
rows.py's; the files table, a file's checkpoint, is ingest.py's.)"""

from __future__ import annotations

import os
import sqlite3
from typing import Any

from pi_event_search.core import secrets
from pi_event_search.core.authz import canonical, place_tokens, with_places
from pi_event_search.index.fulltext import FullText
from pi_event_search.index.textcodec import unpack
from pi_event_search.source.jsonl import header_cwd, header_source, header_title


def upsert_session(conn: sqlite3.Connection, header: dict[str, Any], path: str) -> int:
    cwd = header_cwd(header)
    version = header.get("version") if isinstance(header.get("version"), int) else 1
    created = header.get("timestamp") if isinstance(header.get("timestamp"), str) else None
    parent = header.get("parentSession")  # a path; Oh My Pi's forks record the parent's id
    if not isinstance(parent, str) or not parent:
        legacy = header.get("branchedFrom")  # the predecessor of parentSession (reference §3)
        parent = legacy if isinstance(legacy, str) and legacy else _nested_in(path)
    title = header_title(header)
    name = secrets.scan(title)[0] if title is not None else None
    cur = conn.execute(
        "INSERT INTO sessions (session_id, path, cwd, cwd_canon, version, created, parent_path, "
        "name, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (header["id"], path, cwd, canonical(cwd), version, created, parent, name,
         header_source(header)))
    assert cur.lastrowid is not None
    return cur.lastrowid


def _nested_in(path: str) -> str | None:
    """The session a subagent transcript belongs to: Oh My Pi keeps them at
    `<dir>/<session>/<AgentId>.jsonl`, beside `<dir>/<session>.jsonl`."""
    parent = os.path.dirname(path) + ".jsonl"
    return parent if os.path.isfile(parent) else None


def mark_ok(conn: sqlite3.Connection, sid: int) -> None:
    conn.execute("UPDATE sessions SET state = 'ok', error = NULL WHERE sid = ?", (sid,))


def mark_stale(conn: sqlite3.Connection, path: str, error: str) -> None:
    """The rows stay (last known good); the state says why they are no longer current."""
    conn.execute("UPDATE sessions SET state = 'stale', error = ? WHERE path = ?", (error, path))


def set_tip(conn: sqlite3.Connection, sid: int, leaf: str | None, entries: int,
            name: tuple[str | None] | None) -> None:
    """After applying entries: the leaf, the entry count, and the name when an entry set one
    (`name`: a 1-tuple, since None is a name too: a cleared one)."""
    extra, params = (", name = ?", [name[0]]) if name is not None else ("", [])
    conn.execute(f"UPDATE sessions SET leaf = ?, entries = ?, state = 'ok', error = NULL{extra} "
                 "WHERE sid = ?", (leaf, entries, *params, sid))


def drop_session(conn: sqlite3.Connection, fts: FullText, sid: int) -> None:
    """Delete a session's rows. The contentless FTS index forgets a row only when told its
    original text, which the fragments table keeps (compressed)."""
    eids = "SELECT eid FROM events WHERE sid = ?"
    canon = conn.execute("SELECT cwd_canon FROM sessions WHERE sid = ?", (sid,)).fetchone()
    places = place_tokens(canon["cwd_canon"] if canon else None)
    old = conn.execute(f"SELECT fid, text, meta FROM fragments WHERE eid IN ({eids})", (sid,))
    fts.delete([(r["fid"], unpack(r["text"], conn), with_places(r["meta"], places))
                for r in old.fetchall()])
    conn.execute(f"DELETE FROM fragments WHERE eid IN ({eids})", (sid,))
    conn.execute(f"DELETE FROM relations WHERE eid IN ({eids})", (sid,))
    conn.execute(f"DELETE FROM file_refs WHERE eid IN ({eids})", (sid,))
    conn.execute("DELETE FROM calls WHERE sid = ?", (sid,))
    conn.execute("DELETE FROM events WHERE sid = ?", (sid,))
    conn.execute("DELETE FROM sessions WHERE sid = ?", (sid,))
