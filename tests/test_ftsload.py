"""A bulk load's full-text rows written by a second writer into a side database, then copied into
the main index (ftsload.py): the index it leaves is the one a single writer leaves, byte for byte
where it counts (every row, every term's document and occurrence counts, FTS5's integrity check),
and nothing of the side database stays behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from builder import SessionBuilder
from engine_support import ALL, hits, snapshot
from pi_event_search.service.engine import Engine
from pi_event_search.source.discovery import default_dirs


def _corpus(root: Path) -> Path:
    sessions_dir = root / "agent" / "sessions"
    for i in range(20):
        sb = SessionBuilder(sessions_dir, f"/home/dev/proj{i % 3}")
        for j in range(5):
            sb.user(f"question {i}.{j} about the flaky reconnect loop " + f"word{j} " * 150)
            call = f"call_{i}_{j}"
            sb.assistant(f"Checking {i}.{j}", tool_calls=[(call, "bash", {"command": f"make t{j}"})])
            sb.tool_result(call, "bash", f"FAIL t{j} café\n" + "frame line\n" * 300,
                           is_error=j % 2 == 0)
        if i % 4 == 0:  # a session file copied by a fork: the same entries twice
            sb.fork(sessions_dir)
    return sessions_dir


def _load(sessions_dir: Path, index: Path, monkeypatch: pytest.MonkeyPatch, side: str
          ) -> tuple[list[tuple[object, ...]], int]:
    monkeypatch.setenv("PIES_FTS_LOAD", side)
    e = Engine(index, default_dirs(sessions_dir, []))
    try:
        e.refresh()
        found = len(hits(e, "reconnect", ALL))
        return snapshot(e), found
    finally:
        e.close()


def test_the_side_load_leaves_the_index_a_single_writer_leaves(tmp_path, monkeypatch):
    sessions_dir = _corpus(tmp_path)
    side, found = _load(sessions_dir, tmp_path / "side.sqlite3", monkeypatch, "1")
    direct, found_direct = _load(sessions_dir, tmp_path / "direct.sqlite3", monkeypatch, "0")
    assert side == direct
    assert found == found_direct > 0
    assert not list(tmp_path.glob("*.fts-load*"))


def test_later_writes_after_a_side_load_go_to_the_main_index(tmp_path, monkeypatch):
    sessions_dir = _corpus(tmp_path)
    monkeypatch.setenv("PIES_FTS_LOAD", "1")
    e = Engine(tmp_path / "index.sqlite3", default_dirs(sessions_dir, []))
    try:
        e.refresh()
        sb = SessionBuilder(sessions_dir, "/home/dev/proj9")
        sb.user("an appended question about zebrafish")
        e.refresh()
        assert [h["entryId"] for h in hits(e, "zebrafish", ALL)] == sb.ids
        e.conn.execute("INSERT INTO fts(fts) VALUES ('integrity-check')")
    finally:
        e.close()
