"""Bounded waits with a message: a request while the index cannot be opened, the CLI while
another process is indexing."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bench.common.lspclient import LspClient, RpcError
from crowd import SERVE, WORD, fresh_home, history

from pi_event_search.index import locks, progress, store
from pi_event_search.service.engine import OPENING, Engine
from pi_event_search.source.discovery import default_dirs

pytestmark = pytest.mark.timeout(120)


def test_a_request_while_another_process_creates_the_index(tmp_path: Path) -> None:
    home = fresh_home(tmp_path)
    history(home, sessions=2, turns=2)
    home.index.parent.mkdir(parents=True)
    held = locks.try_lock(Path(f"{home.index}.open.lock"))  # "another process" creating it
    assert held is not None
    c = LspClient(SERVE, home.env())
    try:
        c.initialize(["/home/dev/proj"])
        started = time.monotonic()
        with pytest.raises(RpcError) as err:
            c.request("piEvents/search", {"query": WORD}, timeout=30)
        assert str(err.value).startswith(f"-32004: {OPENING}")
        assert time.monotonic() - started < 15  # the 5 s bound, and no more than a few
    finally:
        locks.unlock(held)
    try:
        end = time.monotonic() + 60
        while time.monotonic() < end:  # the server kept trying: it recovers by itself
            try:
                if c.request("piEvents/search", {"query": WORD}, timeout=30)["hits"]:
                    break
            except RpcError:
                pass
            time.sleep(0.2)
        assert c.request("piEvents/search", {"query": WORD}, timeout=30)["hits"]
        state = c.request("piEvents/status", {}, timeout=30)["server"]
        assert state["role"] == "writer" and state["state"] in ("ready", "indexing")
    finally:
        c.close()


def test_the_cli_says_how_far_another_process_has_come(tmp_path: Path) -> None:
    home = fresh_home(tmp_path)
    history(home, sessions=3, turns=2)
    writer = Engine(home.index, default_dirs(home.sessions, []))
    writer.refresh()  # indexed, and this process holds the lease: the CLI only reads
    assert writer.conn is not None
    with store.transaction(writer.conn):
        progress.publish(writer.conn, progress.REFRESH, 40, 100)
    try:
        done = subprocess.run([sys.executable, "-m", "pi_event_search", "search", WORD, "--all",
                               "--json"], env=home.env(), capture_output=True, timeout=60,
                              check=True)
    finally:
        writer.close()
    assert "still indexing: 40% of sessions" in done.stderr.decode()
    out = json.loads(done.stdout)
    assert out["hits"] and out["indexing"] == {"phase": "refresh", "sessionsIndexed": 40,
                                               "sessionsTotal": 100, "percent": 40}
