"""One indexing pass over the sessions directories: observe, pick canonical files, apply, forget.

A session leaves the index only when its file is confirmed gone while its directory is readable;
an unreadable root (an unmounted archive) marks its sessions unavailable instead.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from pi_event_search import store
from pi_event_search.discovery import HeaderInfo, Observation, SessionDir, read_header_info, scan
from pi_event_search.ingest import RACY_NS, Outcome, apply_file, mark_stale
from pi_event_search.sessions import drop_session

Progress = Callable[[int, int, str], None]


@dataclass(slots=True)
class Report:
    files: int = 0
    changed: dict[str, int] = field(default_factory=dict)  # change -> count
    events: int = 0
    removed: int = 0
    generation: int = 0

    @property
    def changed_sessions(self) -> int:
        return sum(v for k, v in self.changed.items() if k in ("appended", "rebuilt")) + self.removed

    def count(self, outcome: Outcome) -> None:
        self.changed[outcome.change] = self.changed.get(outcome.change, 0) + 1
        self.events += outcome.events


def refresh(conn: sqlite3.Connection, dirs: list[SessionDir],
            progress: Progress | None = None) -> Report:
    """Bring the index up to date with what is on disk now."""
    observed, unavailable = scan(dirs)
    known = {row["path"]: row for row in conn.execute(
        "SELECT path, root, dev, ino, size, mtime_ns, session_id, status, reason FROM files")}
    infos = {o.path: _header(o, known.get(o.path)) for o in observed}
    canonical = _canonical(observed, infos)
    report = Report(files=len(observed))
    _apply_all(conn, observed, infos, canonical, known, report, progress)
    with store.WriteBatch(conn) as batch:
        batch.begin()
        report.removed = _forget(conn, {o.path for o in observed}, {d.path for d in dirs},
                                 unavailable)
        batch.dirty |= report.removed > 0
    report.generation = store.generation(conn)
    if progress is not None:
        progress(len(observed), len(observed), "")
    return report


def refresh_paths(conn: sqlite3.Connection, paths: set[str]) -> Report | None:
    """Apply just these files (a watcher's hint that they grew), when each is a known, indexed
    session file that still exists; None when only a full refresh can tell what happened."""
    observed: list[tuple[Observation, str]] = []
    for path in sorted(paths):
        row = conn.execute("SELECT root, live, session_id, status FROM files WHERE path = ?",
                           (path,)).fetchone()
        if row is None or row["status"] != "indexed" or not isinstance(row["session_id"], str):
            return None
        try:
            st = os.stat(path)
        except OSError:
            return None
        observed.append((Observation(path, row["root"], bool(row["live"]), st.st_dev, st.st_ino,
                                     st.st_size, st.st_mtime_ns), row["session_id"]))
    report = Report(files=len(observed))
    with store.WriteBatch(conn) as batch:
        batch.begin()
        for obs, session_id in observed:
            outcome = apply_file(conn, obs, session_id)
            report.count(outcome)
            batch.dirty |= outcome.change in ("appended", "rebuilt")
    report.generation = store.generation(conn)
    return report


def _apply_all(conn: sqlite3.Connection, observed: list[Observation],
               infos: dict[str, HeaderInfo], canonical: dict[str, Observation],
               known: dict[str, sqlite3.Row], report: Report,
               progress: Progress | None) -> None:
    outcomes: dict[str, Outcome] = {}

    def one(obs: Observation) -> None:
        info = infos[obs.path]
        if info.session_id is None:
            _not_a_session(conn, obs, info, known.get(obs.path), outcomes)
        elif canonical[info.session_id].path != obs.path:
            _duplicate(conn, obs, info.session_id, canonical[info.session_id].path)
        elif _settled(obs, known.get(obs.path)):
            outcomes[obs.path] = Outcome("unchanged")
        else:
            outcome = outcomes[obs.path] = apply_file(conn, obs, info.session_id)
            batch.dirty |= outcome.change in ("appended", "rebuilt")

    with store.WriteBatch(conn) as batch:
        applied: list[Observation] = []  # in the open transaction
        for i, obs in enumerate(observed):
            if progress is not None:
                progress(i, len(observed), obs.path)
            batch.begin()
            try:
                one(obs)
                applied.append(obs)
            except Exception as exc:  # one broken file never stops the others
                batch.rollback()
                batch.begin()
                for done in applied:
                    one(done)
                mark_stale(conn, obs.path, f"indexing failed: {type(exc).__name__}: {exc}")
                outcomes[obs.path] = Outcome("stale", error=str(exc))
            if batch.maybe_commit():
                applied.clear()
    for outcome in outcomes.values():
        report.count(outcome)


def _same_stat(obs: Observation, row: sqlite3.Row) -> bool:
    return (row["dev"], row["ino"], row["size"], row["mtime_ns"]) \
        == (obs.dev, obs.ino, obs.size, obs.mtime_ns)


def _settled(obs: Observation, row: sqlite3.Row | None) -> bool:
    """Indexed, and not touched since (old enough that its mtime cannot hide a change): skip
    without opening it. Keeps a refresh with nothing new cheap on big histories."""
    return row is not None and row["status"] == "indexed" and _same_stat(obs, row) \
        and time.time_ns() - obs.mtime_ns > RACY_NS


def _header(obs: Observation, row: sqlite3.Row | None) -> HeaderInfo:
    """The file's session id, re-read only when the file changed since we last saw it."""
    if row is not None and _same_stat(obs, row) \
            and row["status"] in ("indexed", "duplicate", "skipped"):
        session_id, reason = row["session_id"], row["reason"]
        return HeaderInfo(session_id if isinstance(session_id, str) else None,
                          reason if isinstance(reason, str) else None)
    return read_header_info(obs.path)


def _canonical(observed: list[Observation], infos: dict[str, HeaderInfo]
               ) -> dict[str, Observation]:
    """One file per session id: live directory first, then the longer file, then the path."""
    best: dict[str, Observation] = {}
    for obs in observed:
        sid = infos[obs.path].session_id
        if sid is None:
            continue
        cur = best.get(sid)
        if cur is None or (not obs.live, -obs.size, obs.path) < (not cur.live, -cur.size, cur.path):
            best[sid] = obs
    return best


def _not_a_session(conn: sqlite3.Connection, obs: Observation, info: HeaderInfo,
                   row: sqlite3.Row | None, outcomes: dict[str, Outcome]) -> None:
    reason = info.reason or "not a session"
    if row is not None and row["status"] in ("indexed", "stale") \
            and isinstance(row["session_id"], str):
        # Was a good session: a changed file we cannot parse keeps its last known-good index.
        mark_stale(conn, obs.path, reason)
        outcomes[obs.path] = Outcome("stale", error=reason)
        return
    conn.execute(
        "INSERT INTO files (path, root, live, dev, ino, size, mtime_ns, status, reason) "
        "VALUES (?,?,?,?,?,?,?, 'skipped', ?) ON CONFLICT(path) DO UPDATE SET "
        "dev = excluded.dev, ino = excluded.ino, size = excluded.size, "
        "mtime_ns = excluded.mtime_ns, status = 'skipped', reason = excluded.reason, "
        "session_id = NULL",
        (obs.path, obs.root, int(obs.live), obs.dev, obs.ino, obs.size, obs.mtime_ns, reason))


def _duplicate(conn: sqlite3.Connection, obs: Observation, session_id: str, canon: str) -> None:
    conn.execute(
        "INSERT INTO files (path, root, live, dev, ino, size, mtime_ns, session_id, status, "
        "canonical_path) VALUES (?,?,?,?,?,?,?,?, 'duplicate', ?) ON CONFLICT(path) DO UPDATE "
        "SET dev = excluded.dev, ino = excluded.ino, size = excluded.size, "
        "mtime_ns = excluded.mtime_ns, session_id = excluded.session_id, status = 'duplicate', "
        "canonical_path = excluded.canonical_path, reason = NULL",
        (obs.path, obs.root, int(obs.live), obs.dev, obs.ino, obs.size, obs.mtime_ns,
         session_id, canon))


def _forget(conn: sqlite3.Connection, seen: set[str], roots: set[str],
            unavailable: set[str]) -> int:
    """Drop files confirmed gone; mark those under unreadable roots unavailable."""
    removed = 0
    rows = conn.execute("SELECT path, root FROM files").fetchall()
    for row in rows:
        path, root = row["path"], row["root"]
        if path in seen:
            continue
        if root in unavailable or root not in roots:
            if root in unavailable:
                conn.execute("UPDATE files SET status = 'unavailable' WHERE path = ?", (path,))
                conn.execute("UPDATE sessions SET state = 'unavailable', "
                             "error = 'sessions directory unreadable' WHERE path = ?", (path,))
            continue
        for sess in conn.execute("SELECT sid FROM sessions WHERE path = ?", (path,)).fetchall():
            drop_session(conn, sess["sid"])
            removed += 1
        conn.execute("DELETE FROM files WHERE path = ?", (path,))
    return removed
