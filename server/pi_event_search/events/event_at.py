"""The event at a line of a session file: what an editor showing Pi's JSONL asks for.

Answered from the index's stored line numbers, so every client names entries as the index does
(v1 ordinals, `~<n>` for repeated ids) and none parses JSONL. The line is checked against the file
before it is trusted: a file rewritten since it was indexed answers nothing until it is indexed again.
"""

from __future__ import annotations

import os
import sqlite3

from pi_event_search.core import paths
from pi_event_search.core.authz import Scope
from pi_event_search.core.eventref import format_ref
from pi_event_search.core.wire import EventAt
from pi_event_search.query.shapes import source
from pi_event_search.source import jsonl


def event_at(conn: sqlite3.Connection, path: str, line: int, scope: Scope) -> EventAt | None:
    """The visible event recorded at 0-based `line` of the session file `path` (the first one when
    the line holds several entries); None for a header, a bad line, a line not indexed yet, a file
    that is not an indexed session, or a session the caller may not see."""
    session = _session_at(conn, path, scope)
    if session is None:
        return None
    where, params = scope.event_sql(session["session_id"])
    at = conn.execute(
        "SELECT s.session_id, e.entry_id, s.path, e.line, e.byte_off, e.sub, e.lhash "
        "FROM events e JOIN sessions s ON s.sid = e.sid "
        f"WHERE s.session_id = ? AND e.line = ? AND {where} ORDER BY e.sub LIMIT 1",
        [session["session_id"], line + 1, *params]).fetchone()
    if at is None or not _still_there(at):
        return None
    return {"ref": format_ref(at["session_id"], at["entry_id"]), "sessionId": at["session_id"],
            "entryId": at["entry_id"], "source": source(at["path"], at["line"], at["byte_off"])}


def _session_at(conn: sqlite3.Connection, path: str, scope: Scope) -> sqlite3.Row | None:
    """The visible session (session_id, indexed path) stored at `path`, which may name the file
    through another link than the one the index found it by."""
    real = os.path.realpath(path)
    same = paths.key(path)
    where, params = scope.session_sql("s")
    exact: sqlite3.Row | None = conn.execute(
        f"SELECT s.session_id, s.path FROM sessions s WHERE s.path IN (?, ?) AND {where} LIMIT 1",
        [path, real, *params]).fetchone()
    if exact is not None:
        return exact
    # The same file reached through a linked directory: same name, same real path.
    name = "/" + os.path.basename(path)
    candidate: sqlite3.Row
    for candidate in conn.execute(
            f"SELECT s.session_id, s.path FROM sessions s WHERE substr(s.path, -?) = ? AND {where}",
            [len(name), name, *params]):
        if paths.key(candidate["path"]) == same:
            return candidate
    return None


def _still_there(at: sqlite3.Row) -> bool:
    return jsonl.read_entry(at["path"], at["byte_off"], at["sub"], at["lhash"]) is not None
