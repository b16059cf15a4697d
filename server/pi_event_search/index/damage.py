"""What an error from the index file means, and moving a damaged index aside.

SQLite says an index is damaged with SQLITE_CORRUPT ("database disk image is malformed") or
SQLITE_NOTADB ("file is not a database"). The index is a disposable cache: a damaged one at a
path this project manages is moved aside (`<name>.corrupt-<time>`, the newest one kept for a
report) and a new one is built in its place. A valid SQLite database that is not ours is another
matter (store.ForeignDatabase): it is refused, never moved.

Moving the file while other processes have it open is safe: SQLite checks on close whether its
file was moved (SQLITE_FCNTL_HAS_MOVED) and then neither checkpoints nor deletes the `-wal` by
name, and every engine compares the file's inode with its connections' before it uses them
(engine.py), so it reconnects to the new index.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import time
from pathlib import Path

from pi_event_search.index import locks

CORRUPT = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB
# SQLITE_IOERR, SQLITE_BUSY, SQLITE_LOCKED, SQLITE_FULL: they pass (space comes back)
TRANSIENT = {10, 5, 6, 13}
TRANSIENT_ERRNO = {errno.ENOSPC, errno.EDQUOT, errno.EAGAIN, errno.EINTR, errno.EIO}
MOVE_WAIT = 5.0  # seconds to wait for another process creating or moving the index


def _code(exc: BaseException) -> int | None:
    code = getattr(exc, "sqlite_errorcode", None)
    return code & 0xFF if isinstance(code, int) else None


def corrupt(exc: BaseException) -> bool:
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    code = _code(exc)
    if code is not None:
        return code in CORRUPT
    text = str(exc)
    return "malformed" in text or "not a database" in text


def transient(exc: BaseException) -> bool:
    """An error that may pass by itself: retried (with a backoff), never a final state."""
    if isinstance(exc, OSError):
        return exc.errno in TRANSIENT_ERRNO
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    code = _code(exc)
    text = str(exc)
    return code in TRANSIENT if code is not None else \
        any(w in text for w in ("locked", "busy", "disk is full", "disk I/O"))


def inode(path: Path) -> int | None:
    try:
        return os.stat(path).st_ino
    except OSError:
        return None


def managed(path: Path, default: Path) -> bool:
    """A path whose damaged file may be moved aside: the default index, or one that a
    pi-event-search process has written (it leaves its writer lease file beside it). A damaged
    file at a path given for the first time may be the user's own: it is refused instead."""
    return path == default or Path(f"{path}.writer").exists()


def move_aside(path: Path, damaged: int | None) -> Path | None:
    """Move the damaged index (the file whose inode was `damaged`) aside, with its `-wal`, and
    drop its `-shm` and an older moved-aside copy; None when another process already did (the
    file at `path` is another one now) or there is nothing to move."""
    fd = locks.wait_lock(Path(f"{path}.open.lock"), MOVE_WAIT, f"moving the damaged index {path}")
    try:
        if damaged is None or inode(path) != damaged:
            return None
        for older in path.parent.glob(f"{path.name}.corrupt-*"):
            older.unlink(missing_ok=True)
        target = Path(f"{path}.corrupt-{time.strftime('%Y%m%dT%H%M%S')}")
        os.rename(path, target)
        if os.path.exists(f"{path}-wal"):
            os.rename(f"{path}-wal", f"{target}-wal")
        Path(f"{path}-shm").unlink(missing_ok=True)
        for side in path.parent.glob(f"{path.name}.fts-load*"):  # bulk/ftsload.side_files
            side.unlink(missing_ok=True)
        return target
    finally:
        locks.unlock(fd)
