"""Exact reads: content comes from the source file at the stored offset, verified, never from
snippets. If the file changed, that one file is indexed again first; if the entry is gone, we
say so.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any, NamedTuple

from pi_event_search.core.authz import Scope
from pi_event_search.core.errors import InvalidRef, NotFound, SourceUnreadable
from pi_event_search.core.eventref import Ref, format_ref
from pi_event_search.core.wire import Fragment, Omitted, ReadEvent, ReadResult
from pi_event_search.events.neighbours import Row, Tree, neighbours
from pi_event_search.query.asof import session_states
from pi_event_search.query.shapes import source
from pi_event_search.source import jsonl
from pi_event_search.source.extractors import EMPTY, Registry
from pi_event_search.source.projection import Omission, project
from pi_event_search.source.tree import EDITED_OUT

MAX_WINDOW = 100_000
MAX_NEIGHBOURS = 50
ORDERS = ("append", "branch")


def _check(offset: int, length: int, before: int, after: int, order: str) -> None:
    """The one check of a read's window and neighbours (params.py checks only their types)."""
    if offset < 0:
        raise InvalidRef("offset must be >= 0")
    if not 1 <= length <= MAX_WINDOW:
        raise InvalidRef(f"length must be in 1..{MAX_WINDOW}")
    for name, value in (("before", before), ("after", after)):
        if not 0 <= value <= MAX_NEIGHBOURS:
            raise InvalidRef(f"{name} must be in 0..{MAX_NEIGHBOURS}")
    if order not in ORDERS:
        raise InvalidRef("order must be 'append' or 'branch'")


class _Located(NamedTuple):
    row: Row  # the event joined to its session
    entry: dict[str, Any] | None  # read back from the source; None when it no longer matches


def read_event(conn: sqlite3.Connection, refresh_file: Callable[[str], object], target: Ref,
               scope: Scope, *, fragment: str | None = None, offset: int = 0,
               length: int = 4000, before: int = 1, after: int = 1,
               order: str = "append", reveal_secrets: bool = False,
               extractors: Registry = EMPTY) -> ReadResult:
    """One event read back from its source line. Credentials are masked unless a person asked
    (`reveal_secrets`): the index never holds them, the source line does. A custom entry's
    `custom.entry` fragments are those of the reader's own registry (`extractors`)."""
    _check(offset, length, before, after, order)
    fragment = fragment or target.fragment
    found = _locate(conn, target, scope)
    if found is not None and found.entry is None:  # the source changed since it was indexed
        refresh_file(found.row["path"])
        found = _locate(conn, target, scope)
    if found is None:
        raise NotFound(str(target))
    row, entry = found
    if entry is None:
        why = jsonl.unreadable(row["path"])
        if why is not None:
            raise SourceUnreadable(f"cannot read {row['path']} ({why}): {target} is indexed, "
                                   "but its session file cannot be read by this server")
        raise NotFound(f"{target} (no longer in its source file {row['path']}; search again)")
    event = project(entry, row["cwd"], bounded=False, reveal=reveal_secrets,
                    extractors=extractors)
    frags = event.fragments
    if fragment is not None:
        frags = [f for f in frags if f.fragment_id == fragment]
        if not frags:
            raise InvalidRef(f"{target} has no fragment {fragment!r}")
    omitted = [_omitted(o) for o in event.omissions]
    out_frags: list[Fragment] = []
    for f in frags:
        window = f.text[offset : offset + length]
        truncated = offset > 0 or offset + length < len(f.text)
        if truncated:
            omitted.append({"field": f.fragment_id, "reason": "window",
                            "bytes": len(f.text.encode()) - len(window.encode())})
        out_frags.append({"fragmentId": f.fragment_id, "kind": f.kind, "text": window,
                          "offset": offset, "length": len(window), "totalLength": len(f.text),
                          "truncated": truncated})
    tree = Tree(conn, scope, target.session_id)
    meta = _event_meta(conn, scope, row, list(dict.fromkeys(f.kind for f in event.fragments)),
                       event.tool_name, event.is_error)
    node = row
    if tree.asof is not None:  # the caller's own session: states as of its cutoff
        node = tree.one(target.session_id, target.entry_id) or row
        tree.asof.patch(meta)
    edit = _edited_by(conn, tree, row)
    if edit is not None:
        meta["contextEdit"] = {
            "ref": format_ref(row["session_id"], edit),
            "replacement": "removed" if meta["selectionState"] == EDITED_OUT else "replaced"}
    if event.metadata:
        meta["metadata"] = event.metadata
    return {
        "event": meta,
        "source": source(row["path"], row["line"], row["byte_off"]),
        "fragments": out_frags,
        "omitted": omitted,
        "neighbours": neighbours(tree, row["sid"], node, order, before, after),
    }


def _edited_by(conn: sqlite3.Connection, tree: Tree, row: Row) -> str | None:
    """The context edit that decides the entry's part of the model context: the session's states
    are computed again (as of the cutoff in the caller's own session), only for an entry that
    some context edit names."""
    named = conn.execute("SELECT 1 FROM relations r JOIN events e ON e.eid = r.eid "
                         "WHERE r.target = ? AND r.type = 'edits' AND e.sid = ? LIMIT 1",
                         (row["entry_id"], row["sid"])).fetchone()
    if named is None:
        return None
    if tree.asof is not None:
        return tree.asof.edits.get(row["entry_id"])
    version = conn.execute("SELECT version FROM sessions WHERE sid = ?",
                           (row["sid"],)).fetchone()["version"]
    return session_states(conn, row["sid"], version or 1).edits.get(row["entry_id"])


def _event_meta(conn: sqlite3.Connection, scope: Scope, row: Row, kinds: list[str],
                tool_name: str | None, is_error: bool) -> ReadEvent:
    return {
        "ref": format_ref(row["session_id"], row["entry_id"]), "sessionId": row["session_id"],
        "entryId": row["entry_id"], "parentId": row["parent_id"], "entryType": row["entry_type"],
        "role": row["role"], "timestamp": row["ts"], "cwd": row["cwd"],
        "sessionName": scope.session_name(conn, row["session_id"], row["name"]),
        "branchState": row["branch_state"], "contextRole": row["context_role"],
        "selectionState": row["selection_state"], "kinds": kinds, "toolName": tool_name,
        "isError": is_error}


def _omitted(o: Omission) -> Omitted:
    out: Omitted = {"field": o.field, "reason": o.reason, "bytes": o.size}
    if o.mime_type:
        out["mimeType"] = o.mime_type
    return out


def _locate(conn: sqlite3.Connection, target: Ref, scope: Scope) -> _Located | None:
    """The event's row and its entry read back from the source; None when the event is not
    indexed or not visible."""
    where, params = scope.event_sql(target.session_id)
    row = conn.execute(
        "SELECT e.eid, e.sid, e.seq, e.entry_id, e.parent_id, e.entry_type, e.role, e.kinds, "
        "e.ts, e.preview, e.branch_state, e.line, e.byte_off, e.sub, e.lhash, e.context_role, "
        "e.selection_state, s.session_id, s.path, s.cwd, s.name FROM events e "
        f"JOIN sessions s ON s.sid = e.sid WHERE s.session_id = ? AND e.entry_id = ? AND {where}",
        [target.session_id, target.entry_id, *params]).fetchone()
    if row is None:
        return None
    return _Located(row, jsonl.read_entry(row["path"], row["byte_off"], row["sub"], row["lhash"]))
