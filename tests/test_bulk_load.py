"""Bulk loads: a cold index is one, it ends in the ordinary index shape (deferred indexes built,
FTS5 settings restored, free pages returned), and a load killed midway (a real SIGKILL of the CLI)
is resumed and finished by the next pass, equal to a clean index of the same files."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from builder import SessionBuilder
from engine_support import snapshot
from pi_event_search.index import progress
from pi_event_search.index.bulk import mode
from pi_event_search.service.engine import Engine
from pi_event_search.source.discovery import default_dirs


def _corpus(root: Path, sessions: int) -> Path:
    sessions_dir = root / "agent" / "sessions"
    for i in range(sessions):
        sb = SessionBuilder(sessions_dir, f"/home/dev/proj{i % 5}")
        for j in range(6):
            sb.user(f"bulk question {i}.{j} about the reconnect loop " + "context " * 200)
            call = f"call_{i}_{j}"
            sb.assistant(f"Checking {i}.{j}", tool_calls=[(call, "bash", {"command": f"make t{j}"})])
            sb.tool_result(call, "bash", f"FAIL t{j}\n" + "frame line\n" * 400, is_error=j % 2 == 0)
    return sessions_dir


def _shape(conn: sqlite3.Connection) -> dict[str, object]:
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    config = dict(conn.execute("SELECT k, v FROM fts_config").fetchall())
    return {"bulk": progress.bulk_pending(conn), "deferred": sorted(set(mode.DEFERRED_INDEXES) & names),
            "automerge": config.get("automerge"), "hashsize": config.get("hashsize")}


NORMAL = {"bulk": False, "deferred": sorted(mode.DEFERRED_INDEXES),
          "automerge": mode.FTS_AUTOMERGE, "hashsize": mode.FTS_HASH}


def _clean(sessions_dir: Path, index: Path) -> list[tuple[object, ...]]:
    e = Engine(index, default_dirs(sessions_dir, []))
    try:
        e.refresh()
        return snapshot(e)
    finally:
        e.close()


def test_cold_index_is_a_bulk_load_that_ends_in_the_normal_shape(tmp_path: Path) -> None:
    sessions_dir = _corpus(tmp_path, 12)
    e = Engine(tmp_path / "index.sqlite3", default_dirs(sessions_dir, []))
    try:
        report = e.refresh()
        assert report.changed.get("rebuilt") == 12
        assert _shape(e.conn) == NORMAL
        assert e.conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2  # incremental
        assert e.conn.execute("PRAGMA freelist_count").fetchone()[0] == 0
        assert snapshot(e) == _clean(sessions_dir, tmp_path / "again.sqlite3")
    finally:
        e.close()


def _kill_mid_bulk(sessions_dir: Path, index: Path) -> bool:
    """SIGKILL `pi-event-search index` once it has committed sessions in bulk mode; False when
    the run ended before that could be seen."""
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(sessions_dir.parent),
           "PI_EVENT_SEARCH_INDEX": str(index), "XDG_CACHE_HOME": str(index.parent / "cache")}
    proc = subprocess.Popen([sys.executable, "-m", "pi_event_search", "index"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while proc.poll() is None:
            if index.exists():
                try:
                    conn = sqlite3.connect(f"file:{index}?mode=ro", uri=True, timeout=0.05)
                    try:
                        bulk = conn.execute("SELECT value FROM meta WHERE key = 'bulk'").fetchone()
                        done = conn.execute("SELECT count(*) FROM sessions").fetchone()[0]
                    finally:
                        conn.close()
                    if bulk == ("1",) and done > 0:
                        os.kill(proc.pid, signal.SIGKILL)
                        proc.wait(30)
                        return True
                except sqlite3.OperationalError:
                    pass  # schema not created yet, or busy
            time.sleep(0.002)
        return False
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("resume_side", ["1", "0"])
def test_a_killed_bulk_load_is_finished_by_the_next_pass(tmp_path: Path, resume_side: str,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Killed with the full-text side load on; resumed with it (the side index is fed the
    fragments already committed) and without it (they are indexed in the main index)."""
    monkeypatch.setenv("PIES_FTS_LOAD", "1")
    # A machine fast enough to finish the load before the kill lands gets a corpus three times
    # larger on the next attempt: the test never skips, whatever the machine.
    for attempt in range(4):
        count = 60 * 3 ** attempt
        sessions_dir = _corpus(tmp_path / f"corpus-{attempt}", count)
        index = tmp_path / f"killed-{attempt}.sqlite3"
        if _kill_mid_bulk(sessions_dir, index):
            break
    else:
        raise AssertionError("a cold index of 4,860 sessions finished before a kill could land")
    clean = _clean(sessions_dir, tmp_path / "clean.sqlite3")
    monkeypatch.setenv("PIES_FTS_LOAD", resume_side)
    e = Engine(index, default_dirs(sessions_dir, []))
    try:
        # Every committed fragment has its full-text row (an empty placeholder while loading).
        assert e.conn.execute("SELECT count(*) FROM fts_docsize").fetchone() == \
            e.conn.execute("SELECT count(*) FROM fragments").fetchone()
        left = _shape(e.conn)
        assert left["bulk"] is True and left["automerge"] == 0
        # Dropped for the load; built again at its end (before the full-text copy).
        assert left["deferred"] in ([], NORMAL["deferred"])
        partial = e.conn.execute("SELECT count(*) FROM sessions").fetchone()[0]
        assert 0 < partial <= count
        e.refresh()
        assert _shape(e.conn) == NORMAL
        assert snapshot(e) == clean
    finally:
        e.close()


def test_a_first_index_stopped_after_its_newest_slice_resumes_through_the_side_load(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Stopped between its newest slice (committed) and the side load's start: the next pass
    still loads the rest through the side load, catching the slice's rows up, and ends equal to
    a clean index."""
    from pi_event_search.index import indexer, passes
    from pi_event_search.index.bulk import firstload, ftsload

    monkeypatch.setenv("PIES_FTS_LOAD", "1")
    sessions_dir = _corpus(tmp_path, 12)
    sizes = sorted(f.stat().st_size for f in sessions_dir.rglob("*.jsonl"))
    monkeypatch.setattr(firstload, "FIRST_SLICE_BYTES", sum(sizes[-3:]))  # a few sessions
    read_headers = passes.read_headers

    def stop_after_the_slice(observed: list[object], known: dict[str, object]) -> object:
        if known:  # the pass's own call, after the slice: the process dies here
            raise KeyboardInterrupt
        return read_headers(observed, known)  # type: ignore[arg-type]

    monkeypatch.setattr(passes, "read_headers", stop_after_the_slice)
    e = Engine(tmp_path / "index.sqlite3", default_dirs(sessions_dir, []))
    try:
        with pytest.raises(KeyboardInterrupt):
            e.refresh()
        sliced = e.conn.execute("SELECT count(*) FROM sessions").fetchone()[0]
        assert 0 < sliced < 12 and firstload.slice_only(e.conn)
        monkeypatch.setattr(passes, "read_headers", read_headers)
        loads: list[object] = []
        monkeypatch.setattr(ftsload, "FtsLoad", _recording(ftsload.FtsLoad, loads))
        assert indexer.refresh(e.conn, e.dirs).changed.get("rebuilt") == 12 - sliced
        assert len(loads) == 1, "the rest went through the side load"
        assert _shape(e.conn) == NORMAL and not firstload.slice_only(e.conn)
        assert snapshot(e) == _clean(sessions_dir, tmp_path / "clean.sqlite3")
    finally:
        e.close()


def _recording(cls: type, made: list[object]) -> type:
    class Recorded(cls):  # type: ignore[valid-type,misc]
        def __init__(self, *args: object, **kwargs: object) -> None:
            made.append(self)
            super().__init__(*args, **kwargs)
    return Recorded
