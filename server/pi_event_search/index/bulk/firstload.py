"""A bulk pass (a first index, or 256 MB of new text): newest sessions first.

A first index applies its newest sessions straight into the main full-text index before anything
else, then the rest through the side load (ftsload), which copies its full-text index in at the
end (docs/process-model.md, "The first index").
"""

from __future__ import annotations

import os
import sqlite3
import sys
import time

from pi_event_search.index import passes, store, textcodec
from pi_event_search.index import progress as progress_mod
from pi_event_search.index.bulk import ftsload, mode
from pi_event_search.index.bulk.passscope import PassScope
from pi_event_search.index.filestate import FileRow
from pi_event_search.index.fulltext import FullText
from pi_event_search.index.passes import Pass, Progress, Report
from pi_event_search.index.prepare import sample_texts
from pi_event_search.source.discovery import HeaderInfo, Observation
from pi_event_search.source.extractors import Registry

FIRST_SLICE_BYTES = 16 << 20  # newest sessions a first index commits as it goes (about 1 s)
SLICE_ONLY = "first_slice"  # meta key: a first index whose full-text rows are its slice's only


def newest_first(conn: sqlite3.Connection, observed: list[Observation], report: Report,
                 progress: Progress | None, extractors: Registry) -> set[str]:
    """A first index's newest sessions, up to FIRST_SLICE_BYTES, before anything else but the
    dictionary: before the other files' headers are read (4 s at 5.5 GB from a cold page cache).
    Straight into the main full-text index, the newest session committed at once, the rest
    every half second: they answer searches within a second. A file bigger than the slice
    on its own (a 100 MB live session) waits for the bulk load: it would hold the first commit
    back. Returns the session files applied; the pass then checks them against every file (a
    longer copy of one of these sessions elsewhere takes over, as in any pass)."""
    mode.bulk_begin(conn)
    with store.transaction(conn):  # readers know at once that a first index is under way
        progress_mod.publish(conn, progress_mod.FIRST_INDEX, 0, len(observed))
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, '1')", (SLICE_ONLY,))
    head: list[Observation] = []
    budget = FIRST_SLICE_BYTES
    for obs in sorted(observed, key=lambda o: -o.mtime_ns):
        if obs.size > budget:
            if obs.size <= FIRST_SLICE_BYTES:
                break  # the slice is full: it stays the newest sessions in a row
            continue
        head.append(obs)
        budget -= obs.size
    _ensure_dictionary(conn, [o.path for o in observed])
    infos = passes.read_headers(head, {})
    canonical = passes.canonical_files(head, infos)
    todo = [o for o in head if passes.to_apply(o, infos[o.path], canonical, None)]
    p = Pass(conn, FullText(conn), head, infos, canonical, {}, todo, False, progress,
             phase=progress_mod.FIRST_INDEX, total=len(observed), commit_first=True,
             extractors=extractors)
    passes.apply_all(p, report)
    return {o.path for o in todo}


def _ensure_dictionary(conn: sqlite3.Connection, paths: list[str]) -> None:
    """The index's compression dictionary, at its first load, from a sample of these files (0.3 s
    at 1 GB: 64 files' first 256 KB). Trained before the first slice rather than after it: the
    same first answer give or take 0.3 s, and a dictionary-less slice cost its load 15 MB of
    memory in each of the writer and the full-text worker."""
    if textcodec.packer(conn) is not textcodec.PLAIN:
        return
    with store.transaction(conn):
        textcodec.train(conn, sample_texts(paths))


def slice_only(conn: sqlite3.Connection) -> bool:
    """A first index was stopped after its newest slice, before the side load began (a kill in
    its first second or two): its only full-text rows are the slice's, so the side load can still
    take the rest, catching them up, instead of one writer doing it all."""
    return conn.execute("SELECT 1 FROM meta WHERE key = ?", (SLICE_ONLY,)).fetchone() is not None


def still_done(obs: Observation, infos: dict[str, HeaderInfo],
               canonical: dict[str, Observation], known: dict[str, FileRow]) -> bool:
    """A file of the first slice needs nothing more: indexed as it is now, and still the
    canonical file of its session now that every header is known."""
    row, sid = known.get(obs.path), infos[obs.path].session_id
    return row is not None and row.status == "indexed" and passes.same_stat(obs, row) \
        and sid is not None and canonical[sid].path == obs.path


def bulk_apply(p: Pass, report: Report, first: bool, early: set[str], scope: PassScope) -> None:
    """Newest first, through the side load (ftsload) when it can be copied in at the end: into an
    empty full-text index, or a first index's (`first`) whose only rows are its first slice
    (`early`, already applied, or applied by a pass that was stopped: the load starts by catching
    up with them). The side load belongs to `scope` from its start: whatever raises after it,
    its worker stops and its lock is released."""
    conn = p.conn
    mode.bulk_begin(conn)
    _ensure_dictionary(conn, [o.path for o in p.todo])
    everything = p.observed
    p.observed = sorted((o for o in everything if o.path not in early),
                        key=lambda o: -o.mtime_ns)
    p.done = len(early)
    p.fulltext = ftsload.begin(conn, scope, first=first) or FullText(conn)
    passes.apply_all(p, report)
    p.observed = everything


def end_bulk(conn: sqlite3.Connection, scope: PassScope, progress: Progress | None,
             files: int) -> None:
    if progress is not None:
        progress(files, files, "merging the full-text index")
    started = time.monotonic()
    load = scope.load
    if load is not None:
        load.close_input()
        mode.bulk_indexes(conn)  # while the side thread merges
        load.finish()
        if os.environ.get("PIES_INDEX_STATS"):
            print(f"index stats: full-text worker cpu {load.cpu:.2f} s; peak rss "
                  f"{load.rss[0]:.1f} MB here, {load.rss[1]:.1f} MB in the worker",
                  file=sys.stderr)
        scope.load = None  # finished: its worker has exited and its lock is released
    mode.bulk_end(conn)
    with store.transaction(conn):
        progress_mod.clear(conn)
        conn.execute("DELETE FROM meta WHERE key = ?", (SLICE_ONLY,))
    if os.environ.get("PIES_INDEX_STATS"):
        print(f"index stats: final merge and indexes {time.monotonic() - started:.2f} s",
              file=sys.stderr)
