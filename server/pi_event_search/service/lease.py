"""The writer lease of one index: at most one process indexes a given index file, and a stopped
holder loses it, even stopped in the middle of a pass.

Four parts (docs/process-model.md, "Who writes"):

- An exclusive flock on `<index>.writer`: the kernel releases it when its holder dies, however it
  dies, and a follower that polls it takes over at its next try (POLL seconds).
- A heartbeat record in the same file: the holder writes its pid, its epoch and the time every
  BEAT seconds, from a thread of its own. A stopped process (Ctrl-Z in a terminal editor: SIGSTOP)
  keeps its flock but stops beating; after STALL seconds of silence a follower takes the lease
  without the flock. Every write of the record is a compare-and-swap under `<index>.writer.cas`
  (held for one read and one write): a record naming a higher epoch is never overwritten, so a
  holder that wakes up cannot put its stale record over its successor's, nor mark the lease free.
- The epoch in the index itself (`meta.lease`), which decides. Taking the lease increments it in
  a write transaction, and only from the value the taker saw (a compare-and-swap: of two takers,
  one wins); it never goes below the record's, so an index recreated after a damaged one was moved
  aside (epoch 0) can still be taken from a stopped holder of the old one. Every write
  transaction of the holder checks, right after BEGIN IMMEDIATE, that the epoch is still its own,
  and gives up (LeaseLost) when it is not. SQLite lets one write transaction at a time, so
  between that check and the COMMIT nobody can change the epoch.
- A handover for a holder stopped inside a write transaction. It keeps SQLite's write lock, which
  nothing but its own COMMIT or ROLLBACK (or its death) releases: a taker would wait forever. So
  a taker that finds the holder silent for STALL seconds, SQLite's write lock held for
  CLAIM_WAIT_MS, and the holder's process stopped, writes a wake-up request naming the holder
  (in `<index>.writer.cas`) and sends it SIGCONT. The holder's heartbeat thread reads the request
  at once: the holder commits its transaction at the next file (WriteBatch.maybe_commit), its
  next BEGIN raises LeaseLost, its pass lets go of everything (the full-text worker, the side
  file), it releases the lease and stops itself again, as it was. The taker's next try gets the
  write lock. Nothing is lost or applied twice: every file's checkpoint commits with its rows.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pi_event_search.index import locks

POLL = 0.2  # seconds between a follower's tries: takeover within this after the writer dies
BEAT = 1.0  # seconds between the holder's heartbeats
STALL = 5.0  # seconds of silence after which the holder is taken to be stopped
STALLED_SAYS = 2.0  # seconds of silence after which status says the writer is stalled
CLAIM_WAIT_MS = 1000  # a taker's wait for SQLite's write lock (a stopped holder may keep it)
CAS_WAIT = 0.5  # seconds a record write waits for another's read-and-write (microseconds long)
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


def _parse(text: str) -> Beat | None:
    parts = text.split()
    if len(parts) == 1 and parts[0].isdigit():  # an older version's record: its pid alone
        return Beat(int(parts[0]), 0, 0.0)
    try:
        return Beat(int(parts[0]), int(parts[1]), float(parts[2]))
    except (IndexError, ValueError):
        return None


def read_beat(path: Path) -> Beat | None:
    try:
        return _parse(path.read_text())
    except OSError:
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stopped(pid: int) -> bool:
    """The process is stopped by a signal (SIGSTOP, SIGTSTP: state T), not traced or running."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2:].startswith("T")


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat[stat.rindex(")") + 2:].split()[1]) == pid:
                out.append(int(entry))
    return out


def _epoch(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT value FROM meta WHERE key = 'lease'").fetchone()
    return int(row["value"]) if row is not None else 0


@contextlib.contextmanager
def _cas(path: Path) -> Iterator[int | None]:
    """The record's compare-and-swap lock, held for one read and one write; None when another
    process holds it for longer than CAS_WAIT (stopped inside those microseconds): the caller
    skips this write and tries again at its next beat or poll."""
    fd: int | None = None
    with contextlib.suppress(locks.Busy, OSError):
        fd = locks.wait_lock(Path(f"{path}.cas"), CAS_WAIT, "the writer record")
    try:
        yield fd
    finally:
        if fd is not None:
            locks.unlock(fd)


def _wake_request(fd: int) -> tuple[int, int] | None:
    """The (pid, epoch) a taker woke up to hand the lease over, from the CAS file."""
    parts = os.pread(fd, 64, 0).split()
    if len(parts) == 3 and parts[0] == b"wake" and parts[1].isdigit() and parts[2].isdigit():
        return int(parts[1]), int(parts[2])
    return None


@dataclass(slots=True)
class _Held:
    """The lease as this process holds it (shared by every engine of the process on the index)."""

    path: Path
    fd: int
    flock: bool  # False: taken from a stopped holder, which still has the flock
    expected: int | None = None  # a takeover: the epoch the stopped holder had
    stalled_pid: int | None = None  # a takeover: the stopped holder
    floor: int = 0  # the record's epoch when found: ours will be higher
    epoch: int = 0  # ours, once claimed (0: not yet)
    users: int = 1
    lost: bool = False
    woken: bool = False  # resumed by a taker to hand over: stop again once it is handed over
    stop: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None

    def write(self, at: float) -> bool:
        """Stamp the record (compare-and-swap): False when it names a later holder (this one
        lost the lease) or could not be written now."""
        with _cas(self.path) as cas:
            if cas is None:
                return True  # not now: nothing learnt either
            seen = _parse(os.pread(self.fd, 128, 0).decode(errors="replace"))
            if seen is not None and seen.epoch > self.epoch:
                return False
            if _wake_request(cas) == (os.getpid(), self.epoch):
                self.woken = True
                return False
            os.pwrite(self.fd, f"{os.getpid()} {self.epoch} {at:.3f}".ljust(_WIDTH).encode()
                      + b"\n", 0)
            return True

    def beat(self) -> None:
        """Every BEAT seconds until released or lost: stamp the record, unless another process
        has taken the lease meanwhile (this one was stopped) or asks for it (this one was woken
        up to hand it over): then stop, and let the flock go. A lease taken without the flock
        takes it as soon as its old holder lets it go."""
        while not self.stop.wait(BEAT):
            if not self.write(time.monotonic()):
                self.lost = True
                return
            if not self.flock and locks.try_flock(self.fd):
                self.flock = True


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
        """Another process took the lease while this one held it (or this one hands it over)."""
        return self._held is not None and self._held.lost

    def try_take(self, connect: Callable[[], sqlite3.Connection]) -> sqlite3.Connection | None:
        """Take the lease if nobody holds it, or its holder has been silent for STALL seconds
        (never waits long: at most CLAIM_WAIT_MS for SQLite's write lock), and return the write
        connection (`connect`, called only then): the epoch is claimed through it, and its write
        transactions check it from then on (store.begin). None: another process writes."""
        with _HELD_LOCK:
            if self._held is not None:  # checked under the lock: one Lease, one connection
                raise RuntimeError("the lease is already held by this engine")
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
                    _drop(held)
                    return None
            except BaseException:
                if conn is not None:
                    conn.close()
                _drop(held)
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
            return _Held(self.path, fd, flock=True, floor=seen.epoch if seen is not None else 0)
        # An older version's holder beats not (its record is its pid alone): never taken over.
        if seen is None or seen.pid == os.getpid() or not seen.at or seen.silent() < STALL:
            return None
        fd = os.open(self.path, os.O_RDWR)
        return _Held(self.path, fd, flock=False, expected=seen.epoch, stalled_pid=seen.pid,
                     floor=seen.epoch)

    def _claim(self, conn: sqlite3.Connection, held: _Held) -> bool:
        """Increment the epoch in the index, from the value seen when the holder was found
        stalled (a takeover), or from whatever it is (the flock was free); never below the
        record's epoch (a recreated index starts at 0)."""
        expected = held.expected
        timeout = conn.execute("PRAGMA busy_timeout").fetchone()["timeout"]
        conn.execute(f"PRAGMA busy_timeout = {CLAIM_WAIT_MS}")
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError:
            # A holder stopped inside a write transaction keeps SQLite's write lock: wake it to
            # hand over (module doc), and try again at the next poll.
            if held.stalled_pid is not None and expected is not None:
                self._wake(held.stalled_pid, expected)
            return False
        finally:
            conn.execute(f"PRAGMA busy_timeout = {timeout}")
        try:
            current = _epoch(conn)
            # A takeover goes ahead from the epoch the stalled holder had, or from a lower one:
            # an index recreated since (it starts at 0). A higher one: another taker was first.
            if expected is not None and current > expected:
                conn.execute("ROLLBACK")
                return False
            epoch = max(current, held.floor) + 1
            conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('lease', ?)",
                         (str(epoch),))
            conn.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            raise
        held.epoch = epoch
        return True

    def _wake(self, pid: int, epoch: int) -> None:
        """Ask a stopped holder to hand the lease over, and let it run until it has."""
        if not stopped(pid):
            return  # running (busy in a long statement), or gone: it ends its transaction itself
        with _cas(self.path) as cas:
            if cas is None:
                return
            seen = read_beat(self.path)
            if seen is None or (seen.pid, seen.epoch) != (pid, epoch):
                return
            os.pwrite(cas, f"wake {pid} {epoch}".ljust(63).encode() + b"\n", 0)
        # Its children too: a Ctrl-Z stopped its process group, the full-text worker with it,
        # and a holder waiting on a stopped worker's full pipe would never reach its commit.
        for target in (*_children(pid), pid):
            with contextlib.suppress(OSError):
                os.kill(target, signal.SIGCONT)

    def release(self) -> None:
        with _HELD_LOCK:
            held, self._held = self._held, None
            if held is None:
                return
            held.users -= 1
            if held.users > 0:
                return
            if _HELD.get(str(self.path)) is held:
                del _HELD[str(self.path)]
        _drop(held)
        if held.woken:  # woken up by a taker only to hand over: stopped again, as it was
            os.kill(os.getpid(), signal.SIGSTOP)

    def holder(self) -> int | None:
        """The writer's pid, or None when no process holds the lease."""
        if self._held is not None and not self._held.lost:
            return os.getpid()
        seen = read_beat(self.path)
        try:
            probe = locks.try_lock(self.path, shared=True)
        except FileNotFoundError:  # none, and this process may not create it: none ever wrote
            return None
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


def _drop(held: _Held) -> None:
    """Stop beating; mark the record released (only while it is still ours: compare-and-swap),
    so that a follower need not wait for silence; let the flock go."""
    held.stop.set()
    if held.thread is not None and held.thread is not threading.current_thread():
        held.thread.join()
    if not held.woken and held.epoch > 0:  # woken, but the write lost before the beat saw it
        with _cas(held.path) as cas:
            held.woken = cas is not None and _wake_request(cas) == (os.getpid(), held.epoch)
    if held.epoch > 0 and not held.lost:  # lost: the record may still be ours, the lease not
        with contextlib.suppress(OSError):
            held.write(0.0)
    locks.unlock(held.fd)


def _guard(conn: sqlite3.Connection, held: _Held) -> None:
    """Every write transaction on `conn` checks, inside the transaction, that the lease is
    still this process's (store.begin); a recreated index (epoch below ours, nobody took it
    since) gets ours. WriteBatch ends its transaction early when the lease is being handed
    over (`yielding`)."""
    def check(c: sqlite3.Connection) -> None:
        current = _epoch(c)
        if held.lost or current > held.epoch:
            held.lost = True
            raise LeaseLost(f"another process (pid {_holder_text(held.path)}) took the "
                            "writer lease while this one was stopped")
        if current < held.epoch:
            c.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('lease', ?)",
                      (str(held.epoch),))
    setattr(conn, "guard", check)  # noqa: B010 - memo.Connection's attribute (store.begin)
    setattr(conn, "yielding", lambda: held.lost)  # noqa: B010 - memo.Connection's attribute


def _holder_text(path: Path) -> str:
    seen = read_beat(path)
    return str(seen.pid) if seen is not None else "?"
