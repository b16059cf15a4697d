"""Shared fixtures: an isolated Pi home (sessions dir) and index per test."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(1, str(Path(__file__).parent.parent))  # the repository: bench.common's corpus and LSP client

from support import PiHome  # noqa: E402


@pytest.fixture
def pi_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PiHome]:
    agent = tmp_path / "agent"
    home = PiHome(tmp_path, agent, agent / "sessions", tmp_path / "index" / "index.sqlite3")
    home.sessions.mkdir(parents=True)
    for key, value in home.env().items():
        if key in ("PI_CODING_AGENT_DIR", "PI_EVENT_SEARCH_INDEX", "XDG_CACHE_HOME",
                   "XDG_CONFIG_HOME"):
            monkeypatch.setenv(key, value)
    yield home
