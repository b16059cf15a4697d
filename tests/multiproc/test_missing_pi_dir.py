"""Issue 31: watch what exists. A server on a HOME without `.pi` (and an archive directory that
is not there) watched the nearest existing parent recursively: an inotify watch on every folder
of $HOME (304 after 300 new folders) and a full refresh for every file touched there. Now a
missing directory is polled until it appears, then watched, and its sessions are indexed."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from bench.common.lspclient import LspClient
from crowd import SERVE
from test_one_writer import _hits, _server_state, _until

from builder import SessionBuilder

pytestmark = pytest.mark.timeout(180)


def inotify_watches(pid: int) -> int:
    """The inotify watches a process holds (/proc/<pid>/fdinfo lists one line per watch)."""
    count = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") != "anon_inode:inotify":
                continue
            info = Path(f"/proc/{pid}/fdinfo/{fd}").read_text()
        except OSError:
            continue
        count += sum(1 for line in info.splitlines() if line.startswith("inotify wd:"))
    return count


def test_a_home_without_pi_watches_no_folder_of_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    archive = home / "mnt" / "archive" / "sessions"
    env = {k: v for k, v in os.environ.items() if k != "PI_CODING_AGENT_DIR"}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(tmp_path / "cache"),
               PI_EVENT_SEARCH_INDEX=str(tmp_path / "index" / "index.sqlite3"))
    c = LspClient(SERVE, env)
    try:
        c.initialize([str(home / "proj")], {"sessionDirs": [str(archive)]})
        _until(lambda: _server_state(c)["role"] == "writer"
               and _server_state(c)["state"] == "ready", 60, "the server indexes")
        for i in range(300):
            folder = home / f"folder-{i}"
            folder.mkdir()
            (folder / "notes.txt").write_text("a file in a folder of $HOME\n")
        time.sleep(2)  # a watcher on $HOME adds its watches as folders appear
        assert inotify_watches(c.proc.pid) < 5
        live = SessionBuilder(home / ".pi" / "agent" / "sessions", str(home / "proj"),
                              name_seed="late")
        live.user("the first koalaappear line, once Pi has run")
        _until(lambda: _hits(c, "koalaappear"), 30, "the new sessions directory indexed")
        old = SessionBuilder(archive, str(home / "proj"), name_seed="archived")
        old.user("an archived wallabyappear line")
        _until(lambda: _hits(c, "wallabyappear"), 30, "the archive indexed once it appears")
        live.user("the second koalaappend line")
        _until(lambda: _hits(c, "koalaappend"), 30, "appends followed")
        assert inotify_watches(c.proc.pid) < 10, "the sessions directories only"
    finally:
        c.close()
