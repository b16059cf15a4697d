"""Issue 31: a pass owns its resources. An exception injected at each step of a bulk load (the
side load's catch-up, a batch commit, forgetting gone files, the deferred indexes, the copy of the
side index, the end of bulk mode, clearing the progress) leaves no full-text worker running, the
side file unlocked and no transaction open; the same process's next pass then completes (it
waited two minutes on its own lock before, and failed) and equals a clean index."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from builder import SessionBuilder
from engine_support import snapshot
from pi_event_search.index import indexer, locks, progress, writes
from pi_event_search.index.bulk import firstload, ftsload, mode
from pi_event_search.service.engine import Engine
from pi_event_search.source.discovery import default_dirs
from support import fts_workers


class Injected(Exception):
    """The fault this test puts into a pass."""


def _corpus(root: Path, sessions: int = 10) -> Path:
    sessions_dir = root / "agent" / "sessions"
    for i in range(sessions):
        sb = SessionBuilder(sessions_dir, f"/home/dev/proj{i % 3}")
        for j in range(4):
            sb.user(f"scoped question {i}.{j} about the reconnect loop " + "context " * 100)
            call = f"call_{i}_{j}"
            sb.assistant(f"Checking {i}.{j}", tool_calls=[(call, "bash", {"command": f"make {j}"})])
            sb.tool_result(call, "bash", f"FAIL t{j}\n" + "frame line\n" * 100, is_error=True)
    return sessions_dir


def _fail_once(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str,
               when: Any = lambda *a, **k: True) -> list[int]:
    original = getattr(owner, name)
    hits: list[int] = []

    def failing(*args: Any, **kwargs: Any) -> Any:
        if not hits and when(*args, **kwargs):
            hits.append(1)
            raise Injected(f"injected into {name}")
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, failing)
    return hits


def _in_side_load(batch: writes.WriteBatch, *_: Any) -> bool:
    return isinstance(batch.fulltext, ftsload.FtsLoad)


SITES: dict[str, tuple[Any, str, Any]] = {
    "side-load catch-up": (ftsload.FtsLoad, "catch_up", None),
    "a batch commit during the load": (writes.WriteBatch, "maybe_commit", _in_side_load),
    "forgetting gone files": (indexer, "_forget", None),
    "closing the side load's input": (ftsload.FtsLoad, "close_input", None),
    "the deferred indexes": (mode, "bulk_indexes", None),
    "copying the side index in": (ftsload.FtsLoad, "finish", None),
    "leaving bulk mode": (mode, "bulk_end", None),
    "clearing the progress": (progress, "clear", None),
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("site", list(SITES))
def test_a_fault_at_each_step_of_a_bulk_load_releases_everything(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, site: str) -> None:
    monkeypatch.setenv("PIES_FTS_LOAD", "1")
    # Two minutes in the product; a test that fails should fail in seconds.
    monkeypatch.setattr(ftsload, "OTHER_LOADER_WAIT", 3.0)
    sessions_dir = _corpus(tmp_path)
    sizes = sorted(f.stat().st_size for f in sessions_dir.rglob("*.jsonl"))
    monkeypatch.setattr(firstload, "FIRST_SLICE_BYTES", sum(sizes[-2:]))  # the rest: side load
    owner, name, when = SITES[site]
    hits = _fail_once(monkeypatch, owner, name, when or (lambda *a, **k: True))
    e = Engine(tmp_path / "index.sqlite3", default_dirs(sessions_dir, []))
    try:
        with pytest.raises(Injected):
            e.refresh()
        assert hits, f"the pass never reached {site}"
        assert fts_workers({os.getpid()}) == [], "a full-text worker outlived its pass"
        side = ftsload.side_path(e.conn)
        fd = locks.try_lock(side)
        assert fd is not None, "the side file is still locked"
        locks.unlock(fd)
        assert e.conn is not None and not e.conn.in_transaction
        e.refresh()  # the same process, at once: nothing of the failed pass is in its way
        assert fts_workers({os.getpid()}) == []
        assert not progress.bulk_pending(e.conn)
        assert e.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        clean = Engine(tmp_path / "clean.sqlite3", default_dirs(sessions_dir, []))
        try:
            clean.refresh()
            assert snapshot(e) == snapshot(clean)
        finally:
            clean.close()
    finally:
        e.close()
