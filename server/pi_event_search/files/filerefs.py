"""One file's evidence in the index: the visible events that read or changed it, shaped as hits
(which spellings of its path the index may hold is query/filepaths.py's).
"""

from __future__ import annotations

import sqlite3

from pi_event_search.core.authz import Scope
from pi_event_search.core.eventref import format_ref
from pi_event_search.core.wire import FileHit
from pi_event_search.query.hits import source

EVENT_COLUMNS = (
    "e.eid AS eid, e.sid AS sid, e.entry_id AS entry_id, e.entry_type AS entry_type, "
    "e.role AS role, e.tool_name AS tool_name, e.is_error AS is_error, e.ts AS ts, "
    "e.line AS line, e.byte_off AS byte_off, e.sub AS sub, e.lhash AS lhash, "
    "e.branch_state AS branch_state, e.context_role AS context_role, "
    "e.selection_state AS selection_state, s.session_id AS session_id, s.cwd AS cwd, "
    "s.name AS session_name, s.path AS session_path")
SNIPPET_WINDOW = 400  # raw characters looked at after the mark
SNIPPET_CHARS = 200


def file_hit(conn: sqlite3.Connection, scope: Scope, row: sqlite3.Row, *, fragment_id: str,
             kind: str, text: str, mark: str | None, relation: str, label: str,
             score: float) -> FileHit:
    """The search Hit shape (docs/protocol.md) plus the file relation and its label; the
    snippet is cut from `text` around the first occurrence of `mark`, which is its match."""
    snippet, matches = _snippet(text, mark)
    return {
        "ref": format_ref(row["session_id"], row["entry_id"]),
        "sessionId": row["session_id"], "entryId": row["entry_id"], "fragmentId": fragment_id,
        "kind": kind, "entryType": row["entry_type"], "role": row["role"],
        "toolName": row["tool_name"], "isError": bool(row["is_error"]), "timestamp": row["ts"],
        "snippet": snippet, "matches": matches, "score": round(score, 4), "cwd": row["cwd"],
        "sessionName": scope.session_name(conn, row["session_id"], row["session_name"]),
        "branchState": row["branch_state"], "contextRole": row["context_role"],
        "selectionState": row["selection_state"],
        "source": source(row["session_path"], row["line"], row["byte_off"]),
        "relation": relation, "label": label,
    }


def _snippet(text: str, mark: str | None) -> tuple[str, list[list[int]]]:
    """Whitespace collapsed, at most SNIPPET_CHARS code points, `mark` inside and matched."""
    at = text.find(mark) if mark else -1
    if at < 0 or not mark:
        return _cut(_fold(text[:SNIPPET_WINDOW]), 0, 0, len(text) > SNIPPET_WINDOW)
    head = _fold(text[max(0, at - SNIPPET_CHARS // 3):at])
    if head and text[at - 1].isspace():
        head += " "
    head = ("…" + head.lstrip()) if at > SNIPPET_CHARS // 3 else head.lstrip()
    body = _fold(mark)
    tail = text[at + len(mark):at + len(mark) + SNIPPET_WINDOW]
    rest = (" " if tail[:1].isspace() else "") + _fold(tail)
    more = at + len(mark) + SNIPPET_WINDOW < len(text)
    return _cut(head + body + rest, len(head), len(head) + len(body), more)


def _fold(text: str) -> str:
    return " ".join(text.split())


def _cut(text: str, start: int, end: int, more: bool) -> tuple[str, list[list[int]]]:
    if len(text) > SNIPPET_CHARS:
        text, more = text[:SNIPPET_CHARS].rstrip(), True
    matches = [[start, min(end, len(text))]] if end > start and start < len(text) else []
    return text + ("…" if more else ""), matches
