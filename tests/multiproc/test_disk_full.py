"""Issue 31: a disk that fills during a first index heals. The index lives on a real tmpfs of
8 MB (mounted for the test; root only), too small for it: the servers keep answering from what
was committed, status shows the error; once the file system is given room again (remounted
larger), the next pass completes with no manual step: every needle answered by both servers,
nothing indexed twice, integrity ok, no full-text worker left behind."""

from __future__ import annotations

import os
import random
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bench.common.lspclient import LspClient, RpcError
from crowd import SERVE, fresh_home
from test_one_writer import _check_index, _server_state, _until

from builder import SessionBuilder
from support import PiHome

pytestmark = pytest.mark.timeout(400)
NEEDLES = [f"needle{chr(97 + i)}tmpfs" for i in range(20)]


def _mount(where: Path, size: str, remount: bool = False) -> bool:
    opts = f"remount,size={size}" if remount else f"size={size},mode=0700"
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(where)],
                          capture_output=True, check=False)
    return done.returncode == 0


@pytest.fixture(params=[(100, "8m"), (300, "40m")], ids=["full in the newest slice",
                                                         "full in the bulk load"])
def small_disk(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[tuple[Path, int]]:
    """The index directory on a tmpfs too small for the index of the history (sessions): 8 MB
    fills during the newest 16 MB (indexed first), 40 MB in the bulk load that follows."""
    sessions, size = request.param
    where = tmp_path / "index"
    where.mkdir()
    if os.geteuid() != 0 or not _mount(where, size):
        pytest.fail("mounting a tmpfs needs root (CI and this machine run the tests as root)")
    try:
        yield where, sessions
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True, check=False)


def _history(home: PiHome, sessions: int) -> None:
    """Sessions of 80 KB whose words do not repeat (their index is about twice their size)."""
    rng = random.Random(31)
    step = sessions // len(NEEDLES)
    for i in range(sessions):
        sb = SessionBuilder(home.sessions, "/home/dev/proj", name_seed=f"full-{i}")
        for j in range(12):
            words = " ".join(f"{rng.getrandbits(40):x}" for _ in range(160))
            sb.user(f"step {j} of session {i}: {words}")
            sb.bash(f"make t{j}", " ".join(f"{rng.getrandbits(40):x}" for _ in range(400)))
        if i % step == 0:
            sb.user(f"the {NEEDLES[i // step]} incident")


def _answers(c: LspClient, word: str) -> bool:
    try:
        return bool(c.request("piEvents/search", {"query": word}, timeout=30)["hits"])
    except RpcError:
        return False


def _workers(index: Path) -> list[int]:
    """This test's full-text workers: the worker's command line names its side database beside
    the index (other tests and other checkouts on the machine run workers of their own)."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
                if b"ftsworker" in cmdline and str(index.parent).encode() in cmdline:
                    out.append(int(entry))
            except OSError:
                continue
    return out


def test_a_disk_full_during_a_first_index_heals_once_space_is_back(
        tmp_path: Path, small_disk: tuple[Path, int]) -> None:
    disk, sessions = small_disk
    home = fresh_home(tmp_path)
    _history(home, sessions)
    servers: list[LspClient] = []
    try:
        for _ in range(2):
            c = LspClient(SERVE, home.env())
            c.initialize(["/home/dev/proj"])
            servers.append(c)

        def full() -> Any:
            errors = [_server_state(c)["lastError"] or "" for c in servers]
            return any("full" in e for e in errors) and errors

        errors = _until(full, 120, "the disk fills, and status says so")
        assert any("database or disk is full" in e for e in errors), errors
        for c in servers:  # answering from what is committed meanwhile
            c.request("piEvents/search", {"query": "step"}, timeout=30)
        assert _mount(disk, "512m", remount=True)
        for c in servers:
            for word in NEEDLES:
                _until(lambda c=c, w=word: _answers(c, w), 150, f"{word} answered")
        _until(lambda: all(c.request("piEvents/search", {"query": "step"}, timeout=30)
                           ["indexing"] is None for c in servers), 60, "the index complete")
        _until(lambda: not any(_server_state(c)["lastError"] for c in servers), 30,
               f"the error cleared: {[_server_state(c) for c in servers]}")
    finally:
        for c in servers:
            c.close()
    _check_index(home.index, sessions)
    assert _workers(home.index) == [], "a full-text worker outlived its server"
