"""Tree and append neighbours of an event, inside the caller's scope.

Branch successors follow core-concepts: the selected path when the event is on it, else a sole
child; at an unresolved fork they stop and list every candidate.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from pi_event_search.core.authz import Scope
from pi_event_search.core.wire import Neighbours
from pi_event_search.query.asof import as_of
from pi_event_search.query.shapes import EVENT_COLUMNS, event_columns, node_from_row

Row = sqlite3.Row


class Tree:
    """Queries over one session's events, every one filtered by the caller's scope."""

    def __init__(self, conn: sqlite3.Connection, scope: Scope, session_id: str | None) -> None:
        self.conn = conn
        self.where, self.params = scope.event_sql(session_id)
        # The caller's own session: branch states as of its cutoff, in every row read here.
        self.asof = as_of(conn, scope, session_id)
        self.columns: str = EVENT_COLUMNS
        self.column_params: list[Any] = []
        if self.asof is not None:
            branch, self.column_params = self.asof.branch_column()
            self.columns = event_columns(branch)

    def _rows(self, cond: str, params: list[Any], order: str = "e.seq",
              limit: int = 1000) -> list[Row]:
        sql = (f"SELECT {self.columns} FROM events e JOIN sessions s ON s.sid = e.sid "
               f"WHERE {cond} AND {self.where} ORDER BY {order} LIMIT ?")
        return self.conn.execute(sql, [*self.column_params, *params, *self.params, limit]
                                 ).fetchall()

    def _first(self, cond: str, params: list[Any]) -> Row | None:
        rows = self._rows(cond, params, limit=1)
        return rows[0] if rows else None

    def one(self, session_id: str, entry_id: str) -> Row | None:
        return self._first("s.session_id = ? AND e.entry_id = ?", [session_id, entry_id])

    def by_entry(self, sid: int, entry_id: str | None) -> Row | None:
        if entry_id is None:
            return None
        return self._first("e.sid = ? AND e.entry_id = ?", [sid, entry_id])

    def by_eid(self, eid: int) -> Row | None:
        return self._first("e.eid = ?", [eid])

    def root(self, sid: int) -> Row | None:
        """The session's first event in branch order: its first parentless event (a v1 file's
        entries are chained from its first); the first event when every one has a parent."""
        return self._first("e.sid = ? AND e.parent_id IS NULL", [sid]) \
            or self._first("e.sid = ?", [sid])

    def roots(self, sid: int, entry_id: str) -> list[Row]:
        """The session's parentless events but this one."""
        return self._rows("e.sid = ? AND e.parent_id IS NULL AND e.entry_id != ?", [sid, entry_id])

    def children(self, sid: int, entry_id: str) -> list[Row]:
        return self._rows("e.sid = ? AND e.parent_id = ? AND e.entry_id != ?",
                          [sid, entry_id, entry_id])

    def append_order(self, sid: int, seq: int, before: int, after: int
                     ) -> tuple[list[Row], list[Row]]:
        prev = self._rows("e.sid = ? AND e.seq < ?", [sid, seq], "e.seq DESC", before)
        nxt = self._rows("e.sid = ? AND e.seq > ?", [sid, seq], "e.seq", after)
        return list(reversed(prev)), nxt

    def ancestors(self, sid: int, row: Row, count: int) -> list[Row]:
        out: list[Row] = []
        seen = {row["entry_id"]}
        cur = row
        while len(out) < count:
            parent = self.by_entry(sid, cur["parent_id"])
            if parent is None or parent["entry_id"] in seen:
                break
            seen.add(parent["entry_id"])
            out.append(parent)
            cur = parent
        return list(reversed(out))

    def successors(self, sid: int, row: Row, count: int) -> tuple[list[Row], list[Row], bool]:
        """(path forward, alternatives passed or stopped at, stopped at an unresolved fork)."""
        out: list[Row] = []
        alternatives: list[Row] = []
        seen = {row["entry_id"]}
        cur = row
        while len(out) < count:
            kids = [k for k in self.children(sid, cur["entry_id"]) if k["entry_id"] not in seen]
            if not kids:
                return out, alternatives, False
            chosen = [k for k in kids if k["branch_state"] == "selected"] \
                if cur["branch_state"] == "selected" else []
            if len(chosen) == 1:
                nxt = chosen[0]
                alternatives += [k for k in kids if k is not nxt]
            elif len(kids) == 1:
                nxt = kids[0]
            else:
                return out, alternatives + kids, True
            seen.add(nxt["entry_id"])
            out.append(nxt)
            cur = nxt
        return out, alternatives, False


def neighbours(tree: Tree, sid: int, row: Row, order: str, before: int, after: int
               ) -> Neighbours:
    if order == "branch":
        prev = tree.ancestors(sid, row, before)
        nxt, alternatives, stopped = tree.successors(sid, row, after)
    else:
        prev, nxt = tree.append_order(sid, row["seq"], before, after)
        alternatives, stopped = [], False
    return {"order": order, "before": [node_from_row(r) for r in prev],
            "after": [node_from_row(r) for r in nxt],
            "alternatives": [node_from_row(r) for r in alternatives], "stoppedAtFork": stopped}
