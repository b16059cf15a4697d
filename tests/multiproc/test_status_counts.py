"""piEvents/status never presents an index still being filled as complete: while a first index
runs (this server's or another process's), `index.indexing` is true; once it says false, the
counts are those of the whole history. Clients show "N sessions · M events" from it and take
`indexing: false` for ready (the VS Code status bar did, reading 0 sessions)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from bench.common.lspclient import LspClient
from crowd import SERVE, fresh_home, history

pytestmark = pytest.mark.timeout(300)
SESSIONS = 400


def _watch_until_ready(clients: list[LspClient], seconds: float) -> list[tuple[int, dict[str, Any]]]:
    """Every status answer of every client, asked in turn, until each says it is not indexing."""
    seen: list[tuple[int, dict[str, Any]]] = []
    ready: set[int] = set()
    end = time.monotonic() + seconds
    while len(ready) < len(clients):
        assert time.monotonic() < end, f"not ready within {seconds} s: {seen[-len(clients):]}"
        for i, c in enumerate(clients):
            status = c.request("piEvents/status", {}, timeout=30)
            seen.append((i, status))
            if not status["index"]["indexing"]:
                ready.add(i)
    return seen


def test_status_says_indexing_until_the_first_index_is_complete(tmp_path: Path) -> None:
    home = fresh_home(tmp_path)
    history(home, sessions=SESSIONS, turns=60)
    clients: list[LspClient] = []
    try:
        # The first server leads the first index; the second starts while it runs and follows.
        for _ in range(2):
            c = LspClient(SERVE, home.env())
            c.initialize(["/home/dev/proj"])
            clients.append(c)
        seen = _watch_until_ready(clients, 240)
    finally:
        for c in clients:
            c.close()
    done = [(i, s["sessions"], s["server"]["state"]) for i, s in seen if not s["index"]["indexing"]]
    assert done and all(n == SESSIONS for _, n, _ in done), done
    assert all(state == "ready" for _, _, state in done), done
    # The test saw the index being filled (else it proved nothing about that window).
    assert any(s["index"]["indexing"] for _, s in seen)
