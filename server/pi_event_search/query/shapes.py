"""Events rows as the wire's shapes: the one column list to select, and the Hit, Node and Source
built from a row carrying it (docs/protocol.md)."""

from __future__ import annotations

import sqlite3
from functools import lru_cache
from pathlib import Path

from pi_event_search.core.eventref import format_ref
from pi_event_search.core.wire import Hit, Masked, Node, Source


def event_columns(branch_state: str = "e.branch_state") -> str:
    """The columns of an events row `e` joined to its session `s`, named as the builders below
    read them. `branch_state`: the SQL for that column (a caller's own session shows states as of
    its cutoff)."""
    return (
        "e.eid AS eid, e.sid AS sid, e.seq AS seq, e.entry_id AS entry_id, "
        "e.parent_id AS parent_id, e.entry_type AS entry_type, e.role AS role, "
        "e.tool_name AS tool_name, e.is_error AS is_error, e.kinds AS kinds, e.ts AS ts, "
        "e.preview AS preview, e.line AS line, e.byte_off AS byte_off, e.sub AS sub, "
        f"e.lhash AS lhash, {branch_state} AS branch_state, e.context_role AS context_role, "
        "e.selection_state AS selection_state, s.session_id AS session_id, s.cwd AS cwd, "
        "s.name AS session_name, s.path AS session_path")


EVENT_COLUMNS = event_columns()


def source(path: str, line: int, byte_off: int) -> Source:
    return {"path": path, "uri": _uri(path), "line": line, "byteOffset": byte_off}


@lru_cache(maxsize=4096)
def _uri(path: str) -> str:
    """A page of hits names few files, each many times; pathlib's as_uri is not cheap."""
    return Path(path).as_uri()


def hit_from_row(row: sqlite3.Row, *, fragment_id: str, kind: str,
                 snippet: tuple[str, list[list[int]]], score: float,
                 session_name: str | None, matched: list[str] | None = None,
                 missing: list[str] | None = None) -> Hit:
    """A hit from a row of EVENT_COLUMNS; `session_name` as the caller may know it
    (Scope.session_name); `matched`, `missing` and `context` as the query's terms fell."""
    text, matches = snippet
    return {
        "ref": format_ref(row["session_id"], row["entry_id"]), "sessionId": row["session_id"],
        "entryId": row["entry_id"], "fragmentId": fragment_id, "kind": kind,
        "entryType": row["entry_type"], "role": row["role"], "toolName": row["tool_name"],
        "isError": bool(row["is_error"]), "timestamp": row["ts"],
        "snippet": text, "matches": matches, "score": round(float(score), 4),
        "cwd": row["cwd"], "sessionName": session_name, "branchState": row["branch_state"],
        "contextRole": row["context_role"], "selectionState": row["selection_state"],
        "source": source(row["session_path"], row["line"], row["byte_off"]),
        "matched": matched or [], "missing": missing or [],
    }


def node_from_row(row: sqlite3.Row) -> Node:
    """A node from a row of EVENT_COLUMNS."""
    kinds = row["kinds"]
    return {
        "ref": format_ref(row["session_id"], row["entry_id"]), "sessionId": row["session_id"],
        "entryId": row["entry_id"], "entryType": row["entry_type"], "role": row["role"],
        "kind": (kinds.split(",")[0] or None) if kinds else None, "timestamp": row["ts"],
        "preview": row["preview"], "branchState": row["branch_state"],
        "source": source(row["session_path"], row["line"], row["byte_off"]),
    }


MASKED: Masked = {"masked": True}
