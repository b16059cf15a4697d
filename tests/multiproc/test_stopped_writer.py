"""Issue 31: a stopped writer (Ctrl-Z in a terminal editor: SIGSTOP) no longer stalls everyone.
Its flock stays, its heartbeat stops: another server says `writer stalled (pid N, silent N s)`,
takes the lease after 5 s of silence, and indexes Pi's appends; when the stopped writer resumes
(SIGCONT) it learns it lost the lease, follows, and the index ends with nothing indexed twice."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from bench.common.lspclient import LspClient
from crowd import SERVE, WORD, fresh_home, history
from test_one_writer import _check_index, _hits, _server_state, _until

from builder import SessionBuilder

pytestmark = pytest.mark.timeout(240)


def test_a_stopped_writer_is_taken_over_and_learns_it_when_it_resumes(tmp_path: Path) -> None:
    home = fresh_home(tmp_path)
    history(home, sessions=4, turns=5)
    live = SessionBuilder(home.sessions, "/home/dev/proj", name_seed="live")
    live.user("the first line of a live session")
    servers: list[LspClient] = []
    stopped: int | None = None
    try:
        for _ in range(2):
            c = LspClient(SERVE, home.env())
            c.initialize(["/home/dev/proj"])
            servers.append(c)
            _until(lambda c=c: _hits(c, WORD), 60, "first hits")
        writer = next(c for c in servers if _server_state(c)["role"] == "writer")
        other = next(c for c in servers if c is not writer)
        os.kill(writer.proc.pid, signal.SIGSTOP)
        stopped = writer.proc.pid
        live.user("the dingoappend line, written while the writer is stopped")
        said: list[str] = []

        def taken_over() -> bool:
            state = _server_state(other)
            if state["lastError"]:
                said.append(state["lastError"])
            return bool(state["role"] == "writer")

        _until(taken_over, 30, "a takeover of the stopped writer")
        assert any(s.startswith(f"writer stalled (pid {stopped}, silent ") and s.endswith(" s)")
                   for s in said), said
        _until(lambda: _hits(other, "dingoappend"), 30, "the append seen by the new writer")
        answer: dict[str, Any] = other.request("piEvents/reindex", {}, timeout=30)
        assert answer["generation"] > 0
        os.kill(stopped, signal.SIGCONT)
        stopped = None
        _until(lambda: _server_state(writer)["role"] == "reader", 30,
               "the resumed writer learns that it lost the lease")
        assert _server_state(writer)["writerPid"] == other.proc.pid
        live.user("the emuappend line, after the old writer resumed")
        for c in servers:
            _until(lambda c=c: _hits(c, "emuappend"), 30, "the next append, everywhere")
            _until(lambda c=c: _hits(c, "dingoappend"), 30, "the first append, everywhere")
        time.sleep(1.5)  # a beat or two of both: neither writes what the other did
    finally:
        if stopped is not None:
            os.kill(stopped, signal.SIGCONT)
        for c in servers:
            c.close()
    _check_index(home.index, 5)
