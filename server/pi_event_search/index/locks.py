"""Advisory file locks beside the index (flock): who may create the schema, who is the writer.

A lock belongs to an open file description: the kernel releases it when its process dies, however
it dies, so a lock never outlives its holder. Every wait here has a bound and says what it waited
for. Without fcntl (not POSIX) locks always succeed: one process per index, as before.
"""

from __future__ import annotations

import errno
import os
import time
from pathlib import Path

try:
    import fcntl
except ImportError:  # not POSIX
    fcntl = None  # type: ignore[assignment]

POLL = 0.02  # seconds between tries of a bounded wait


class Busy(Exception):
    """Another process holds the lock for longer than the caller may wait."""


def try_lock(path: Path, *, shared: bool = False) -> int | None:
    """The lock file's descriptor, holding the lock; None when another process holds it."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        # A shared lock needs no write: a process that may not write beside the index (a
        # read-only file system, another user's directory) takes one on the existing file.
        if not shared or exc.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
            raise
        fd = os.open(path, os.O_RDONLY)
    if fcntl is None:
        return fd
    try:
        fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return fd


def try_flock(fd: int) -> bool:
    """Lock an open lock file exclusively, if no other process holds it (never waits)."""
    if fcntl is None:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def wait_lock(path: Path, seconds: float, what: str) -> int:
    """try_lock until it succeeds, for at most `seconds`; then Busy saying what it waited for."""
    end = time.monotonic() + seconds
    while True:
        fd = try_lock(path)
        if fd is not None:
            return fd
        if time.monotonic() >= end:
            raise Busy(f"{what}: still held by another process after {seconds:g} s")
        time.sleep(POLL)


def unlock(fd: int) -> None:
    os.close(fd)  # closing the descriptor releases its lock
