"""Issue 31: every open error ends somewhere, and a damaged cache heals. Real servers over stdio:
an impossible indexPath fails at once and status answers; a damaged file nobody gave us is refused
without a descriptor kept per retry; garbage in the header or in the pages of a real index (at a
path this project manages) is moved aside, kept once, and rebuilt until every needle answers in
every server; a valid SQLite database that is not ours is still refused, untouched."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from bench.common.lspclient import LspClient, RpcError
from crowd import SERVE, fresh_home

from builder import SessionBuilder
from support import PiHome

pytestmark = pytest.mark.timeout(240)
NEEDLES = [f"needle{chr(97 + i)}quartz" for i in range(10)]


def _history(home: PiHome) -> None:
    for i, word in enumerate(NEEDLES):
        sb = SessionBuilder(home.sessions, "/home/dev/proj", name_seed=f"faults-{i}")
        for j in range(20):
            sb.user(f"step {j} of session {i}: rebuild the cache and run the suite " * 4)
            sb.bash(f"make t{j}", "PASS tests/cache.test\n" * 30, exit_code=0)
        sb.user(f"the {word} incident")


def _indexed(home: PiHome) -> None:
    """A real index, written by the CLI (which leaves its writer lease file beside it)."""
    subprocess.run([sys.executable, "-m", "pi_event_search", "index"], env=home.env(),
                   check=True, capture_output=True, timeout=120)


def _server(home: PiHome, options: dict[str, Any] | None = None) -> LspClient:
    c = LspClient(SERVE, home.env())
    c.initialize(["/home/dev/proj"], options)
    return c


def _status(c: LspClient) -> dict[str, Any]:
    return dict(c.request("piEvents/status", {}, timeout=30))


def _until(cond: Any, seconds: float, what: str) -> Any:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        value = cond()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"{what}: not within {seconds} s")


def _answers(c: LspClient, word: str) -> bool:
    try:
        return bool(c.request("piEvents/search", {"query": word}, timeout=30)["hits"])
    except RpcError:
        return False


def _fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def test_an_impossible_index_path_fails_at_once_and_status_answers(tmp_path: Path) -> None:
    home = fresh_home(tmp_path)
    _history(home)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    c = _server(home, {"indexPath": str(blocker / "index.sqlite3")})
    try:
        state = _until(lambda: _status(c)["server"], 30, "a status")
        state = _until(lambda: (s := _status(c)["server"])["state"] == "failed" and s, 30,
                       "state failed")
        assert "Not a directory" in state["lastError"]
        assert _status(c)["index"]["indexing"] is False  # failed: nothing under way
        started = time.monotonic()
        with pytest.raises(RpcError) as err:
            c.request("piEvents/search", {"query": NEEDLES[0]}, timeout=30)
        assert "Index unavailable: " in str(err.value)
        assert "Not a directory" in str(err.value)
        assert time.monotonic() - started < 4, "a failed index answers at once, not after 5 s"
    finally:
        c.close()


def test_a_damaged_file_at_a_path_given_for_the_first_time_is_refused(tmp_path: Path) -> None:
    home = fresh_home(tmp_path)
    _history(home)
    mine = tmp_path / "notes.db"
    mine.write_bytes(b"my own notes, not a database\n" * 500)
    before = hashlib.sha256(mine.read_bytes()).hexdigest()
    c = _server(home, {"indexPath": str(mine)})
    try:
        state = _until(lambda: (s := _status(c)["server"])["state"] == "failed" and s, 30,
                       "state failed")
        assert "not a database" in state["lastError"]
        fds = _fds(c.proc.pid)
        time.sleep(5)  # a retry loop opened the file (and kept descriptors) every 2 s
        assert _fds(c.proc.pid) == fds, "descriptors kept by failed opens"
    finally:
        c.close()
    assert hashlib.sha256(mine.read_bytes()).hexdigest() == before
    assert not list(tmp_path.glob("notes.db.corrupt-*"))


def _garbage_header(index: Path) -> None:
    with open(index, "r+b") as fh:
        fh.write(os.urandom(100))


def _garbage_pages(index: Path) -> None:
    """Random bytes over every third page after the first (sqlite_master stays readable: the
    index opens, and its queries then find the damage)."""
    size = index.stat().st_size
    with open(index, "r+b") as fh:
        for page in range(2, size // 4096, 3):
            fh.seek(page * 4096)
            fh.write(os.urandom(4096))


@pytest.mark.parametrize("damage", [_garbage_header, _garbage_pages],
                         ids=["garbage header", "garbage pages"])
def test_a_damaged_index_is_moved_aside_and_rebuilt(tmp_path: Path, damage: Any) -> None:
    home = fresh_home(tmp_path)
    _history(home)
    _indexed(home)
    for extra in ("-wal", "-shm"):
        assert not Path(f"{home.index}{extra}").exists() or extra == "-shm"
    damage(home.index)
    servers = [_server(home), _server(home)]
    try:
        for c in servers:
            for word in NEEDLES:
                _until(lambda c=c, w=word: _answers(c, w), 90, f"{word} answered")
        said = [s["index"].get("recovered") for s in map(_status, servers)]
        assert sum(1 for r in said if r) == 1, f"said once, by the process that moved it: {said}"
    finally:
        for c in servers:
            c.close()
    kept = [p for p in home.index.parent.glob(f"{home.index.name}.corrupt-*")
            if not p.name.endswith(("-wal", "-shm"))]
    assert len(kept) == 1
    conn = sqlite3.connect(home.index)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == len(NEEDLES)
    finally:
        conn.close()


def test_a_second_damage_keeps_one_moved_aside_copy(tmp_path: Path) -> None:
    home = fresh_home(tmp_path)
    _history(home)
    _indexed(home)
    for _ in range(2):
        _garbage_header(home.index)
        done = subprocess.run([sys.executable, "-m", "pi_event_search", "index"], env=home.env(),
                              capture_output=True, timeout=120, check=True)
        assert done.stderr.decode().count("was damaged; it was moved aside to") == 1
        time.sleep(1.1)  # the copies' names carry the time to the second
    kept = [p for p in home.index.parent.glob(f"{home.index.name}.corrupt-*")
            if not p.name.endswith(("-wal", "-shm"))]
    assert len(kept) == 1


def test_a_valid_database_that_is_not_ours_is_still_refused(tmp_path: Path) -> None:
    home = fresh_home(tmp_path)
    _history(home)
    theirs = tmp_path / "theirs.sqlite3"
    conn = sqlite3.connect(theirs)
    conn.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, item TEXT)")
    conn.execute("INSERT INTO orders VALUES (1, 'tea')")
    conn.commit()
    conn.close()
    Path(f"{theirs}.writer").write_text("1")  # even beside a lease file: valid, and not ours
    c = _server(home, {"indexPath": str(theirs)})
    try:
        state = _until(lambda: (s := _status(c)["server"])["state"] == "failed" and s, 30,
                       "state failed")
        assert "not a pi-event-search index" in state["lastError"]
    finally:
        c.close()
    conn = sqlite3.connect(theirs)
    assert conn.execute("SELECT item FROM orders").fetchall() == [("tea",)]
    conn.close()
    assert not list(tmp_path.glob("theirs.sqlite3.corrupt-*"))
