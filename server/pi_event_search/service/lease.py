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

# The lease belongs to a process, not to an engine: several engines of one process on one index
# (a library user, the tests) share it. Lock path -> [descriptor, engines holding it].
_HELD: dict[str, list[int]] = {}


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
        held = _HELD.get(str(self.path))
        if held is not None:
            held[1] += 1
            self.fd = held[0]
            return True
        fd = locks.try_lock(self.path)
        if fd is None:
            return False
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        _HELD[str(self.path)] = [fd, 1]
        self.fd = fd
        return True

    def release(self) -> None:
        if self.fd is None:
            return
        self.fd = None
        held = _HELD[str(self.path)]
        held[1] -= 1
        if held[1] == 0:
            del _HELD[str(self.path)]
            locks.unlock(held[0])

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
