"""Issue 31: bounded waits everywhere. While the writer's pass is held up (here: another
connection keeps SQLite's write lock, as a stopped process inside a transaction would), a
burst of reindex requests answers, each with the generation the index is at, and searches answer
meanwhile (the requests waiting for the pass no longer take the threads that reads run in). An
index of our older schema at an explicit path is rebuilt only by the holder of the writer lease."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from bench.common.lspclient import LspClient
from crowd import SERVE, WORD, fresh_home, history
from test_one_writer import _check_index, _hits, _server_state, _until

from builder import SessionBuilder
from pi_event_search.index import locks, store

pytestmark = pytest.mark.timeout(240)


def test_reindex_requests_answer_while_a_pass_is_held_up(tmp_path: Path) -> None:
    home = fresh_home(tmp_path)
    history(home, sessions=4, turns=5)
    live = SessionBuilder(home.sessions, "/home/dev/proj", name_seed="live")
    live.user("the first line")
    c = LspClient(SERVE, home.env())
    c.initialize(["/home/dev/proj"])
    _until(lambda: _hits(c, WORD) and _server_state(c)["state"] == "ready", 60, "indexed")
    holder = sqlite3.connect(home.index, isolation_level=None)
    try:
        generation = c.request("piEvents/reindex", {}, timeout=30)["generation"]
        holder.execute("BEGIN IMMEDIATE")  # SQLite's write lock, for as long as this test says
        live.user("the heldupappend line")  # the watcher's refresh waits for the lock
        time.sleep(1.5)
        answers: list[Any] = []

        def reindex() -> None:
            try:
                answers.append(c.request("piEvents/reindex", {}, timeout=40))
            except Exception as exc:  # noqa: BLE001 - recorded, asserted below
                answers.append(exc)

        burst = [threading.Thread(target=reindex) for _ in range(8)]
        for th in burst:
            th.start()
        time.sleep(0.5)
        found = c.request("piEvents/search", {"query": WORD}, timeout=8)  # reads are not starved
        assert found["hits"]
        for th in burst:
            th.join()
        assert holder.in_transaction, "the lock was held throughout"
        assert answers == [{"changedSessions": 0, "generation": generation}] * 8, answers
    finally:
        holder.close()  # the pass goes on
    try:
        _until(lambda: _hits(c, "heldupappend"), 90, "the held-up append indexed afterwards")
    finally:
        c.close()
    _check_index(home.index, 5)


def test_an_older_schema_is_rebuilt_only_under_the_writer_lease(tmp_path: Path) -> None:
    home = fresh_home(tmp_path)
    history(home, sessions=2, turns=2)
    home.index.parent.mkdir(parents=True)
    conn = sqlite3.connect(home.index)
    conn.execute(f"PRAGMA application_id = {store.APPLICATION_ID}")
    conn.execute(f"PRAGMA user_version = {store.SCHEMA_VERSION - 1}")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.execute("INSERT INTO meta VALUES ('older', '1')")
    conn.commit()
    conn.close()
    # An older version's writer: the flock held, its record its pid alone (no heartbeat).
    older = locks.try_lock(Path(f"{home.index}.writer"))
    assert older is not None
    Path(f"{home.index}.writer").write_text("1\n")
    c = LspClient(SERVE, home.env())
    try:
        c.initialize(["/home/dev/proj"])
        state = _until(lambda: (s := _server_state(c))["lastError"] and s, 30, "a reason")
        assert state["state"] == "opening" and "older schema" in state["lastError"]
        # No count is known while opening: a client must not show "0 sessions" as the answer.
        assert c.request("piEvents/status", {}, timeout=30)["index"]["indexing"] is True
        time.sleep(6)  # longer than a stopped writer's silence: an older writer is not one
        check = sqlite3.connect(home.index)
        assert check.execute("SELECT value FROM meta WHERE key = 'older'").fetchone() == ("1",)
        check.close()
        locks.unlock(older)
        older = None
        _until(lambda: _hits(c, WORD), 60, "rebuilt by the new writer once the lease is free")
    finally:
        if older is not None:
            locks.unlock(older)
        c.close()
    _check_index(home.index, 2)
