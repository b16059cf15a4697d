"""The entry rows of one session file being applied (events, fragments, full-text rows,
relations, calls, file references; the session's own row is sessions.py's): built in memory,
written with executemany.

Events wait for the session's tree states (known once every entry is read); the bulky rows
(fragments, their full-text rows, relations, calls, file references) are written as they
accumulate, so memory stays bounded per file.
"""

from __future__ import annotations

import sqlite3
from typing import Any, NamedTuple

import orjson

from pi_event_search.core.authz import place_tokens, with_places
from pi_event_search.index.fulltext import FullText
from pi_event_search.index.prepare import Prepared
from pi_event_search.source import tree

# Fragments held in memory before they are written (bounds memory per file): this many, or this
# many characters of their text.
FLUSH_ROWS, FLUSH_CHARS = 2000, 4 << 20


class _EventRow(NamedTuple):
    """An events row as inserted; the states are known only once the session's tree is."""

    eid: int
    sid: int
    entry_id: str
    parent_id: str | None
    seq: int
    line: int
    byte_off: int
    sub: int
    lhash: bytes
    entry_type: str
    role: str | None
    tool_name: str | None
    ts: str | None
    ts_ms: int | None
    is_error: int
    context_role: str
    branch_state: str
    selection_state: str
    preview: str
    kinds: str
    facts: str | None
    secrets: str | None  # "kind:count,..." of the credentials masked in its texts


_INSERT_EVENT = (f"INSERT INTO events ({', '.join(_EventRow._fields)}) "
                 f"VALUES ({','.join('?' * len(_EventRow._fields))})")


class SessionRows:
    """Rows for one session, built in memory then written with executemany."""

    def __init__(self, conn: sqlite3.Connection, fulltext: FullText, sid: int, cwd: str | None,
                 seq: int, has_ids: bool) -> None:
        self.conn, self.sid, self.cwd, self.seq = conn, sid, cwd, seq
        self.fulltext = fulltext
        canon = conn.execute("SELECT cwd_canon, source FROM sessions WHERE sid = ?",
                             (sid,)).fetchone()
        self.places = place_tokens(canon["cwd_canon"] if canon else None)
        # Only Oh My Pi's states use the replay facts (tree.py, `dropped`): Pi's events do not
        # store them (one on every tool result).
        self.replay = canon is not None and canon["source"] == "omp"
        self.eid = (conn.execute("SELECT max(eid) AS n FROM events").fetchone()["n"] or 0) + 1
        self.fid = (conn.execute("SELECT max(fid) AS n FROM fragments").fetchone()["n"] or 0) + 1
        self.events: list[_EventRow] = []
        self.fragments: list[tuple[Any, ...]] = []
        self.fts: list[tuple[Any, ...]] = []
        self.fts_chars = 0
        self.relations: list[tuple[Any, ...]] = []
        self.calls: list[tuple[Any, ...]] = []
        self.files: list[tuple[Any, ...]] = []
        self.nodes: list[tree.Node] = []
        self.used: set[str] = set()
        self.prev_id: str | None = None
        self.has_ids = has_ids
        self.v1 = not has_ids  # Pi's migration makes a v1 file a straight chain it can walk
        self.name: str | None = None
        self.name_set = False
        self.fresh = False

    @property
    def walkable(self) -> bool:
        """Whether Pi can walk the session's tree: ids throughout, or a v1 file (a chain)."""
        return self.has_ids or self.v1

    def exists(self, entry_id: str) -> bool:
        if entry_id in self.used:
            return True
        if self.fresh:  # a rebuilt session has no rows yet besides this batch's
            return False
        row = self.conn.execute("SELECT 1 FROM events WHERE sid = ? AND entry_id = ?",
                                (self.sid, entry_id)).fetchone()
        return row is not None

    def add(self, prep: Prepared) -> None:
        ordinal = self.seq + 1
        if prep.raw_id is not None:
            entry_id = prep.raw_id if not self.exists(prep.raw_id) else f"{prep.raw_id}~{ordinal}"
            parent_id = prep.raw_parent
        else:
            self.has_ids = self.has_ids and not prep.loaded  # what Pi skips cannot break its tree
            entry_id = f"v1~{ordinal}"
            parent_id = self.prev_id  # Pi's own v1 migration chains entries linearly
        self.used.add(entry_id)
        self._rows(prep, entry_id, parent_id)
        if prep.loaded:  # Pi's migration chains the entries it loaded, skipping the others
            self.prev_id = entry_id
        self.seq += 1

    def _rows(self, prep: Prepared, entry_id: str, parent_id: str | None) -> None:
        ev = prep.event
        eid = self.eid
        self.eid += 1
        facts = dict(ev.tree) if self.replay else \
            {k: v for k, v in ev.tree.items() if k not in tree.REPLAY_FACTS}
        if not prep.loaded:
            facts[tree.SKIPPED] = True
        kinds = ",".join(dict.fromkeys(f.kind for f in ev.fragments))
        self.events.append(_EventRow(
            eid, self.sid, entry_id, parent_id, self.seq, prep.line, prep.offset, prep.sub,
            prep.line_hash, ev.entry_type, ev.role, ev.tool_name, prep.ts, prep.ts_ms,
            int(ev.is_error), ev.context_role, tree.UNKNOWN, tree.UNKNOWN, ev.preview, kinds,
            orjson.dumps(facts).decode() if facts else None,
            ",".join(f"{k}:{n}" for k, n in sorted(ev.secrets.items())) or None))
        for frag, packed in zip(ev.fragments, prep.packed, strict=True):
            # The places are not stored with the fragment: a delete derives them again from
            # the session's stored cwd_canon (they cost more bytes than the text of many rows).
            self.fragments.append((self.fid, eid, frag.fragment_id, frag.kind, packed, frag.meta))
            self.fts.append((self.fid, frag.text, with_places(frag.meta, self.places)))
            self.fts_chars += len(frag.text)
            self.fid += 1
        self.relations.extend((eid, rtype, target) for rtype, target in ev.relations)
        self.calls.extend((self.sid, call_id, eid) for call_id in ev.call_ids)
        self.files.extend((eid, op, path, label) for op, path, label in ev.files)
        self.nodes.append(tree.Node(self.seq, entry_id, parent_id, ev.entry_type, facts))
        if ev.entry_type in ("session_info", "title_change") and prep.loaded:
            self.name, self.name_set = (facts.get("name") or None), True

    def flush_when_full(self) -> None:
        if len(self.fts) >= FLUSH_ROWS or self.fts_chars >= FLUSH_CHARS:
            self.flush()

    def flush(self) -> None:
        """Write the bulky rows gathered so far (text, FTS, relations); events wait for states."""
        self.conn.executemany("INSERT INTO fragments (fid, eid, frag, kind, text, meta) "
                              "VALUES (?,?,?,?,?,?)", self.fragments)
        self.fulltext.insert(self.fts)
        self.conn.executemany("INSERT INTO relations VALUES (?,?,?)", self.relations)
        self.conn.executemany("INSERT INTO calls VALUES (?,?,?)", self.calls)
        self.conn.executemany("INSERT INTO file_refs VALUES (?,?,?,?)", self.files)
        self.fts_chars = 0
        for rows in (self.fragments, self.fts, self.relations, self.calls, self.files):
            rows.clear()

    def write(self, states: tree.States) -> None:
        self.flush()
        rows = [e._replace(branch_state=states.branch.get(e.entry_id, tree.UNKNOWN),
                           selection_state=states.selection.get(e.entry_id, tree.UNKNOWN))
                for e in self.events]
        self.conn.executemany(_INSERT_EVENT, rows)
