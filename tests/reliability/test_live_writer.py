"""Races with a live writer. A writer appends entries to several sessions, splitting lines across
writes and pausing mid-line (and just before the newline), while a watcher (`index --watch`, or the
language server) follows the files and searches run concurrently. No torn entry is ever returned,
every returned entry is exactly what was written, and the final index equals a clean one."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from builder import SessionBuilder
from engine_support import ALL
from pi_event_search.query.search import Filters
from reliability.relsupport import (
    FIGURES,
    RawLsp,
    clean_state,
    connect_ro,
    full_state,
    guard_cmd,
    guard_env,
    open_engine,
    size,
    timeout,
    violations,
)
from support import PiHome

SESSIONS = 6
ENTRIES = size(160, 3000)
SEED = 20260516


class Writer:
    """Appends entries in pieces; `done` maps (session, entry) to (byte offset, text) once the
    entry's newline is on disk. The lock is held from the final write until it is registered, and
    by checkers while they look, so a check sees exactly the entries that are complete."""

    def __init__(self, home: PiHome, seed: int) -> None:
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.done: dict[tuple[str, str], tuple[int, str]] = {}
        self.sessions = [SessionBuilder(home.sessions, f"/home/dev/race{i % 3}") for i in range(SESSIONS)]
        for sb in self.sessions:
            sb.user(f"race opening question for {sb.session_id}")
            sb.assistant("ok")
        self.pieces = 0
        self.pauses = 0
        self.error: BaseException | None = None

    def entry(self, k: int, j: int) -> tuple[str, str, bytes]:
        sb = self.sessions[k]
        entry_id = f"{k:02x}{j:06x}"
        text = (f"race entry s{k} n{j} " + " ".join(f"w{self.rng.randrange(10**6)}"
                                                       for _ in range(self.rng.randrange(1, 40))))
        obj = {"type": "message", "id": entry_id, "parentId": sb.leaf,
               "timestamp": "2026-05-01T12:00:00.000Z",
               "message": {"role": "user", "content": [{"type": "text", "text": text}]}}
        sb.leaf = entry_id
        return entry_id, text, json.dumps(obj, separators=(",", ":")).encode()

    def run(self) -> None:
        try:
            for j in range(ENTRIES):
                k = self.rng.randrange(SESSIONS)
                sb = self.sessions[k]
                entry_id, text, line = self.entry(k, j)
                offset = sb.path.stat().st_size
                cuts = sorted(self.rng.sample(range(1, len(line)), self.rng.randrange(0, 4)))
                parts = [line[a:b] for a, b in zip([0, *cuts], [*cuts, len(line)], strict=True)]
                with open(sb.path, "ab") as fh:
                    for part in parts:
                        fh.write(part)
                        fh.flush()
                        self.pieces += 1
                        if self.rng.random() < 0.5:
                            time.sleep(self.rng.uniform(0, 0.03))  # paused mid-line
                            self.pauses += 1
                    with self.lock:
                        fh.write(b"\n")
                        fh.flush()
                        self.done[(sb.session_id, entry_id)] = (offset, text)
                if self.rng.random() < 0.2:
                    time.sleep(self.rng.uniform(0, 0.05))
        except BaseException as exc:  # surfaced by the test
            self.error = exc


def _check_index(index: Path, w: Writer) -> int:
    """Under the writer's lock: every race entry in the index is complete and exact."""
    conn = connect_ro(index)
    try:
        with w.lock:
            rows = conn.execute(
                "SELECT s.session_id, e.entry_id, e.byte_off, fragment_text(f.text) FROM fragments f "
                "JOIN events e ON e.eid = f.eid JOIN sessions s ON s.sid = e.sid").fetchall()
            checked = 0
            for session_id, entry_id, offset, text in rows:
                if not text.startswith("race entry"):
                    continue
                key = (session_id, entry_id)
                assert key in w.done, f"torn or unfinished entry returned: {key} {text[:60]!r}"
                assert (offset, text) == w.done[key], f"entry {key} differs from what was written"
                checked += 1
            return checked
    except Exception as exc:
        if "no such table" in str(exc) or "unable to open" in str(exc):
            return 0
        raise
    finally:
        conn.close()


def _check_hits(hits: list[dict[str, Any]], w: Writer) -> int:
    """Hits of "race entry" (only the writer's entries hold both words; partial hits are not asked
    for) are all complete."""
    for h in hits:
        key = (h["sessionId"], h["entryId"])
        assert key in w.done, f"a search returned a torn or unfinished entry: {key}"
        assert h["source"]["byteOffset"] == w.done[key][0]
    return len(hits)


def _wait_equal_clean(home: PiHome, seconds: float) -> None:
    want = clean_state(home.sessions, home.root / "clean.sqlite3")
    end = time.monotonic() + seconds
    got = None
    while time.monotonic() < end:
        got = full_state(home.index)
        if got == want:
            return
        time.sleep(0.3)
    assert got == want, "the watcher's final index differs from a clean index"


@pytest.mark.timeout(timeout(240, 3600))
def test_index_watch_with_a_live_writer(pi_home: PiHome) -> None:
    w = Writer(pi_home, SEED)
    log = pi_home.root / "guard.log"
    env = guard_env(pi_home.env(), [pi_home.agent], log)
    err = open(pi_home.root / "watch.err", "wb")  # noqa: SIM115 - closed below; a pipe could fill up
    watcher = subprocess.Popen(guard_cmd("index", "--watch"), env=env, stdout=subprocess.DEVNULL,
                               stderr=err)
    try:
        while not pi_home.index.exists():
            assert watcher.poll() is None, (pi_home.root / "watch.err").read_text()
            time.sleep(0.05)
        time.sleep(0.5)
        thread = threading.Thread(target=w.run)
        thread.start()
        engine = open_engine(pi_home.sessions, pi_home.index)
        checks = hits_checked = rows_checked = 0
        while thread.is_alive():
            rows_checked += _check_index(pi_home.index, w)
            with w.lock:
                page = engine.search("race entry", Filters(), ALL, limit=200, exact=True)
                hits_checked += _check_hits(page.hits, w)
            checks += 1
            time.sleep(0.01)
        thread.join()
        assert w.error is None, w.error
        _wait_equal_clean(pi_home, 60)
        assert watcher.poll() is None, "the watcher is still running"
    finally:
        watcher.send_signal(signal.SIGINT)
        try:
            watcher.wait(10)
        except subprocess.TimeoutExpired:
            watcher.kill()
            watcher.wait(10)
        err.close()
    assert not violations(log), violations(log)
    FIGURES.add("live writer", "entries written (index --watch)", ENTRIES)
    FIGURES.add("live writer", "line pieces written", w.pieces)
    FIGURES.add("live writer", "mid-line pauses", w.pauses)
    FIGURES.add("live writer", "concurrent checks", checks)
    FIGURES.add("live writer", "indexed entries verified exact", rows_checked)
    FIGURES.add("live writer", "search hits verified complete", hits_checked)
    FIGURES.add("live writer", "torn entries returned", 0)


@pytest.mark.timeout(timeout(240, 3600))
def test_language_server_with_a_live_writer(pi_home: PiHome) -> None:
    w = Writer(pi_home, SEED + 1)
    log = pi_home.root / "guard.log"
    env = guard_env(pi_home.env(), [pi_home.agent], log)
    client = RawLsp(guard_cmd("serve"), env)
    try:
        client.initialize("/home/dev", {"roots": ["/home/dev"]})
        thread = threading.Thread(target=w.run)
        thread.start()
        checks = hits_checked = 0
        while thread.is_alive():
            with w.lock:
                res = client.call("piEvents/search", {"query": "race entry", "limit": 200, "match": "all"})
                assert "result" in res, res
                hits_checked += _check_hits(res["result"]["hits"], w)
            checks += 1
            time.sleep(0.01)
        thread.join()
        assert w.error is None, w.error
        _wait_equal_clean(pi_home, 60)
        res = client.call("piEvents/search", {"query": "race entry", "limit": 200, "match": "all"})
        assert res["result"]["hits"]
    finally:
        assert client.close() == 0
    assert not violations(log), violations(log)
    FIGURES.add("live writer", "entries written (language server)", ENTRIES)
    FIGURES.add("live writer", "line pieces written", w.pieces)
    FIGURES.add("live writer", "mid-line pauses", w.pauses)
    FIGURES.add("live writer", "concurrent checks", checks)
    FIGURES.add("live writer", "search hits verified complete", hits_checked)
