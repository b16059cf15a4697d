"""The writer lease of one index: at most one process indexes a given index file.

The lease is an exclusive flock on `<index>.writer`, which also holds the holder's pid (for
status). Whoever holds it watches, refreshes and bulk loads; every other process only reads. The
kernel releases the lock when its holder dies, however it dies: a follower that polls the lock
takes over at its next try (POLL seconds).
"""

from __future__ import annotations

import os
from pathlib import Path

from pi_event_search.index import locks

POLL = 0.2  # seconds between a follower's tries: takeover within this after the writer dies


class Lease:
    def __init__(self, index_path: Path) -> None:
        self.path = Path(f"{index_path}.writer")
        self.fd: int | None = None

    @property
    def held(self) -> bool:
        return self.fd is not None

    def try_take(self) -> bool:
        """Take the lease if nobody holds it (never waits)."""
        if self.fd is not None:
            return True
        fd = locks.try_lock(self.path)
        if fd is None:
            return False
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self.fd = fd
        return True

    def release(self) -> None:
        if self.fd is not None:
            fd, self.fd = self.fd, None
            locks.unlock(fd)

    def holder(self) -> int | None:
        """The writer's pid, or None when no process holds the lease."""
        if self.fd is not None:
            return os.getpid()
        probe = locks.try_lock(self.path, shared=True)
        if probe is not None:  # nobody holds it exclusively
            locks.unlock(probe)
            return None
        try:
            text = self.path.read_text().strip()
        except OSError:
            return None
        return int(text) if text.isdigit() else None
