"""Bringing one session file's index up to date: unchanged, appended, or rebuilt, in one transaction.

The checkpoint (files row) is re-read inside the write transaction, so two processes indexing the
same index never apply the same bytes twice. Rows and the new checkpoint commit together.
"""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass
from typing import Any

import orjson

from pi_event_search.index import sessions, textcodec
from pi_event_search.index.fulltext import FullText
from pi_event_search.index.prepare import ParsedFile, parse_open, prepare
from pi_event_search.index.rows import SessionRows
from pi_event_search.source import jsonl, tree
from pi_event_search.source.discovery import RACY_NS, Observation
from pi_event_search.source.extractors import Registry


@dataclass(slots=True)
class Outcome:
    change: str  # unchanged | appended | rebuilt | stale
    events: int = 0
    error: str | None = None


class Stale(Exception):
    """The file changed in a way that cannot be parsed safely; keep the last known-good index."""


def apply_file(conn: sqlite3.Connection, fts: FullText, obs: Observation, session_id: str,
               ahead: ParsedFile | None = None, *, extractors: Registry) -> Outcome:
    """Apply one file inside the caller's write transaction. No savepoint: FTS5 flushes its
    pending index at every savepoint, and nothing needs one (a Stale is raised before anything
    is written; any other error rolls the whole transaction back). `ahead`: the file as a
    read-ahead thread parsed it, used when the file is rebuilt and has not changed since.
    `extractors`: the index's registry (registry.py), as the writer recorded it."""
    try:
        return _apply(conn, fts, obs, session_id, ahead, extractors)
    except Stale as exc:
        mark_stale(conn, obs.path, str(exc))
        return Outcome("stale", error=str(exc))


def mark_stale(conn: sqlite3.Connection, path: str, error: str) -> None:
    """Keep a session's last known-good rows and say why they are no longer current."""
    conn.execute("UPDATE files SET status = 'stale', reason = ? WHERE path = ?", (error, path))
    sessions.mark_stale(conn, path, error)


def _apply(conn: sqlite3.Connection, fts: FullText, obs: Observation, session_id: str,
           ahead: ParsedFile | None, extractors: Registry) -> Outcome:
    conn.execute("INSERT OR IGNORE INTO files (path, root, live, status) VALUES (?, ?, ?, 'new')",
                 (obs.path, obs.root, int(obs.live)))
    cp = conn.execute("SELECT dev, ino, size, mtime_ns, committed, lines, header_hash, last_off, "
                      "last_hash, status FROM files WHERE path = ?", (obs.path,)).fetchone()
    sess = conn.execute("SELECT sid, path FROM sessions WHERE session_id = ?",
                        (session_id,)).fetchone()
    try:
        fh = open(obs.path, "rb")  # noqa: SIM115 - closed below; read-only, never written
    except OSError as exc:
        raise Stale(f"unreadable: {exc.strerror or exc}") from exc
    with fh:
        st = os.fstat(fh.fileno())
        if cp is not None and sess is not None and sess["path"] == obs.path \
                and cp["status"] == "indexed":
            same = (cp["dev"], cp["ino"], cp["size"], cp["mtime_ns"]) \
                == (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
            # A file changed within the mtime granularity looks unchanged: check its content.
            racy = time.time_ns() - st.st_mtime_ns < RACY_NS
            if same and (not racy or _appended(fh, st, cp)):
                sessions.mark_ok(conn, sess["sid"])
                return Outcome("unchanged")
            if _appended(fh, st, cp):
                return _append(conn, fts, fh, st, obs, sess["sid"], cp["committed"],
                               cp["lines"], extractors)
        same = ahead is not None and ahead.stat is not None and _key(ahead.stat) == _key(st)
        return _rebuild(conn, fts, fh, st, obs, session_id, ahead if same else None,
                        extractors)


def _key(st: os.stat_result) -> tuple[int, int, int, int]:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def _appended(fh: Any, st: os.stat_result, cp: sqlite3.Row) -> bool:
    if (cp["dev"], cp["ino"]) != (st.st_dev, st.st_ino) or st.st_size < cp["committed"]:
        return False
    header = jsonl.read_line_at(fh, 0)
    if header is None or jsonl.digest(header) != cp["header_hash"]:
        return False
    if cp["last_off"] is None:
        return True
    last = jsonl.read_line_at(fh, cp["last_off"])
    return last is not None and jsonl.digest(last) == cp["last_hash"]


def _rebuild(conn: sqlite3.Connection, fts: FullText, fh: Any, st: os.stat_result,
             obs: Observation, session_id: str, ahead: ParsedFile | None,
             extractors: Registry) -> Outcome:
    parsed = ahead or parse_open(fh, textcodec.packer(conn), extractors)
    header, header_raw = parsed.header, parsed.header_raw
    if header is None or header_raw is None or header.get("id") != session_id:
        raise Stale(parsed.reason or "session header changed while indexing")
    for old in conn.execute("SELECT sid FROM sessions WHERE session_id = ? OR path = ?",
                            (session_id, obs.path)).fetchall():
        sessions.drop_session(conn, fts, old["sid"])
    sid = sessions.upsert_session(conn, header, obs.path)
    raw_version = header.get("version")
    version = raw_version if isinstance(raw_version, int) else 1
    batch = SessionRows(conn, fts, sid, jsonl.header_cwd(header), 0, has_ids=version >= 2)
    batch.fresh = True
    for prep in parsed.records:
        batch.add(prep)
        batch.flush_when_full()
    states = tree.compute(batch.nodes, batch.walkable, source=jsonl.header_source(header))
    batch.write(states)
    _finish(conn, sid, batch, states, obs, st, parsed.chunk, jsonl.digest(header_raw),
            replace=True)
    return Outcome("rebuilt", len(batch.events))


def _append(conn: sqlite3.Connection, fts: FullText, fh: Any, st: os.stat_result,
            obs: Observation, sid: int, committed: int, lines: int, extractors: Registry
            ) -> Outcome:
    chunk = jsonl.Chunk(end_offset=committed, end_line=lines)
    stream = jsonl.stream_records(fh, committed, lines + 1, st.st_size - committed, chunk)
    sess = conn.execute(
        "SELECT cwd, version, entries, leaf, source FROM sessions WHERE sid = ?", (sid,)).fetchone()
    cwd, leaf = sess["cwd"], sess["leaf"]
    batch = SessionRows(conn, fts, sid, cwd, sess["entries"],
                        has_ids=(sess["version"] or 1) >= 2)
    batch.prev_id = leaf
    for prep in prepare(stream, cwd, 0, textcodec.packer(conn), extractors):
        batch.add(prep)
        batch.flush_when_full()
    states = _extended(conn, sid, leaf, batch, sess["source"])
    if states is None:  # the leaf moved elsewhere, or a compaction: recompute the whole session
        nodes = [tree.Node(r["seq"], r["entry_id"], r["parent_id"], r["entry_type"],
                           orjson.loads(r["facts"]) if r["facts"] else {})
                 for r in conn.execute(
                     "SELECT seq, entry_id, parent_id, entry_type, facts FROM events "
                     "WHERE sid = ? ORDER BY seq", (sid,))]
        batch.has_ids = batch.has_ids and not any(
            n.entry_id.startswith("v1~") and not tree.skipped(n) for n in nodes)
        states = tree.compute(nodes + batch.nodes, batch.walkable, source=sess["source"])
        _update_states(conn, sid, nodes, states)
    batch.write(states)
    _finish(conn, sid, batch, states, obs, st, chunk, None, replace=False)
    return Outcome("appended" if batch.events else "unchanged", len(batch.events))


def _extended(conn: sqlite3.Connection, sid: int, leaf: str | None, batch: SessionRows,
              source: str) -> tree.States | None:
    """States when the new entries simply continue the selected path from the old leaf (the
    usual append): nothing before them changes, so the session need not be recomputed."""
    new = batch.nodes
    if not new or not batch.has_ids or leaf is None or leaf.startswith("v1~"):
        return None
    # Entries that change earlier states, or their own: a compaction, a context edit; in Oh My
    # Pi's files its /clear and failed answers (tree._drop; bare calls and results: _omp_calls).
    replay = ("failed", "interrupted") if source == "omp" else ()
    if new[0].parent_id != leaf or any(n.entry_type in ("compaction", "context_edit",
                                                        "reset_boundary")
                                       or tree.skipped(n) or any(k in n.facts for k in replay)
                                       for n in new) or any(
            b.parent_id != a.entry_id for a, b in zip(new, new[1:], strict=False)):
        return None
    row = conn.execute("SELECT branch_state FROM events WHERE sid = ? AND entry_id = ?",
                       (sid, leaf)).fetchone()
    if row is None or row["branch_state"] != tree.SELECTED:
        return None
    selection = {n.entry_id: tree.DIRECT if tree.makes_context(n) else tree.NOT_APPLICABLE
                 for n in new}
    if source == "omp" and not _omp_calls(conn, sid, new, selection):
        return None
    return tree.States(new[-1].entry_id, {n.entry_id: tree.SELECTED for n in new}, selection, [])


def _omp_calls(conn: sqlite3.Connection, sid: int, new: list[tree.Node],
               selection: dict[str, str]) -> bool:
    """Oh My Pi's tool calls on an append that continues the path, without recomputing the
    session (a live session appends an answer's calls, then their results, at each step: 50 ms
    each at 3,000 entries): a new answer of bare calls is dropped until their results come, and
    an earlier one whose results come now is back in context. False (recompute) when a result
    answers a failed answer's call, or an answer comes back into a session with failed ones
    (whether those stay out depends on their neighbours)."""
    results = {n.facts["callId"] for n in new if isinstance(n.facts.get("callId"), str)}
    for n in new:
        if n.facts.get("bare") and not results & set(n.facts.get("calls") or []):
            selection[n.entry_id] = tree.DROPPED
    if not results:
        return True
    back = []
    for r in conn.execute("SELECT entry_id, facts FROM events WHERE sid = ? AND "
                          "selection_state = ?", (sid, tree.DROPPED)):
        facts = orjson.loads(r["facts"]) if r["facts"] else {}
        if results & set(facts.get("calls") or []):
            if "failed" in facts:
                return False
            back.append((tree.DIRECT, sid, r["entry_id"]))
    if back and conn.execute("SELECT 1 FROM events WHERE sid = ? AND facts LIKE '%\"failed\"%' "
                             "LIMIT 1", (sid,)).fetchone():
        return False
    conn.executemany("UPDATE events SET selection_state = ? WHERE sid = ? AND entry_id = ?", back)
    return True


def _update_states(conn: sqlite3.Connection, sid: int, old: list[tree.Node],
                   states: tree.States) -> None:
    current = {r["entry_id"]: (r["branch_state"], r["selection_state"]) for r in conn.execute(
        "SELECT entry_id, branch_state, selection_state FROM events WHERE sid = ?", (sid,))}
    changed = [(states.branch[n.entry_id], states.selection[n.entry_id], sid, n.entry_id)
               for n in old
               if current.get(n.entry_id) != (states.branch[n.entry_id],
                                              states.selection[n.entry_id])]
    conn.executemany("UPDATE events SET branch_state = ?, selection_state = ? "
                     "WHERE sid = ? AND entry_id = ?", changed)


def _finish(conn: sqlite3.Connection, sid: int, batch: SessionRows, states: tree.States,
            obs: Observation, st: os.stat_result, chunk: jsonl.Chunk, header_hash: bytes | None,
            *, replace: bool) -> None:
    sessions.set_tip(conn, sid, states.leaf, batch.seq, (batch.name,) if batch.name_set else None)
    bad = [f"line {n}: {why}" for n, why in chunk.bad_lines]
    if replace:
        conn.execute(
            "UPDATE files SET dev = ?, ino = ?, size = ?, mtime_ns = ?, status = 'indexed', "
            "reason = NULL, canonical_path = NULL, committed = ?, lines = ?, header_hash = ?, "
            "last_off = ?, last_hash = ?, bad_lines = ?, bad_detail = ?, session_id = ? "
            "WHERE path = ?",
            (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, chunk.end_offset, chunk.end_line,
             header_hash, chunk.last_line_offset, chunk.last_line_hash, len(bad),
             "\n".join(bad[:20]) or None, batch_session_id(conn, sid), obs.path))
        return
    keep_last = chunk.last_line_offset is None
    conn.execute(
        "UPDATE files SET size = ?, mtime_ns = ?, committed = ?, lines = ?, "
        "last_off = CASE WHEN ? THEN last_off ELSE ? END, "
        "last_hash = CASE WHEN ? THEN last_hash ELSE ? END WHERE path = ?",
        (st.st_size, st.st_mtime_ns, chunk.end_offset, chunk.end_line, keep_last,
         chunk.last_line_offset, keep_last, chunk.last_line_hash, obs.path))
    if bad:
        conn.execute("UPDATE files SET bad_lines = bad_lines + ?, "
                     "bad_detail = coalesce(bad_detail || char(10), '') || ? WHERE path = ?",
                     (len(bad), "\n".join(bad[:20]), obs.path))


def batch_session_id(conn: sqlite3.Connection, sid: int) -> str:
    row = conn.execute("SELECT session_id FROM sessions WHERE sid = ?", (sid,)).fetchone()
    return str(row["session_id"])
