"""Tree states of the caller's own session as of its cutoff.

The index stores each session's states as of the whole file. A caller that names its own session
sees only the entries before its cutoff, and the states it is told must come from those entries
alone: an entry the cutoff's ancestors still select must not read `alternate` because of a branch
made later. As of the cutoff, the selected path is the cutoff entry's ancestry (the conversation
that led to the call); when the cutoff is not indexed yet, every indexed entry precedes it and the
last of them is the leaf.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import orjson

from pi_event_search.core.authz import Scope
from pi_event_search.core.filters import Filters
from pi_event_search.core.wire import Hit, Node, ReadEvent
from pi_event_search.source import tree

_Patched = TypeVar("_Patched", Hit, Node, ReadEvent)


@dataclass(frozen=True, slots=True)
class AsOf:
    sid: int
    leaf: str | None
    branch: dict[str, str]
    selection: dict[str, str]
    edits: dict[str, str] = dataclasses.field(default_factory=dict)

    def patch(self, item: _Patched) -> _Patched:
        """A hit, node or read event of this session, with its states as of the cutoff."""
        fields = cast(dict[str, Any], item)  # every one of them names its entry and states
        entry = fields.get("entryId")
        if isinstance(entry, str) and entry in self.branch:
            fields["branchState"] = self.branch[entry]
            if "selectionState" in fields:
                fields["selectionState"] = self.selection[entry]
        return item

    def branch_column(self, alias: str = "e") -> tuple[str, list[Any]]:
        """A SQL expression for the branch state of an events row: as of the cutoff for this
        session's rows, as stored for any other session's."""
        return (f"(CASE WHEN {alias}.sid = ? THEN coalesce(json_extract(?, '$.\"' || "
                f"{alias}.entry_id || '\"'), {alias}.branch_state) ELSE {alias}.branch_state END)",
                [self.sid, orjson.dumps(self.branch).decode()])

    def filter_sql(self, f: Filters, where: list[str], params: list[Any]) -> None:
        """The branch and selection filters, judged on the states as of the cutoff."""
        if not f.branch_states and not f.selection_states:
            return
        ids = [e for e in self.branch
               if (not f.branch_states or self.branch[e] in f.branch_states)
               and (not f.selection_states or self.selection[e] in f.selection_states)]
        where.append("e.entry_id IN (SELECT value FROM json_each(?))")
        params.append(orjson.dumps(ids).decode())


def unfiltered(f: Filters) -> Filters:
    """The filters without the tree-state ones (AsOf.filter_sql applies those)."""
    return dataclasses.replace(f, branch_states=[], selection_states=[])


def as_of(conn: sqlite3.Connection, scope: Scope, session_id: str | None) -> AsOf | None:
    """The caller's own session's states as of the cutoff; None unless the request names it."""
    if scope.current_session is None or session_id != scope.current_session:
        return None
    session = conn.execute("SELECT sid, version FROM sessions WHERE session_id = ?",
                           (session_id,)).fetchone()
    if session is None:
        return None
    sid, version = session["sid"], session["version"] or 1
    cut = conn.execute("SELECT seq, parent_id FROM events WHERE sid = ? AND entry_id = ?",
                       (sid, scope.cutoff or "")).fetchone()
    states = session_states(conn, sid, version, cut["seq"] if cut is not None else None,
                            cut["parent_id"] if cut is not None else None)
    return AsOf(sid, states.leaf, states.branch, states.selection, states.edits)


def session_states(conn: sqlite3.Connection, sid: int, version: int, before: int | None = None,
                   leaf: str | None = None) -> tree.States:
    """A session's states computed again from its stored facts: of the entries before seq
    `before` (all by default), with `leaf` as the leaf (default: the last of them)."""
    nodes = [tree.Node(r["seq"], r["entry_id"], r["parent_id"], r["entry_type"],
                       orjson.loads(r["facts"]) if r["facts"] else {})
             for r in conn.execute(
                 "SELECT seq, entry_id, parent_id, entry_type, facts FROM events "
                 "WHERE sid = ? AND seq < ? ORDER BY seq",
                 (sid, before if before is not None else 1 << 62))]
    # As ingest decides: Pi walks v1 files (a chain after its migration) and files with ids.
    walkable = version < 2 or not any(n.entry_id.startswith("v1~") and not tree.skipped(n)
                                      for n in nodes)
    source = conn.execute("SELECT source FROM sessions WHERE sid = ?", (sid,)).fetchone()
    return tree.compute(nodes, walkable, leaf=leaf, source=source["source"] if source else "pi")
