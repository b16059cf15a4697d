"""Tracing one event: parent, children, siblings, the way to the materialized leaf, typed
relations, file evidence and session lineage. Bounded previews only, never full content.
"""

from __future__ import annotations

import sqlite3

import orjson

from pi_event_search.core.authz import Scope
from pi_event_search.core.errors import NotFound
from pi_event_search.core.eventref import Ref
from pi_event_search.core.wire import ForkAnchor, Lineage, Relation, TraceResult
from pi_event_search.events.neighbours import Row, Tree
from pi_event_search.query.shapes import MASKED, node_from_row


def trace_event(conn: sqlite3.Connection, target: Ref, scope: Scope) -> TraceResult:
    tree = Tree(conn, scope, target.session_id)
    row = tree.one(target.session_id, target.entry_id)
    if row is None:
        raise NotFound(str(target))
    eid, sid, entry_id = row["eid"], row["sid"], row["entry_id"]
    session = conn.execute("SELECT version, path, parent_path, leaf FROM sessions WHERE sid = ?",
                           (sid,)).fetchone()
    parent = tree.by_entry(sid, row["parent_id"])
    children = tree.children(sid, entry_id)
    if parent is not None:
        siblings = [c for c in tree.children(sid, parent["entry_id"]) if c["entry_id"] != entry_id]
    else:
        siblings = tree.roots(sid, entry_id) if row["parent_id"] is None else []
    tree_label = "derived" if (session["version"] or 1) < 2 else "recorded"
    relations = _relations(conn, tree, sid, eid, row, tree_label, parent, children, siblings)
    leaf = tree.asof.leaf if tree.asof is not None else session["leaf"]
    toward, toward_ref = _toward_leaf(row, children, parent, leaf)
    return {
        "event": node_from_row(row),
        "parent": node_from_row(parent) if parent else None,
        "children": [node_from_row(c) for c in children],
        "siblings": [node_from_row(s) for s in siblings],
        "towardLeaf": toward, "towardLeafRef": toward_ref,
        "relations": relations,
        "files": [{"op": r["op"], "path": r["path"], "label": r["label"]} for r in conn.execute(
            "SELECT op, path, label FROM file_refs WHERE eid = ? ORDER BY rowid", (eid,))],
        "lineage": _lineage(conn, scope, sid, session["path"], session["parent_path"]),
        "labels": _labels(conn, tree, sid, entry_id),
    }


def _toward_leaf(row: Row, children: list[Row], parent: Row | None, leaf: str | None
                 ) -> tuple[str | None, str | None]:
    if row["branch_state"] == "selected":
        if row["entry_id"] == leaf:
            return "self", node_from_row(row)["ref"]
        on_path = [c for c in children if c["branch_state"] == "selected"]
        return ("child", node_from_row(on_path[0])["ref"]) if on_path else (None, None)
    if row["branch_state"] == "alternate" and parent is not None:
        return "parent", node_from_row(parent)["ref"]
    return None, None


def _rel(rtype: str, direction: str, label: str, node: Row | None) -> Relation:
    return {"type": rtype, "direction": direction, "label": label,
            "node": node_from_row(node) if node is not None else MASKED}


def _relations(conn: sqlite3.Connection, tree: Tree, sid: int, eid: int, row: Row, label: str,
               parent: Row | None, children: list[Row], siblings: list[Row]
               ) -> list[Relation]:
    out = []
    if parent is not None:
        out.append(_rel("parent", "out", label, parent))
    out += [_rel("child", "in", label, c) for c in children]
    out += [_rel("sibling", "out", "derived", s) for s in siblings]
    for rel in conn.execute("SELECT type, target FROM relations WHERE eid = ?", (eid,)):
        if rel["type"] == "tool-result-for":
            call = conn.execute("SELECT e.entry_id FROM calls c JOIN events e ON e.eid = c.eid "
                                "WHERE c.sid = ? AND c.call_id = ? ORDER BY e.seq LIMIT 1",
                                (sid, rel["target"])).fetchone()
            node = tree.by_entry(sid, call["entry_id"]) if call else None
        else:
            node = tree.by_entry(sid, rel["target"])
        if node is not None:
            out.append(_rel(rel["type"], "out", "recorded", node))
    entry_id = row["entry_id"]
    for src in conn.execute(
            "SELECT r.eid FROM relations r JOIN events e ON e.eid = r.eid WHERE e.sid = ? "
            "AND r.target = ? "
            "AND r.type IN ('labels', 'compacts', 'branch-summary-from', 'edits')",
            (sid, entry_id)):
        rtype = conn.execute("SELECT type FROM relations WHERE eid = ? AND target = ?",
                             (src["eid"], entry_id)).fetchone()["type"]
        node = tree.by_eid(src["eid"])
        if node is not None:
            out.append(_rel(rtype, "in", "recorded", node))
    for src in conn.execute(
            "SELECT DISTINCT r.eid FROM calls c JOIN relations r ON r.target = c.call_id "
            "AND r.type = 'tool-result-for' JOIN events e ON e.eid = r.eid AND e.sid = c.sid "
            "WHERE c.eid = ?", (eid,)):
        node = tree.by_eid(src["eid"])
        if node is not None:
            out.append(_rel("tool-result-for", "in", "recorded", node))
    out += [{"type": f"file-{r['op']}", "direction": "out", "label": r["label"],
             "path": r["path"]}
            for r in conn.execute("SELECT op, path, label FROM file_refs WHERE eid = ?", (eid,))]
    return out


def _labels(conn: sqlite3.Connection, tree: Tree, sid: int, entry_id: str) -> list[str]:
    """The latest label the caller may see (a label set at or after the cutoff is not)."""
    row = conn.execute(
        "SELECT e.facts FROM relations r JOIN events e ON e.eid = r.eid "
        "JOIN sessions s ON s.sid = e.sid WHERE e.sid = ? "
        f"AND r.type = 'labels' AND r.target = ? AND {tree.where} ORDER BY e.seq DESC LIMIT 1",
        [sid, entry_id, *tree.params]).fetchone()
    if row is None or row["facts"] is None:
        return []
    label = orjson.loads(row["facts"]).get("label") or ""
    return [label] if label else []


def _lineage(conn: sqlite3.Connection, scope: Scope, sid: int, path: str,
             parent_path: str | None) -> list[Lineage]:
    out: list[Lineage] = []
    visible, params = scope.session_sql("s")
    if parent_path:
        rows = conn.execute(
            f"SELECT s.sid, s.session_id, s.path, {visible} AS visible FROM sessions s "
            "WHERE s.path = ? OR s.session_id = (SELECT session_id FROM files WHERE path = ?) "
            "OR s.session_id = ?",  # Oh My Pi's forks record the parent's id
            [*params, parent_path, parent_path, parent_path]).fetchall()
        if not rows:
            out.append({"relation": "session-parent", "path": parent_path, "indexed": False})
        for p in rows[:1]:
            if not p["visible"]:
                out.append({"relation": "session-parent", "masked": True})
                continue
            out.append({"relation": "session-parent", "sessionId": p["session_id"],
                        "path": p["path"], "label": "recorded",
                        "forkAnchor": _anchor(conn, scope, sid, p["sid"])})
    for c in conn.execute(
            f"SELECT s.sid, s.session_id, s.path, {visible} AS visible FROM sessions s "
            "WHERE s.parent_path IN (?, (SELECT session_id FROM sessions WHERE sid = ?)) "
            "ORDER BY s.created", [*params, path, sid]).fetchall():
        out.append({"relation": "session-child", "sessionId": c["session_id"], "path": c["path"],
                    "label": "recorded", "forkAnchor": _anchor(conn, scope, c["sid"], sid)}
                   if c["visible"] else {"relation": "session-child", "masked": True})
    return out


def _anchor(conn: sqlite3.Connection, scope: Scope, child: int, parent: int
            ) -> ForkAnchor | None:
    """The last entry of the child's copied prefix that also exists in the parent (derived)."""
    anchor: str | None = None
    parent_ids = {r["entry_id"] for r in conn.execute(
        "SELECT entry_id FROM events WHERE sid = ?", (parent,))}
    for r in conn.execute(
            "SELECT entry_id, entry_type FROM events WHERE sid = ? ORDER BY seq", (child,)):
        if r["entry_id"] in parent_ids:
            anchor = r["entry_id"]
        elif r["entry_type"] != "label":  # forks re-create labels with new ids at the end
            break
    if anchor is None:
        return None
    row = Tree(conn, scope, None).by_entry(parent, anchor)
    return {**node_from_row(row), "label": "derived"} if row else None
