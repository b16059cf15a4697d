"""The writer lease of one index: at most one process indexes a given index file, and a stopped
holder loses it.

Three parts (docs/process-model.md, "Who writes"):

- An exclusive flock on `<index>.writer`: the kernel releases it when its holder dies, however it
  dies, and a follower that polls it takes over at its next try (POLL seconds).
- A heartbeat in the same file: the holder writes its pid, its epoch and the time every BEAT
  seconds, from a thread of its own. A stopped process (Ctrl-Z in a terminal editor: SIGSTOP)
  keeps its flock but stops beating; after STALL seconds of silence a follower takes the lease
  without the flock.
- The epoch in the index itself (`meta.lease`), which decides. Taking the lease increments it in
  a write transaction, and only from the value the taker saw (a compare-and-swap: of two takers,
  one wins). Every write transaction of the holder checks, right after BEGIN IMMEDIATE, that the
  epoch is still its own, and gives up (LeaseLost) when it is not. Why two writers never commit:
  SQLite lets one write transaction at a time, so between that check and the COMMIT nobody can
  change the epoch; a taker's increment either commits before the old holder's transaction
  begins (which then sees it and rolls back) or waits for that transaction to end (a holder
  stopped inside a transaction keeps SQLite's write lock: the taker cannot commit either, and
  tries again at its next poll). A holder that wakes up learns it lost the lease from its
  heartbeat thread (the file names another holder) or at its next write, whichever comes first,
  and never writes again without taking the lease anew.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pi_event_search.index import locks

POLL = 0.2  # seconds between a follower's tries: takeover within this after the writer dies
BEAT = 1.0  # seconds between the holder's heartbeats
STALL = 5.0  # seconds of silence after which the holder is taken to be stopped
STALLED_SAYS = 2.0  # seconds of silence after which status says the writer is stalled
CLAIM_WAIT_MS = 1000  # a taker's wait for SQLite's write lock (a stopped holder may keep it)
_WIDTH = 48  # the heartbeat record: fixed width, rewritten in place


class LeaseLost(Exception):
    """Another process took the lease (this one was stopped, or silent too long)."""


@dataclass(slots=True)
class Beat:
    pid: int
    epoch: int
    at: float  # time.monotonic() of the holder's last beat (system-wide); 0: released

    def silent(self) -> float:
        return time.monotonic() - self.at


def read_beat(path: Path) -> Beat | None:
    try:
        text = path.read_text()
    except OSError:
        return None
    parts = text.split()
    if len(parts) == 1 and parts[0].isdigit():  # an older version's record: its pid alone
        return Beat(int(parts[0]), 0, 0.0)
    try:
        return Beat(int(parts[0]), int(parts[1]), float(parts[2]))
    except (IndexError, ValueError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _epoch(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT value FROM meta WHERE key = 'lease'").fetchone()
    return int(row["value"]) if row is not None else 0


@dataclass(slots=True)
class _Held:
    """The lease as this process holds it (shared by every engine of the process on the index)."""

    path: Path
    fd: int
    flock: bool  # False: taken from a stopped holder, which still has the flock
    expected: int | None = None  # a takeover: the epoch the stopped holder had
    epoch: int = 0  # ours, once claimed (0: not yet)
    users: int = 1
    lost: bool = False
    stop: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None

    def write(self, at: float) -> None:
        os.pwrite(self.fd, f"{os.getpid()} {self.epoch} {at:.3f}".ljust(_WIDTH).encode()
                  + b"\n", 0)

    def beat(self) -> None:
        """Every BEAT seconds until released or lost: stamp the record, unless another process
        has taken the lease meanwhile (this one was stopped): then stop, and let the flock go.
        A lease taken without the flock takes it as soon as its old holder lets it go."""
        while not self.stop.wait(BEAT):
            seen = read_beat(self.path)
            if seen is not None and (seen.pid, seen.epoch) != (os.getpid(), self.epoch):
                self.lost = True
                return
            if not self.flock and locks.try_flock(self.fd):
                self.flock = True
            self.write(time.monotonic())


# The lease belongs to a process, not to an engine: several engines of one process on one index
# (a library user, the tests) share it. Lock path -> what is held.
_HELD: dict[str, _Held] = {}
_HELD_LOCK = threading.Lock()


class Lease:
    def __init__(self, index_path: Path) -> None:
        self.path = Path(f"{index_path}.writer")
        self._held: _Held | None = None

    @property
    def held(self) -> bool:
        return self._held is not None

    @property
    def lost(self) -> bool:
        """Another process took the lease while this one held it."""
        return self._held is not None and self._held.lost

    def try_take(self, connect: Callable[[], sqlite3.Connection]) -> sqlite3.Connection | None:
        """Take the lease if nobody holds it, or its holder has been silent for STALL seconds
        (never waits long: at most CLAIM_WAIT_MS for SQLite's write lock), and return the write
        connection (`connect`, called only then): the epoch is claimed through it, and its write
        transactions check it from then on (store.begin). None: another process writes."""
        if self._held is not None:
            raise RuntimeError("the lease is already held by this engine")
        with _HELD_LOCK:
            held = _HELD.get(str(self.path))
            if held is not None and not held.lost:
                shared = connect()
                held.users += 1
                self._held = held
                _guard(shared, held)
                return shared
            held = self._acquire()
            if held is None:
                return None
            conn: sqlite3.Connection | None = None
            try:
                conn = connect()
                if not self._claim(conn, held):
                    conn.close()
                    self._drop(held)
                    return None
            except BaseException:
                if conn is not None:
                    conn.close()
                self._drop(held)
                raise
            held.write(time.monotonic())
            held.thread = threading.Thread(target=held.beat, name="pies-lease-beat", daemon=True)
            held.thread.start()
            _HELD[str(self.path)] = held
            self._held = held
            _guard(conn, held)
            return conn

    def guard(self, conn: sqlite3.Connection) -> None:
        """Check the lease in `conn`'s write transactions too (a new write connection)."""
        if self._held is not None:
            _guard(conn, self._held)

    def _acquire(self) -> _Held | None:
        fd = locks.try_lock(self.path)
        seen = read_beat(self.path)
        if fd is not None:
            if seen is not None and seen.pid != os.getpid() and seen.at \
                    and seen.silent() < STALL and _alive(seen.pid):
                locks.unlock(fd)  # a holder that took the lease without the flock, alive
                return None
            return _Held(self.path, fd, flock=True)
        # An older version's holder beats not (its record is its pid alone): never taken over.
        if seen is None or seen.pid == os.getpid() or not seen.at or seen.silent() < STALL:
            return None
        fd = os.open(self.path, os.O_RDWR)
        return _Held(self.path, fd, flock=False, expected=seen.epoch)

    @staticmethod
    def _claim(conn: sqlite3.Connection, held: _Held) -> bool:
        """Increment the epoch in the index, from the value seen when the holder was found
        stalled (a takeover), or from whatever it is (the flock was free)."""
        expected = held.expected
        timeout = conn.execute("PRAGMA busy_timeout").fetchone()["timeout"]
        conn.execute(f"PRAGMA busy_timeout = {CLAIM_WAIT_MS}")
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError:
            return False  # a stopped holder inside a write transaction: try again later
        finally:
            conn.execute(f"PRAGMA busy_timeout = {timeout}")
        try:
            current = _epoch(conn)
            if expected is not None and current != expected:
                conn.execute("ROLLBACK")  # another follower took it first
                return False
            conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('lease', ?)",
                         (str(current + 1),))
            conn.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            raise
        held.epoch = current + 1
        return True

    @staticmethod
    def _drop(held: _Held) -> None:
        held.stop.set()
        if held.thread is not None and held.thread is not threading.current_thread():
            held.thread.join()
        if not held.lost and held.epoch:
            with contextlib.suppress(OSError):
                held.write(0.0)  # released: a follower need not wait for silence
        locks.unlock(held.fd)

    def release(self) -> None:
        held, self._held = self._held, None
        if held is None:
            return
        with _HELD_LOCK:
            held.users -= 1
            if held.users > 0:
                return
            if _HELD.get(str(self.path)) is held:
                del _HELD[str(self.path)]
            self._drop(held)

    def holder(self) -> int | None:
        """The writer's pid, or None when no process holds the lease."""
        if self._held is not None and not self._held.lost:
            return os.getpid()
        seen = read_beat(self.path)
        probe = locks.try_lock(self.path, shared=True)
        if probe is not None:  # nobody holds the flock: a holder without it, or none
            locks.unlock(probe)
            if seen is None or not seen.at or seen.silent() >= STALL or not _alive(seen.pid):
                return None
        return seen.pid if seen is not None else None

    def stalled(self) -> str | None:
        """`writer stalled (pid N, silent 7 s)` while the holder is silent (stopped), else None."""
        if self._held is not None:
            return None
        seen = read_beat(self.path)
        if seen is None or not seen.at or self.holder() != seen.pid:
            return None
        silent = seen.silent()
        return f"writer stalled (pid {seen.pid}, silent {silent:.0f} s)" \
            if silent >= STALLED_SAYS else None


def _guard(conn: sqlite3.Connection, held: _Held) -> None:
    """Every write transaction on `conn` checks, inside the transaction, that the lease is
    still this process's (store.begin)."""
    def check(c: sqlite3.Connection) -> None:
        if held.lost or _epoch(c) != held.epoch:
            held.lost = True
            raise LeaseLost(f"another process (pid {_holder_text(held.path)}) took the "
                            "writer lease while this one was stopped")
    setattr(conn, "guard", check)  # noqa: B010 - memo.Connection's attribute (store.begin)


def _holder_text(path: Path) -> str:
    seen = read_beat(path)
    return str(seen.pid) if seen is not None else "?"
