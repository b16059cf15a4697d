"""One indexing pass over the sessions directories: observe, pick canonical files, apply, forget.

A session leaves the index only when its file is confirmed gone while its directory is readable;
an unreadable root (an unmounted archive) marks its sessions unavailable instead.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from pi_event_search.index import ftsload, store, textcodec
from pi_event_search.index import progress as progress_mod
from pi_event_search.index.filestate import FileRow, FilesCache, known_files, quiet
from pi_event_search.index.fulltext import FullText
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
FIRST_SLICE_BYTES = 16 << 20  # newest sessions a first index commits as it goes (about 1 s)
PUBLISH_FILES = 50  # a refresh of this many files says how far it has come


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


@dataclass(slots=True)
class Pass:
    """One indexing pass: what it observed and decided, and where its rows go."""

    conn: sqlite3.Connection
    fulltext: FullText
    observed: list[Observation]
    infos: dict[str, HeaderInfo]
    canonical: dict[str, Observation]
    known: dict[str, FileRow]
    todo: list[Observation]
    bulk: bool
    progress: Progress | None
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    eta: Eta = field(default_factory=lambda: Eta(0))
    ahead: ReadAhead | None = None
    phase: str | None = None  # published for readers (progress.publish) when not None
    done: int = 0  # session files applied so far, of len(todo) (or of total when set)
    total: int = 0
    commit_first: bool = False  # commit right after the first session file applied


def refresh(conn: sqlite3.Connection, dirs: list[SessionDir],
            progress: Progress | None = None, files: FilesCache | None = None) -> Report:
    """Bring the index up to date with what is on disk now. A first index (or a rebuild) applies
    the newest sessions first and commits them as it goes: they answer searches within a second
    or two, while the rest goes on at the bulk load's speed (docs/process-model.md)."""
    ftsload.wait_for_other_loader(conn)
    observed, unavailable = scan(dirs)
    roots = {d.path for d in dirs}
    report = Report(files=len(observed))
    known, settled = files.read(conn) if files is not None else known_files(conn)
    if not unavailable and quiet(observed, known, settled, roots):
        # Nothing to open, write or forget: no write transaction at all (but once, to say that
        # a new index, or one whose writer died in a pass, is complete).
        if progress_mod.indexing(conn) is not None:
            with store.transaction(conn):
                progress_mod.clear(conn)
        report.changed["unchanged"] = settled.indexed
        report.generation = store.generation(conn)
        return report
    pending = store.bulk_pending(conn)
    fresh = not known
    early = _newest_first(conn, observed, report, progress) if fresh else set()
    if fresh:
        known, settled = known_files(conn)
    infos = _headers(observed, known)
    canonical = _canonical(observed, infos)
    todo = [o for o in observed if _to_apply(o, infos[o.path], canonical, known.get(o.path))
            or o.path in early]
    early = {o.path for o in todo if o.path in early and _still_done(o, infos, canonical, known)}
    new = sum(o.size for o in todo if _fresh(known.get(o.path)))
    bulk = fresh or pending or new >= BULK_BYTES
    phase = progress_mod.FIRST_INDEX if fresh or (pending and not settled.indexed) \
        else progress_mod.REBUILD if bulk else progress_mod.REFRESH
    p = Pass(conn, FullText(conn), observed, infos, canonical, known, todo, bulk, progress,
             phase=phase if bulk or len(todo) >= PUBLISH_FILES else None)
    if p.phase is not None and not fresh:  # readers know at once that a pass is under way
        with store.transaction(conn):
            progress_mod.publish(conn, p.phase, 0, len(todo))
    load = None
    try:
        if bulk:
            load = _bulk_apply(p, report, fresh, early)
        else:
            _apply_all(p, report)
        with store.WriteBatch(conn, fulltext=p.fulltext) as batch:
            batch.begin()
            report.removed = _forget(p, {o.path for o in observed}, roots, unavailable)
            batch.dirty |= report.removed > 0
            if p.phase is not None and not bulk:
                progress_mod.clear(conn)
        if bulk:
            _end_bulk(conn, load, progress, len(observed))
    except BaseException:
        if load is not None:
            load.abandon()  # releases its lock; the flags stay and the next pass resumes
        raise
    report.generation = store.generation(conn)
    if progress is not None:
        progress(len(observed), len(observed), "")
    return report


def _newest_first(conn: sqlite3.Connection, observed: list[Observation], report: Report,
                  progress: Progress | None) -> set[str]:
    """A first index's newest sessions, up to FIRST_SLICE_BYTES, before anything else but the
    dictionary: before the other files' headers are read (4 s at 5.5 GB from a cold page cache).
    Straight into the main full-text index, the newest session committed at once, the rest
    every half second: they answer searches within a second. A file bigger than the slice
    on its own (a 100 MB live session) waits for the bulk load: it would hold the first commit
    back. Returns the session files applied; the pass then checks them against every file (a
    longer copy of one of these sessions elsewhere takes over, as in any pass)."""
    store.bulk_begin(conn)
    with store.transaction(conn):  # readers know at once that a first index is under way
        progress_mod.publish(conn, progress_mod.FIRST_INDEX, 0, len(observed))
    head: list[Observation] = []
    budget = FIRST_SLICE_BYTES
    for obs in sorted(observed, key=lambda o: -o.mtime_ns):
        if obs.size > budget:
            if obs.size <= FIRST_SLICE_BYTES:
                break  # the slice is full: it stays the newest sessions in a row
            continue
        head.append(obs)
        budget -= obs.size
    if textcodec.packer(conn) is textcodec.PLAIN:  # the index's first load: a dictionary
        _train(conn, [o.path for o in observed])
    infos = _headers(head, {})
    canonical = _canonical(head, infos)
    todo = [o for o in head if _to_apply(o, infos[o.path], canonical, None)]
    p = Pass(conn, FullText(conn), head, infos, canonical, {}, todo, False, progress,
             phase=progress_mod.FIRST_INDEX, total=len(observed), commit_first=True)
    _apply_all(p, report)
    return {o.path for o in todo}


def _train(conn: sqlite3.Connection, paths: list[str]) -> None:
    """The index's compression dictionary, from a sample of these files (0.3 s at 1 GB: 64 files'
    first 256 KB). Trained before the first slice rather than after it: the same first answer
    give or take 0.3 s, and a dictionary-less slice cost its load 15 MB of memory in each of
    the writer and the full-text worker."""
    with store.transaction(conn):
        textcodec.train(conn, sample_texts(paths))


def _still_done(obs: Observation, infos: dict[str, HeaderInfo],
                canonical: dict[str, Observation], known: dict[str, FileRow]) -> bool:
    """A file of the first slice needs nothing more: indexed as it is now, and still the
    canonical file of its session now that every header is known."""
    row, sid = known.get(obs.path), infos[obs.path].session_id
    return row is not None and row.status == "indexed" and _same_stat(obs, row) \
        and sid is not None and canonical[sid].path == obs.path


def _bulk_apply(p: Pass, report: Report, fresh: bool, early: set[str]
                ) -> ftsload.FtsLoad | None:
    """Newest first, through the side load (ftsload) when it can be copied in at the end: into an
    empty full-text index, or a first index's (`fresh`) whose only rows are its first slice
    (`early`, already applied: the load starts by catching up with them)."""
    conn = p.conn
    store.bulk_begin(conn)
    if textcodec.packer(conn) is textcodec.PLAIN:  # the index's first load: a dictionary
        _train(conn, [o.path for o in p.todo])
    everything = p.observed
    p.observed = sorted((o for o in everything if o.path not in early),
                        key=lambda o: -o.mtime_ns)
    p.done = len(early)
    load = ftsload.begin(conn, first=fresh)
    p.fulltext = load or FullText(conn)
    _apply_all(p, report)
    p.observed = everything
    return load


def _end_bulk(conn: sqlite3.Connection, load: ftsload.FtsLoad | None, progress: Progress | None,
              files: int) -> None:
    if progress is not None:
        progress(files, files, "merging the full-text index")
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
    with store.transaction(conn):
        progress_mod.clear(conn)
    if os.environ.get("PIES_INDEX_STATS"):
        print(f"index stats: final merge and indexes {time.monotonic() - started:.2f} s",
              file=sys.stderr)


def _to_apply(obs: Observation, info: HeaderInfo, canonical: dict[str, Observation],
              row: FileRow | None) -> bool:
    """Whether the pass opens this file (a canonical session file that changed)."""
    return info.session_id is not None and canonical[info.session_id].path == obs.path \
        and not _settled(obs, row)


def _fresh(row: FileRow | None) -> bool:
    """Not indexed yet (or no longer): the file will be parsed whole, not appended to."""
    return row is None or row.status != "indexed"


def _read_ahead(p: Pass) -> ReadAhead | None:
    """A parsing thread for the files that will be parsed whole, when there is a second core and
    enough work to be worth one (in the order the pass applies them)."""
    todo = {o.path for o in p.todo}
    paths = [o.path for o in p.observed if o.path in todo and _fresh(p.known.get(o.path))]
    if cores() < 2 or len(paths) < 2:
        return None
    return ReadAhead(paths, textcodec.packer(p.conn))


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
    fulltext = FullText(conn)
    with store.WriteBatch(conn, fulltext=fulltext) as batch:
        batch.begin()
        for obs, session_id in observed:
            outcome = apply_file(conn, fulltext, obs, session_id)
            report.count(outcome)
            batch.dirty |= outcome.change in ("appended", "rebuilt")
    report.generation = store.generation(conn)
    return report


@contextmanager
def _short_switch_interval(on: bool) -> Iterator[None]:
    """While a read-ahead thread parses beside the writer, the writer gets the GIL back quickly
    after each SQLite step (the default 5 ms interval left it waiting). CPython's interval is
    process-wide: in the language server it also applies, for the pass only, to the event loop
    and request threads, which then also get the GIL sooner (shorter waits, a little more
    switching overhead). Restored on every exit."""
    if not on:
        yield
        return
    before = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def _apply_all(p: Pass, report: Report) -> None:
    if not p.observed:
        return
    p.eta = Eta(sum(o.size for o in p.todo))
    p.ahead = _read_ahead(p)
    try:
        with _short_switch_interval(p.ahead is not None):
            _apply_each(p)
    finally:
        if p.ahead is not None:
            p.ahead.close()
        if os.environ.get("PIES_INDEX_STATS"):  # bench: the CPU of each thread (critical path)
            print(f"index stats: writer cpu {time.thread_time():.2f} s, read-ahead cpu "
                  f"{p.ahead.cpu if p.ahead else 0:.2f} s, bulk {p.bulk}", file=sys.stderr)
    for outcome in p.outcomes.values():
        report.count(outcome)
    p.outcomes.clear()  # a first index applies in two slices: each counted once


def _apply_one(p: Pass, batch: store.WriteBatch, obs: Observation) -> None:
    info = p.infos[obs.path]
    if info.session_id is None:
        _not_a_session(p.conn, obs, info, p.known.get(obs.path), p.outcomes)
    elif p.canonical[info.session_id].path != obs.path:
        _duplicate(p.conn, obs, info.session_id, p.canonical[info.session_id].path)
    elif _settled(obs, p.known.get(obs.path)):
        p.outcomes[obs.path] = Outcome("unchanged")
    else:
        parsed = p.ahead.take(obs.path) if p.ahead is not None else None
        outcome = p.outcomes[obs.path] = apply_file(p.conn, p.fulltext, obs, info.session_id,
                                                    parsed)
        batch.dirty |= outcome.change in ("appended", "rebuilt")
        p.eta.add(obs.size)
        p.done += 1


def _apply_each(p: Pass) -> None:
    with store.WriteBatch(p.conn, fulltext=p.fulltext) as batch:
        if p.bulk:
            batch.seconds *= store.BULK_COMMIT_FACTOR
        if p.phase is not None:
            phase = p.phase
            batch.before_commit = lambda: progress_mod.publish(p.conn, phase, p.done,
                                                               p.total or len(p.todo))
        applied: list[Observation] = []  # in the open transaction
        for i, obs in enumerate(p.observed):
            if p.progress is not None:
                p.progress(i, len(p.observed), p.eta.text())
            batch.begin()
            try:
                _apply_one(p, batch, obs)
                applied.append(obs)
            except Exception as exc:  # one broken file never stops the others
                batch.rollback()
                batch.begin()
                for done in applied:
                    _apply_one(p, batch, done)
                mark_stale(p.conn, obs.path, f"indexing failed: {type(exc).__name__}: {exc}")
                p.outcomes[obs.path] = Outcome("stale", error=str(exc))
            if p.commit_first and p.done:
                p.commit_first = False
                batch.commit()
            if batch.maybe_commit() or batch.started is None:
                applied.clear()


def _same_stat(obs: Observation, row: FileRow) -> bool:
    return (row.dev, row.ino, row.size, row.mtime_ns) \
        == (obs.dev, obs.ino, obs.size, obs.mtime_ns)


def _settled(obs: Observation, row: FileRow | None) -> bool:
    """Indexed, and not touched since (old enough that its mtime cannot hide a change): skip
    without opening it. Keeps a refresh with nothing new cheap on big histories."""
    return row is not None and row.status == "indexed" and _same_stat(obs, row) \
        and time.time_ns() - obs.mtime_ns > RACY_NS


def _headers(observed: list[Observation], known: dict[str, FileRow]) -> dict[str, HeaderInfo]:
    """Each file's session id, re-read only when the file changed since we last saw it."""
    return {o.path: _header(o, known.get(o.path)) for o in observed}


def _header(obs: Observation, row: FileRow | None) -> HeaderInfo:
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


def _forget(p: Pass, seen: set[str], roots: set[str], unavailable: set[str]) -> int:
    """Drop files confirmed gone; mark those under unreadable roots unavailable."""
    conn, removed = p.conn, 0
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
            drop_session(conn, p.fulltext, sess["sid"])
            removed += 1
        conn.execute("DELETE FROM files WHERE path = ?", (path,))
    return removed
