"""One indexing pass over the sessions directories: observe, pick canonical files, apply, forget.

A session leaves the index only when its file is confirmed gone while its directory is readable;
an unreadable root (an unmounted archive) marks its sessions unavailable instead.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from pi_event_search.index import ftsload, store, textcodec
from pi_event_search.index.filestate import FileRow, known_files, quiet
from pi_event_search.index.ingest import Outcome, apply_file, mark_stale
from pi_event_search.index.prepare import sample_texts
from pi_event_search.index.progress import Eta
from pi_event_search.index.readahead import ReadAhead, cores
from pi_event_search.index.sessions import drop_session
from pi_event_search.source.discovery import (
    RACY_NS,
    HeaderInfo,
    Observation,
    SessionDir,
    read_header_info,
    scan,
)

# (files done, files in the pass, what is happening: bytes done of bytes to do and time left)
Progress = Callable[[int, int, str], None]
BULK_BYTES = 256 << 20  # new bytes that make a pass a bulk load even on a non-empty index


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
    ftsload.wait_for_other_loader(conn)
    observed, unavailable = scan(dirs)
    report = Report(files=len(observed))
    known, settled = known_files(conn)
    if not unavailable and quiet(observed, known, settled):
        # Nothing to open, write or forget: no write transaction at all.
        report.changed["unchanged"] = settled.indexed
        report.generation = store.generation(conn)
        return report
    pending = store.bulk_pending(conn)
    infos = {o.path: _header(o, known.get(o.path)) for o in observed}
    canonical = _canonical(observed, infos)
    todo = [o for o in observed if _to_apply(o, infos[o.path], canonical, known.get(o.path))]
    new = sum(o.size for o in todo if _fresh(known.get(o.path)))
    bulk = pending or (new > 0 and not known) or new >= BULK_BYTES
    load = None
    if bulk:
        store.bulk_begin(conn)
        if textcodec.packer(conn) is textcodec.PLAIN:  # the index's first load: a dictionary
            with store.transaction(conn):
                textcodec.train(conn, sample_texts([o.path for o in todo]))
        load = ftsload.begin(conn)
    try:
        _apply_all(conn, observed, infos, canonical, known, report, progress, todo, bulk)
        with store.WriteBatch(conn) as batch:
            batch.begin()
            report.removed = _forget(conn, {o.path for o in observed}, {d.path for d in dirs},
                                     unavailable)
            batch.dirty |= report.removed > 0
    except BaseException:
        if load is not None:
            load.abandon()
        raise
    if bulk:
        if progress is not None:
            progress(len(observed), len(observed), "merging the full-text index")
        started = time.monotonic()
        if load is not None:
            load.close_input()
            store.bulk_indexes(conn)  # while the side thread merges
            load.finish()
            if os.environ.get("PIES_INDEX_STATS"):
                print(f"index stats: full-text worker cpu {load.cpu:.2f} s; peak rss "
                      f"{load.rss[0]:.1f} MB here, {load.rss[1]:.1f} MB in the worker",
                      file=sys.stderr)
        store.bulk_end(conn)
        if os.environ.get("PIES_INDEX_STATS"):
            print(f"index stats: final merge and indexes {time.monotonic() - started:.2f} s",
                  file=sys.stderr)
    report.generation = store.generation(conn)
    if progress is not None:
        progress(len(observed), len(observed), "")
    return report


def _to_apply(obs: Observation, info: HeaderInfo, canonical: dict[str, Observation],
              row: FileRow | None) -> bool:
    """Whether the pass opens this file (a canonical session file that changed)."""
    return info.session_id is not None and canonical[info.session_id].path == obs.path \
        and not _settled(obs, row)


def _fresh(row: FileRow | None) -> bool:
    """Not indexed yet (or no longer): the file will be parsed whole, not appended to."""
    return row is None or row.status != "indexed"


def _read_ahead(conn: sqlite3.Connection, todo: list[Observation], known: dict[str, FileRow]
                ) -> ReadAhead | None:
    """A parsing thread for the files that will be parsed whole, when there is a second core and
    enough work to be worth one."""
    paths = [o.path for o in todo if _fresh(known.get(o.path))]
    if cores() < 2 or len(paths) < 2:
        return None
    return ReadAhead(paths, textcodec.packer(conn))


def refresh_paths(conn: sqlite3.Connection, paths: set[str]) -> Report | None:
    """Apply just these files (a watcher's hint that they grew), when each is a known, indexed
    session file that still exists; None when only a full refresh can tell what happened (or
    finish a bulk load: its full-text rows must go through its side database)."""
    if conn.execute("SELECT 1 FROM meta WHERE key = 'fts_load'").fetchone() is not None:
        return None
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
               known: dict[str, FileRow], report: Report,
               progress: Progress | None, todo: list[Observation], bulk: bool) -> None:
    outcomes: dict[str, Outcome] = {}
    eta = Eta(sum(o.size for o in todo))
    ahead = _read_ahead(conn, todo, known)
    switch = sys.getswitchinterval()
    if ahead is not None:  # the writer gets the GIL back quickly after each SQLite step
        sys.setswitchinterval(0.0005)
    try:
        _apply_each(conn, observed, infos, canonical, known, outcomes, progress, eta, ahead, bulk)
    finally:
        if ahead is not None:
            ahead.close()
            sys.setswitchinterval(switch)
        if os.environ.get("PIES_INDEX_STATS"):  # bench: the CPU of each thread (critical path)
            print(f"index stats: writer cpu {time.thread_time():.2f} s, read-ahead cpu "
                  f"{ahead.cpu if ahead else 0:.2f} s, bulk {bulk}", file=sys.stderr)
    for outcome in outcomes.values():
        report.count(outcome)


def _apply_each(conn: sqlite3.Connection, observed: list[Observation],
                infos: dict[str, HeaderInfo], canonical: dict[str, Observation],
                known: dict[str, FileRow], outcomes: dict[str, Outcome],
                progress: Progress | None, eta: Eta, ahead: ReadAhead | None, bulk: bool
                ) -> None:
    def one(obs: Observation) -> None:
        info = infos[obs.path]
        if info.session_id is None:
            _not_a_session(conn, obs, info, known.get(obs.path), outcomes)
        elif canonical[info.session_id].path != obs.path:
            _duplicate(conn, obs, info.session_id, canonical[info.session_id].path)
        elif _settled(obs, known.get(obs.path)):
            outcomes[obs.path] = Outcome("unchanged")
        else:
            parsed = ahead.take(obs.path) if ahead is not None else None
            outcome = outcomes[obs.path] = apply_file(conn, obs, info.session_id, parsed)
            batch.dirty |= outcome.change in ("appended", "rebuilt")
            eta.add(obs.size)

    with store.WriteBatch(conn) as batch:
        if bulk:
            batch.seconds *= store.BULK_COMMIT_FACTOR
        applied: list[Observation] = []  # in the open transaction
        for i, obs in enumerate(observed):
            if progress is not None:
                progress(i, len(observed), eta.text())
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


def _same_stat(obs: Observation, row: FileRow) -> bool:
    return (row.dev, row.ino, row.size, row.mtime_ns) \
        == (obs.dev, obs.ino, obs.size, obs.mtime_ns)


def _settled(obs: Observation, row: FileRow | None) -> bool:
    """Indexed, and not touched since (old enough that its mtime cannot hide a change): skip
    without opening it. Keeps a refresh with nothing new cheap on big histories."""
    return row is not None and row.status == "indexed" and _same_stat(obs, row) \
        and time.time_ns() - obs.mtime_ns > RACY_NS


def _header(obs: Observation, row: FileRow | None) -> HeaderInfo:
    """The file's session id, re-read only when the file changed since we last saw it."""
    if row is not None and _same_stat(obs, row) \
            and row.status in ("indexed", "duplicate", "skipped"):
        session_id, reason = row.session_id, row.reason
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
                   row: FileRow | None, outcomes: dict[str, Outcome]) -> None:
    reason = info.reason or "not a session"
    if row is not None and row.status in ("indexed", "stale") \
            and isinstance(row.session_id, str):
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
