"""Oh My Pi's sessions in real headless Neovim against the real server: `:PiEvents status` and
`:checkhealth pi_events` count the sessions of each agent (scripts as in test_neovim.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_neovim import World, needs_nvim, ok, run_script, server_cmd

from builder import SessionBuilder

pytestmark = pytest.mark.editor
__all__ = ["server_cmd"]  # the module-scoped fixture, shared with test_neovim.py


@pytest.fixture(scope="module")
def two_agents(tmp_path_factory: pytest.TempPathFactory) -> World:
    tmp = tmp_path_factory.mktemp("nvim-omp").resolve()
    proj = tmp / "proj"
    (proj / ".git").mkdir(parents=True)
    notes = proj / "notes.md"
    notes.write_text("# notes\n")
    sessions = tmp / "agent" / "sessions"
    SessionBuilder(sessions, str(proj)).user("a Pi session")
    SessionBuilder(sessions, str(proj), omp_title="an Oh My Pi session").user("hello from omp")
    SessionBuilder(sessions, str(tmp / "elsewhere"), omp_title="not here").user("invisible")
    xdg = tmp / "xdg"
    env = dict(os.environ)
    env.update({
        "PI_CODING_AGENT_DIR": str(tmp / "agent"),
        "PI_EVENT_SEARCH_INDEX": str(tmp / "index.sqlite3"),
        "XDG_CONFIG_HOME": str(xdg / "config"), "XDG_DATA_HOME": str(xdg / "data"),
        "XDG_STATE_HOME": str(xdg / "state"), "XDG_CACHE_HOME": str(xdg / "cache"),
    })
    env.pop("NVIM", None)
    env.pop("VIMINIT", None)
    return World(tmp=tmp, proj=proj, notes=notes, env=env,
                 facts={"proj": str(proj), "notes": str(notes)})


@needs_nvim
def test_status_and_checkhealth_count_each_agent(two_agents: World,
                                                  server_cmd: list[str]) -> None:
    lines = ok(run_script("status", two_agents, server_cmd))["status"]["lines"]
    assert "sessions:   2" in lines
    assert "by source:  Oh My Pi 1, Pi 1" in lines  # the other project's is not counted
    good = "\n".join(ok(run_script("health", two_agents, server_cmd))["good"])
    assert "sessions by agent: Oh My Pi 1, Pi 1" in good, good


def test_builder_title_record_is_256_bytes(tmp_path: Path) -> None:
    b = SessionBuilder(tmp_path, "/work/p", omp_title="é" * 40)
    with open(b.path, "rb") as fh:
        assert len(fh.readline()) == 256
