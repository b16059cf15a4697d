"""Issue 23: one writer per index. Servers on one index agree on who writes; every server sees
an append; the writer's SIGKILL (idle, mid-load) hands the index to another within a bound, and
the index ends complete, with nothing indexed twice; two schema versions leave each other be."""

from __future__ import annotations

import os
import signal
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from bench.common.lspclient import LspClient
from crowd import SERVE, WORD, fresh_home, history

from builder import SessionBuilder
from pi_event_search.index import store
from support import PiHome

pytestmark = pytest.mark.timeout(300)


def _servers(home: PiHome, n: int) -> list[LspClient]:
    out = []
    for _ in range(n):
        c = LspClient(SERVE, home.env())
        c.initialize(["/home/dev/proj"])
        out.append(c)
    return out


def _answering(tmp_path: Path, sessions: int, turns: int, n: int) -> tuple[PiHome, list[LspClient]]:
    """A generated history and n servers on one index, each once it answers with hits."""
    home = fresh_home(tmp_path)
    history(home, sessions=sessions, turns=turns)
    servers = _servers(home, n)
    try:
        for c in servers:
            _until(lambda c=c: _hits(c, WORD), 60, "first hits")
    except BaseException:
        for c in servers:
            c.close()
        raise
    return home, servers


def _until(cond: Any, seconds: float, what: str) -> Any:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        value = cond()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"{what}: not within {seconds} s")


def _hits(c: LspClient, word: str) -> list[Any]:
    return list(c.request("piEvents/search", {"query": word}, timeout=30)["hits"])


def _server_state(c: LspClient) -> dict[str, Any]:
    return dict(c.request("piEvents/status", {}, timeout=30)["server"])


def _check_index(index: Path, sessions: int) -> None:
    conn = sqlite3.connect(index)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == sessions
        total, distinct = conn.execute(
            "SELECT count(*), count(DISTINCT sid || '/' || entry_id) FROM events").fetchone()
        assert total == distinct, "an event indexed twice"
        frags = conn.execute("SELECT count(*) FROM fragments").fetchone()[0]
        assert conn.execute("SELECT count(*) FROM fts_docsize").fetchone()[0] == frags
        assert conn.execute("SELECT value FROM meta WHERE key = 'indexing'").fetchone() is None
    finally:
        conn.close()


def test_one_writer_appends_and_takeover(tmp_path: Path) -> None:
    home, servers = _answering(tmp_path, 6, 10, 3)
    try:
        states = [_server_state(c) for c in servers]
        assert sorted(s["role"] for s in states) == ["reader", "reader", "writer"]
        assert len({s["writerPid"] for s in states}) == 1
        writer = next(c for c, s in zip(servers, states, strict=True) if s["role"] == "writer")
        assert states[0]["writerPid"] == writer.proc.pid
        live = SessionBuilder(home.sessions, "/home/dev/proj", name_seed="live")
        live.user("the first quokkaappend line")
        for c in servers:
            _until(lambda c=c: _hits(c, "quokkaappend"), 30, "append seen by every server")
        os.kill(writer.proc.pid, signal.SIGKILL)
        writer.proc.wait()
        rest = [c for c in servers if c is not writer]
        _until(lambda: any(_server_state(c)["role"] == "writer" for c in rest), 10,
               "a follower takes over")
        live.user("the second wombatappend line")
        for c in rest:
            _until(lambda c=c: _hits(c, "wombatappend"), 30, "append after takeover")
            assert "error" not in _server_state(c)
    finally:
        for c in servers:
            c.close()
    _check_index(home.index, 7)


def test_writer_killed_mid_first_index(tmp_path: Path) -> None:
    home = fresh_home(tmp_path)
    history(home, sessions=120, turns=40)
    first = _servers(home, 1)[0]
    try:
        # The newest session answers while the first index goes on.
        _until(lambda: _hits(first, WORD), 60, "newest session searchable during the load")
        state = first.request("piEvents/search", {"query": WORD}, timeout=30)["indexing"]
        second = _servers(home, 1)[0]
        try:
            os.kill(first.proc.pid, signal.SIGKILL)
            first.proc.wait()
            _until(lambda: _server_state(second)["role"] == "writer", 10, "takeover")
            _until(lambda: second.request("piEvents/search", {"query": "websocket"},
                                          timeout=30)["indexing"] is None, 120,
                   "the first index completes")
        finally:
            second.close()
    finally:
        first.close()
    _check_index(home.index, 120)
    assert state is None or state["phase"] == "first-index"


def test_writer_killed_mid_refresh(tmp_path: Path) -> None:
    home, servers = _answering(tmp_path, 4, 5, 2)
    try:
        writer = next(c for c in servers if _server_state(c)["role"] == "writer")
        other = next(c for c in servers if c is not writer)
        # Many new sessions at once: a refresh that takes a while; kill the writer in it.
        for i in range(60):
            sb = SessionBuilder(home.sessions, "/home/dev/proj", name_seed=f"late-{i}")
            for j in range(30):
                sb.bash(f"make target{j}", "ok\n" * 40)
        sb.user("the platypuslate line")
        time.sleep(0.3)
        os.kill(writer.proc.pid, signal.SIGKILL)
        writer.proc.wait()
        _until(lambda: _hits(other, "platypuslate"), 60, "the new writer finishes the refresh")
        _until(lambda: other.request("piEvents/search", {"query": "x"}, timeout=30)["indexing"]
               is None, 60, "refresh done")
    finally:
        for c in servers:
            c.close()
    _check_index(home.index, 64)


def test_an_older_server_leaves_a_newer_index_alone(tmp_path: Path) -> None:
    """Explicit paths: a newer schema's index is never dropped by this version (the default
    paths carry the version in their names: index-v<N>.sqlite3, one file per version)."""
    home = fresh_home(tmp_path)
    history(home, sessions=2, turns=2)
    home.index.parent.mkdir(parents=True)
    conn = sqlite3.connect(home.index)
    conn.execute(f"PRAGMA application_id = {store.APPLICATION_ID}")
    conn.execute(f"PRAGMA user_version = {store.SCHEMA_VERSION + 1}")
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.execute("INSERT INTO meta VALUES ('future', '1')")
    conn.commit()
    conn.close()
    server = _servers(home, 1)[0]
    try:
        state = _until(lambda: _server_state_or_error(server), 30, "an answer")
        assert "newer pi-event-search" in state
    finally:
        server.close()
    conn = sqlite3.connect(home.index)
    assert conn.execute("SELECT value FROM meta WHERE key = 'future'").fetchone() == ("1",)
    conn.close()


def _server_state_or_error(c: LspClient) -> str:
    """The reason the server gives (status answers in every state, issue 31)."""
    state = c.request("piEvents/status", {}, timeout=30)["server"]
    return str(state["lastError"] or "") if state["state"] == "failed" else ""


def test_default_index_names_carry_the_schema_version(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from pi_event_search.service.engine import Engine

    home = fresh_home(tmp_path)
    history(home, sessions=1, turns=1)
    monkeypatch.delenv("PI_EVENT_SEARCH_INDEX", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(home.agent))
    cache = tmp_path / "cache" / "pi-event-search"
    cache.mkdir(parents=True)
    older = cache / "index-v3.sqlite3"
    older.write_bytes(b"")
    engine = Engine.open(None, [])
    try:
        assert engine.take_writer()  # the writer removes what is no longer used
        assert engine.index_path == cache / f"index-v{store.SCHEMA_VERSION}.sqlite3"
        assert not older.exists(), "an older version's index nobody uses is removed"
    finally:
        engine.close()


def test_a_server_that_does_not_watch_leaves_the_index_to_one_that_does(tmp_path: Path) -> None:
    """A client can turn watching off (`watch: false`); its server indexes once, then frees the
    lease, so that a server that watches (another window) takes it and follows Pi's appends."""
    home = fresh_home(tmp_path)
    history(home, sessions=3, turns=3)
    still = LspClient(SERVE, home.env())
    still.initialize(["/home/dev/proj"], {"watch": False})
    try:
        _until(lambda: _hits(still, WORD), 60, "first hits")
        watching = _servers(home, 1)[0]
        try:
            _until(lambda: _server_state(watching)["role"] == "writer", 10,
                   "the server that watches becomes the writer")
            live = SessionBuilder(home.sessions, "/home/dev/proj", name_seed="live")
            live.user("the narwhalappend line")
            for c in (watching, still):
                _until(lambda c=c: _hits(c, "narwhalappend"), 30, "the append seen")
        finally:
            watching.close()
    finally:
        still.close()
    _check_index(home.index, 4)
