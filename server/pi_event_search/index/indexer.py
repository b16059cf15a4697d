"""One indexing pass over the sessions directories: observe, pick canonical files, apply, forget.

A session leaves the index only when its file is confirmed gone while its directory is readable;
an unreadable root (an unmounted archive) marks its sessions unavailable instead. How files are
applied: passes.py; a bulk pass, newest first: firstload.py.
"""

from __future__ import annotations

import os
import sqlite3

from pi_event_search.index import dirseen, passes, registry, store, writes
from pi_event_search.index import progress as progress_mod
from pi_event_search.index.bulk import firstload
from pi_event_search.index.bulk.firstload import FIRST_SLICE_BYTES
from pi_event_search.index.bulk.passscope import PassScope
from pi_event_search.index.filestate import FileRow, FilesCache, Settled, known_files, quiet
from pi_event_search.index.fulltext import FullText
from pi_event_search.index.ingest import apply_file
from pi_event_search.index.passes import Pass, Progress, Report
from pi_event_search.index.sessions import drop_session
from pi_event_search.source.discovery import Observation, SessionDir, scan
from pi_event_search.source.extractors import EMPTY, Registry

__all__ = ["FIRST_SLICE_BYTES", "Progress", "Report", "refresh", "refresh_paths"]

BULK_BYTES = 256 << 20  # new bytes that make a pass a bulk load even on a non-empty index
PUBLISH_FILES = 50  # a refresh of this many files says how far it has come


def refresh(conn: sqlite3.Connection, dirs: list[SessionDir],
            progress: Progress | None = None, files: FilesCache | None = None,
            extractors: Registry | None = EMPTY) -> Report:
    """Bring the index up to date with what is on disk now. A first index (or a rebuild) applies
    the newest sessions first and commits them as it goes: they answer searches within a second
    or two, while the rest goes on at the bulk load's speed (docs/process-model.md).
    `extractors`: this writer's registry, made the index's first (None: the index's; both
    registry.py)."""
    projecting, _ = registry.reconcile(conn, extractors)
    observed, unavailable = scan(dirs)
    roots = {d.path for d in dirs}
    report = Report(files=len(observed))
    known, settled = files.read(conn) if files is not None else known_files(conn)
    if not unavailable and quiet(observed, known, settled, roots):
        # Nothing to open, write or forget: no write transaction at all (but once, to say that
        # a new index, or one whose writer died in a pass, is complete; and once a day, to say
        # that these directories are still read: dirseen.py).
        finishing = progress_mod.indexing(conn) is not None
        if finishing or dirseen.due(conn, roots):
            with store.transaction(conn):
                if finishing:
                    progress_mod.clear(conn)
                dirseen.stamp(conn, roots)
        report.changed["unchanged"] = settled.indexed
        report.generation = store.generation(conn)
        return report
    with PassScope(conn) as scope:
        _apply(conn, dirs, progress, report, observed, unavailable, known, settled, scope,
               projecting)
    report.generation = store.generation(conn)
    if progress is not None:
        progress(len(observed), len(observed), "")
    return report


def _apply(conn: sqlite3.Connection, dirs: list[SessionDir], progress: Progress | None,
           report: Report, observed: list[Observation], unavailable: set[str],
           known: dict[str, FileRow], settled: Settled, scope: PassScope,
           extractors: Registry) -> None:
    """A pass that has something to write: its resources belong to `scope` (passscope.py)."""
    roots = {d.path for d in dirs}
    pending = progress_mod.bulk_pending(conn)
    fresh = not known
    first = fresh or (pending and firstload.slice_only(conn))  # the side load may take the rest
    early = firstload.newest_first(conn, observed, report, progress, extractors) \
        if fresh else set()
    if fresh:
        known, settled = known_files(conn)
    infos = passes.read_headers(observed, known)
    canonical = passes.canonical_files(observed, infos)
    todo = [o for o in observed if passes.to_apply(o, infos[o.path], canonical, known.get(o.path))
            or o.path in early]
    early = {o.path for o in todo
             if o.path in early and firstload.still_done(o, infos, canonical, known)}
    new = sum(o.size for o in todo if passes.is_fresh(known.get(o.path)))
    bulk = fresh or pending or new >= BULK_BYTES
    phase = progress_mod.FIRST_INDEX if first or (pending and not settled.indexed) \
        else progress_mod.REBUILD if bulk else progress_mod.REFRESH
    p = Pass(conn, FullText(conn), observed, infos, canonical, known, todo, bulk, progress,
             phase=phase if bulk or len(todo) >= PUBLISH_FILES else None,
             extractors=extractors)
    if p.phase is not None and not fresh:  # readers know at once that a pass is under way
        with store.transaction(conn):
            progress_mod.publish(conn, p.phase, 0, len(todo))
    if bulk:
        firstload.bulk_apply(p, report, first, early, scope)
    else:
        passes.apply_all(p, report)
    with writes.WriteBatch(conn, fulltext=p.fulltext) as batch:
        batch.begin()
        report.removed = _forget(p, {o.path for o in observed}, roots, unavailable)
        batch.dirty |= report.removed > 0
        if p.phase is not None and not bulk:
            progress_mod.clear(conn)
    if bulk:
        firstload.end_bulk(conn, scope, progress, len(observed))


def refresh_paths(conn: sqlite3.Connection, paths: set[str],
                  extractors: Registry | None = EMPTY) -> Report | None:
    """Apply just these files (a watcher's hint that they grew), when each is a known, indexed
    session file that still exists; None when only a full refresh can tell what happened (or
    finish a bulk load: its full-text rows must go through its side database; or project again
    the sessions a changed registry concerns)."""
    if conn.execute("SELECT 1 FROM meta WHERE key = 'fts_load'").fetchone() is not None:
        return None
    projecting, marked = registry.reconcile(conn, extractors)
    if marked:
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
    with writes.WriteBatch(conn, fulltext=fulltext) as batch:
        batch.begin()
        for obs, session_id in observed:
            outcome = apply_file(conn, fulltext, obs, session_id, extractors=projecting)
            report.count(outcome)
            batch.dirty |= outcome.change in ("appended", "rebuilt")
    report.generation = store.generation(conn)
    return report


def _forget(p: Pass, seen: set[str], roots: set[str], unavailable: set[str]) -> int:
    """Drop files confirmed gone, and those of directories no pass has read for long
    (dirseen.py); mark those under unreadable roots unavailable."""
    conn, removed = p.conn, 0
    rows = conn.execute("SELECT path, root FROM files").fetchall()
    dirseen.stamp(conn, roots - unavailable)
    abandoned = dirseen.forgotten(conn, {r["root"] for r in rows} - roots)
    for row in rows:
        path, root = row["path"], row["root"]
        if path in seen:
            continue
        if root in unavailable or (root not in roots and root not in abandoned):
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
