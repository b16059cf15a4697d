"""Applying a pass's files: which files a pass opens, one session file per session id, and the
write batches they go in (a read-ahead thread parsing on the second core; one broken file never
stops the others).
"""

from __future__ import annotations

import os
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from pi_event_search.index import progress as progress_mod
from pi_event_search.index import textcodec, writes
from pi_event_search.index.filestate import FileRow
from pi_event_search.index.fulltext import FullText
from pi_event_search.index.ingest import Outcome, apply_file, mark_stale
from pi_event_search.index.progress import Eta
from pi_event_search.index.readahead import ReadAhead, cores
from pi_event_search.source.discovery import RACY_NS, HeaderInfo, Observation, read_header_info
from pi_event_search.source.extractors import EMPTY, Registry

# (files done, files in the pass, what is happening: bytes done of bytes to do and time left)
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
    extractors: Registry = EMPTY  # the registry the index records (registry.py)


def _read_ahead(p: Pass) -> ReadAhead | None:
    """A parsing thread for the files that will be parsed whole, when there is a second core and
    enough work to be worth one (in the order the pass applies them)."""
    todo = {o.path for o in p.todo}
    paths = [o.path for o in p.observed if o.path in todo and is_fresh(p.known.get(o.path))]
    if cores() < 2 or len(paths) < 2:
        return None
    return ReadAhead(paths, textcodec.packer(p.conn), p.extractors)


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


def apply_all(p: Pass, report: Report) -> None:
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


def _apply_one(p: Pass, batch: writes.WriteBatch, obs: Observation) -> None:
    info = p.infos[obs.path]
    if info.session_id is None:
        _not_a_session(p.conn, obs, info, p.known.get(obs.path), p.outcomes)
    elif p.canonical[info.session_id].path != obs.path:
        _duplicate(p.conn, obs, info.session_id, p.canonical[info.session_id].path)
    elif is_settled(obs, p.known.get(obs.path)):
        p.outcomes[obs.path] = Outcome("unchanged")
    else:
        parsed = p.ahead.take(obs.path) if p.ahead is not None else None
        outcome = p.outcomes[obs.path] = apply_file(p.conn, p.fulltext, obs, info.session_id,
                                                    parsed, extractors=p.extractors)
        batch.dirty |= outcome.change in ("appended", "rebuilt")
        p.eta.add(obs.size)
        p.done += 1


def _apply_each(p: Pass) -> None:
    with writes.WriteBatch(p.conn, fulltext=p.fulltext) as batch:
        if p.bulk:
            batch.seconds *= writes.BULK_COMMIT_FACTOR
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


def same_stat(obs: Observation, row: FileRow) -> bool:
    return (row.dev, row.ino, row.size, row.mtime_ns) \
        == (obs.dev, obs.ino, obs.size, obs.mtime_ns)


def is_settled(obs: Observation, row: FileRow | None) -> bool:
    """Indexed, and not touched since (old enough that its mtime cannot hide a change): skip
    without opening it. Keeps a refresh with nothing new cheap on big histories."""
    return row is not None and row.status == "indexed" and same_stat(obs, row) \
        and time.time_ns() - obs.mtime_ns > RACY_NS


def to_apply(obs: Observation, info: HeaderInfo, canonical: dict[str, Observation],
             row: FileRow | None) -> bool:
    """Whether the pass opens this file (a canonical session file that changed)."""
    return info.session_id is not None and canonical[info.session_id].path == obs.path \
        and not is_settled(obs, row)


def is_fresh(row: FileRow | None) -> bool:
    """Not indexed yet (or no longer): the file will be parsed whole, not appended to."""
    return row is None or row.status != "indexed"


def read_headers(observed: list[Observation], known: dict[str, FileRow]) -> dict[str, HeaderInfo]:
    """Each file's session id, re-read only when the file changed since we last saw it."""
    return {o.path: _header(o, known.get(o.path)) for o in observed}


def _header(obs: Observation, row: FileRow | None) -> HeaderInfo:
    if row is not None and same_stat(obs, row) \
            and row.status in ("indexed", "duplicate", "skipped"):
        session_id, reason = row.session_id, row.reason
        return HeaderInfo(session_id if isinstance(session_id, str) else None,
                          reason if isinstance(reason, str) else None)
    return read_header_info(obs.path)


def canonical_files(observed: list[Observation], infos: dict[str, HeaderInfo]
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
