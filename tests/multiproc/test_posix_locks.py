"""A process that opens the index for writing while its own readers are open must not drop their
locks: closing any descriptor of a file drops all of a process's POSIX locks on it, and SQLite's
readers hold theirs to tell other processes that the WAL is in use. Without them, another process
closing its last connection checkpoints and deletes the WAL, and the readers go on reading the
deleted file: they never see a commit again."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pi_event_search.index import store


def _write_in_another_process(index: Path, value: str, keep_open: bool) -> subprocess.Popen[str]:
    code = f"""
import sqlite3, sys
c = sqlite3.connect({str(index)!r}, isolation_level=None)
c.execute("UPDATE meta SET value = ? WHERE key = 'generation'", ({value!r},))
print("written", flush=True)
if {keep_open!r}:
    sys.stdin.readline()
c.close()
"""
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "written"
    return proc


def test_readers_see_other_processes_commits_after_this_process_opens_for_writing(
        tmp_path: Path) -> None:
    index = tmp_path / "index.sqlite3"
    store.connect(index).close()
    reader = store.connect(index, readonly=True)
    assert store.generation(reader) >= 0  # the reader has read: it holds its shared lock
    store.connect(index).close()  # this process becomes a writer for a moment (a takeover)
    _write_in_another_process(index, "7", keep_open=False).wait(30)  # its last connection
    other = _write_in_another_process(index, "8", keep_open=True)
    try:
        assert store.generation(reader) == 8
    finally:
        assert other.stdin is not None
        other.stdin.write("\n")
        other.stdin.flush()
        other.wait(30)
        reader.close()
