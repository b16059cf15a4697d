"""The writer lease's invariants (service/lease.py), each against the real lease on a real index:
request threads racing for it, two takers of a stopped holder, a write guard that raises
LeaseLost inside a bulk load's start, a holder stopped inside a write transaction, the
heartbeat record's compare-and-swap, and the epoch of an index recreated after damage."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from builder import SessionBuilder, sample_session
from engine_support import ALL
from pi_event_search.core.eventref import Ref
from pi_event_search.index import locks, store
from pi_event_search.index.bulk import firstload, ftsload
from pi_event_search.query.search import Filters
from pi_event_search.service import lease
from pi_event_search.service.engine import Engine
from pi_event_search.service.lease import Lease, LeaseLost
from pi_event_search.source.discovery import default_dirs
from support import fts_workers

HERE = Path(__file__).resolve().parent


def _until(check: Callable[[], bool], seconds: float, what: str) -> None:
    end = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < end, f"not within {seconds} s: {what}"
        time.sleep(0.02)


@pytest.fixture
def other_process(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process's leases as another process would see them: none held (the lease is shared
    by the engines of one process, so a second taker here would otherwise share it)."""
    monkeypatch.setattr(lease, "_HELD", {})
    yield


def _stall(holder: Lease, pid: int) -> lease.Beat:
    """Stop the holder's heartbeat and age its record past STALL, as a stop of `pid`, the holder
    as another process, would (without waiting 5 s)."""
    held = lease._HELD[str(holder.path)]
    held.stop.set()
    assert held.thread is not None
    held.thread.join()
    record = holder.path
    seen = lease.read_beat(record)
    assert seen is not None and seen.at
    aged = time.monotonic() - lease.STALL - 1
    with open(record, "r+b") as f:
        f.write(f"{pid} {seen.epoch} {aged:.3f}".ljust(48).encode() + b"\n")
    return lease.Beat(pid, seen.epoch, aged)


def _epoch(index: Path) -> int:
    conn = store.connect(index, readonly=True)
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'lease'").fetchone()
        return int(row["value"]) if row is not None else 0
    finally:
        conn.close()


# -- threads -------------------------------------------------------------------------------


def test_thirty_two_threads_calling_every_request_at_once_on_a_fresh_index(pi_home) -> None:
    """Two request threads both found no writer and both took the lease (`RuntimeError: the
    lease is already held by this engine`), or a second write connection was opened over the
    first and leaked, and the lease outlived the engine. 20 rounds on a fresh index each."""
    s = sample_session(pi_home.sessions, "/p")
    for round_ in range(20):
        _race(pi_home.index.parent / f"fresh-{round_}.sqlite3", pi_home.sessions, s.path,
              f"{s.session_id}/{s.ids[2]}", round_)


def _race(index: Path, sessions: Path, path: Path, ref: str, round_: int) -> None:
    e = Engine(index, default_dirs(sessions, []))
    calls: list[Callable[[], Any]] = [
        e.take_writer, lambda: e.conn, e.refresh, lambda: e.refresh_paths({str(path)}),
        lambda: e.refresh_paths(set()), lambda: e.refresh_file(str(path)),
        lambda: e.search("question", Filters(), ALL), lambda: e.status(None),
        lambda: e.sessions(Filters(), ALL), e.still_writer, e.writer_pid, e.generation,
        e.indexing, e.yield_writer, lambda: e.read(Ref.parse(ref), ALL),
        lambda: e.trace(Ref.parse(ref), ALL),
    ]
    barrier = threading.Barrier(32)
    errors: list[BaseException] = []
    conns: set[int] = set()

    def call(i: int) -> None:
        barrier.wait()
        try:
            calls[i % len(calls)]()
            if e._conn is not None:
                conns.add(id(e._conn))
        except BaseException as exc:  # noqa: BLE001 - every error is the test's finding
            if type(exc).__name__ != "NotFound":  # a read before its session is indexed
                errors.append(exc)

    threads = [threading.Thread(target=call, args=(i,)) for i in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads)
    assert errors == [], f"round {round_}: {errors!r}"
    assert e.writer and len(conns) == 1, "one write connection, opened once"
    assert lease._HELD[str(e.lease.path)].users == 1
    e.close()
    fd = locks.try_lock(Path(f"{index}.writer"))
    assert fd is not None, f"round {round_}: the lease outlived the engine"
    locks.unlock(fd)
    assert str(e.lease.path) not in lease._HELD


# -- two takers ----------------------------------------------------------------------------


def test_of_two_takers_of_a_stopped_holder_one_wins(tmp_path: Path, other_process: None
                                                    ) -> None:
    index = tmp_path / "index.sqlite3"
    store.connect(index).close()
    holder = Lease(index)
    conn = holder.try_take(lambda: store.connect(index))
    assert conn is not None
    sleeper = subprocess.Popen(["sleep", "120"])  # the holder's pid, as another process
    try:
        seen = _stall(holder, sleeper.pid)
        takers = [Lease(index), Lease(index)]
        helds = [t._acquire() for t in takers]
        assert all(h is not None and not h.flock and h.expected == seen.epoch for h in helds)
        conns = [store.connect(index) for _ in takers]
        won = [Lease._claim(takers[i], conns[i], helds[i]) for i in range(2)]  # type: ignore[arg-type]
        assert won == [True, False]
        assert _epoch(index) == seen.epoch + 1
        with pytest.raises(LeaseLost):  # the stopped holder's next write transaction
            store.begin(conn)
        for c in conns:
            c.close()
        for h in helds:
            assert h is not None
            lease._drop(h)
    finally:
        sleeper.kill()
        sleeper.wait()
        conn.close()
        holder.release()


# -- a guard raising LeaseLost -------------------------------------------------------------


def test_lease_lost_as_a_bulk_load_starts_leaks_no_worker_and_no_lock(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ftsload.begin wrote its flag outside the pass's cleanup: a LeaseLost there (or a lock, a
    full disk) left the worker running and the side file locked until the process exited."""
    monkeypatch.setenv("PIES_FTS_LOAD", "1")
    sessions = tmp_path / "sessions"
    for i in range(8):
        sb = SessionBuilder(sessions, f"/home/dev/p{i}")
        for j in range(5):
            sb.user(f"question {i}.{j} " + "context " * 300)
    sizes = sorted(f.stat().st_size for f in sessions.rglob("*.jsonl"))
    monkeypatch.setattr(firstload, "FIRST_SLICE_BYTES", sum(sizes[-2:]))
    e = Engine(tmp_path / "index.sqlite3", default_dirs(sessions, []))
    started: list[Path] = []
    real_init = ftsload.FtsLoad.__init__

    def taken_meanwhile(self: ftsload.FtsLoad, conn: sqlite3.Connection, path: Path) -> None:
        real_init(self, conn, path)
        started.append(path)
        other = sqlite3.connect(e.index_path, isolation_level=None)
        other.execute("UPDATE meta SET value = value + 1 WHERE key = 'lease'")  # a taker's claim
        other.close()

    monkeypatch.setattr(ftsload.FtsLoad, "__init__", taken_meanwhile)
    try:
        e.refresh()  # answers as a reader would: the lease is gone
        assert started, "the side load never started"
        assert fts_workers({os.getpid()}) == [], "a full-text worker outlived its pass"
        fd = locks.try_lock(started[0])
        assert fd is not None, "the side file is still locked"
        locks.unlock(fd)
        assert not e.writer and not e.lease.held
    finally:
        e.close()


# -- a stop inside a write transaction -----------------------------------------------------


def _state(pid: int) -> str:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rindex(")") + 2]


def test_a_holder_stopped_inside_a_write_transaction_hands_over_and_stops_again(
        tmp_path: Path, other_process: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stopped holder keeps SQLite's write lock: the taker wakes it, it commits, gives the
    lease up, and is stopped again; the taker then claims the next epoch."""
    index = tmp_path / "index.sqlite3"
    store.connect(index).close()
    proc = subprocess.Popen([sys.executable, str(HERE / "leaseholder.py"), str(index)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    try:
        line = proc.stdout.readline().split()
        assert line[0] == "holding", line
        epoch = int(line[1])
        probe = sqlite3.connect(index, isolation_level=None, timeout=0.2)
        while True:  # stopped inside a transaction: SQLite's write lock stays held
            os.kill(proc.pid, signal.SIGSTOP)
            _until(lambda: _state(proc.pid) == "T", 30, "the holder stopped")
            try:
                probe.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError:
                break
            probe.execute("ROLLBACK")  # stopped between two transactions (rare): again
            os.kill(proc.pid, signal.SIGCONT)
        probe.close()
        record = Path(f"{index}.writer")
        seen = lease.read_beat(record)
        assert seen is not None
        with open(record, "r+b") as f:  # its silence, without waiting STALL seconds
            f.write(f"{seen.pid} {seen.epoch} {time.monotonic() - lease.STALL - 1:.3f}"
                    .ljust(48).encode() + b"\n")
        taker = Lease(index)
        conn: sqlite3.Connection | None = None
        end = time.monotonic() + 60
        while conn is None:
            assert time.monotonic() < end, "no takeover of the stopped holder"
            conn = taker.try_take(lambda: store.connect(index))
            if conn is None:
                time.sleep(lease.POLL)
        try:
            assert _epoch(index) == epoch + 1
            _until(lambda: _state(proc.pid) == "T", 30, "the holder stopped again")
            store.begin(conn)  # the new holder writes
            conn.execute("COMMIT")
            seen = lease.read_beat(taker.path)
            assert seen is not None and (seen.pid, seen.epoch) == (os.getpid(), epoch + 1)
            os.kill(proc.pid, signal.SIGCONT)
            assert proc.stdout.readline().strip() == "lost"
            assert proc.wait(30) == 0
        finally:
            conn.close()
            taker.release()
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGCONT)
            proc.kill()
            proc.wait()


# -- the heartbeat record ------------------------------------------------------------------


def test_a_stale_holder_never_writes_over_its_successors_record(tmp_path: Path) -> None:
    """`beat` read the record, then wrote it: a taker's record written in between was
    overwritten by the stopped holder waking up; `_drop` marked the new holder's lease free."""
    record = tmp_path / "index.sqlite3.writer"
    old = lease._Held(record, os.open(record, os.O_RDWR | os.O_CREAT), flock=False, epoch=3)
    new = lease._Held(record, os.open(record, os.O_RDWR), flock=False, epoch=4)
    try:
        assert old.write(time.monotonic())
        stop = threading.Event()
        seen: list[int] = []

        def hammer(h: lease._Held) -> None:
            while not stop.is_set():
                h.write(time.monotonic())

        def watch() -> None:
            while not stop.is_set():
                b = lease.read_beat(record)
                if b is not None:
                    seen.append(b.epoch)

        threads = [threading.Thread(target=hammer, args=(h,)) for h in (old, new)]
        threads.append(threading.Thread(target=watch))
        for t in threads:
            t.start()
        _until(lambda: seen.count(4) > 200, 60, "the new holder's records")
        stop.set()
        for t in threads:
            t.join()
        after = seen[seen.index(4):]
        assert set(after) == {4}, "the stale holder wrote after its successor"
        assert not old.write(time.monotonic())
        lease._drop(old)  # a stale holder's release leaves the successor's record alone
        last = lease.read_beat(record)
        assert last is not None and last.epoch == 4 and last.at > 0
    finally:
        os.close(new.fd)


def test_a_holder_learns_it_lost_the_lease_from_the_record(tmp_path: Path) -> None:
    record = tmp_path / "index.sqlite3.writer"
    old = lease._Held(record, os.open(record, os.O_RDWR | os.O_CREAT), flock=False, epoch=3)
    new = lease._Held(record, os.open(record, os.O_RDWR), flock=False, epoch=4)
    try:
        assert new.write(time.monotonic())
        assert not old.write(time.monotonic())
        assert new.write(time.monotonic())
    finally:
        os.close(old.fd)
        os.close(new.fd)


# -- the epoch of a recreated index --------------------------------------------------------


def test_a_stopped_holder_of_a_damaged_index_is_taken_over_on_the_new_one(
        tmp_path: Path, other_process: None) -> None:
    """A recreated index starts at epoch 0: takers waited for the stopped holder's epoch there
    for ever. Now the next epoch is above the record's, and the stopped holder, were it to
    write the new file, finds a higher epoch than its own."""
    index = tmp_path / "index.sqlite3"
    store.connect(index).close()
    raw = sqlite3.connect(index, isolation_level=None)
    raw.execute("INSERT INTO meta(key, value) VALUES ('lease', '3')")  # a few takeovers before
    raw.close()
    holder = Lease(index)
    conn = holder.try_take(lambda: store.connect(index))
    assert conn is not None
    sleeper = subprocess.Popen(["sleep", "120"])
    try:
        epoch = _epoch(index)
        assert epoch == 4
        seen = _stall(holder, sleeper.pid)
        assert seen.epoch == epoch
        os.rename(index, tmp_path / "moved-aside.sqlite3")  # as damage.move_aside does
        for extra in ("-wal", "-shm"):
            Path(f"{index}{extra}").unlink(missing_ok=True)
        store.connect(index).close()
        assert _epoch(index) == 0
        taker = Lease(index)
        lease._HELD.clear()
        new = taker.try_take(lambda: store.connect(index))
        assert new is not None, "the recreated index could not be taken over"
        try:
            assert _epoch(index) == epoch + 1
            stale = store.connect(index)
            lease._guard(stale, lease._Held(holder.path, -1, flock=False, epoch=epoch))
            with pytest.raises(LeaseLost):
                store.begin(stale)
            stale.close()
        finally:
            new.close()
            taker.release()
    finally:
        sleeper.kill()
        sleeper.wait()
        conn.close()
        holder.release()


def test_a_holder_writing_a_recreated_index_carries_its_epoch_over(tmp_path: Path,
                                                                   other_process: None) -> None:
    index = tmp_path / "index.sqlite3"
    store.connect(index).close()
    holder = Lease(index)
    conn = holder.try_take(lambda: store.connect(index))
    assert conn is not None
    try:
        epoch = _epoch(index)
        os.rename(index, tmp_path / "moved-aside.sqlite3")
        for extra in ("-wal", "-shm"):
            Path(f"{index}{extra}").unlink(missing_ok=True)
        conn.close()
        conn = store.connect(index)
        holder.guard(conn)
        store.begin(conn)  # nobody took it: the new file gets the holder's epoch
        conn.execute("COMMIT")
        assert _epoch(index) == epoch
    finally:
        conn.close()
        holder.release()


# -- the side file belongs to the lease ------------------------------------------------------


def test_a_new_writer_never_waits_on_a_stopped_holders_side_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A holder stopped between two transactions of its bulk load keeps its side file locked
    (its flock goes with it): the next holder's every bulk pass waited 120 s on it and failed.
    Now the side file is the lease epoch's own; an older epoch's is deleted, locked or not."""
    monkeypatch.setenv("PIES_FTS_LOAD", "1")
    monkeypatch.setattr(ftsload, "OTHER_LOADER_WAIT", 3.0)  # a wait would fail in seconds
    sessions = tmp_path / "sessions"
    for i in range(6):
        SessionBuilder(sessions, f"/home/dev/p{i}").user(f"question {i} " + "context " * 300)
    index = tmp_path / "index.sqlite3"
    store.connect(index).close()
    raw = sqlite3.connect(index, isolation_level=None)
    raw.execute("INSERT INTO meta(key, value) VALUES ('lease', '7')")  # the stopped holder's
    raw.execute("INSERT INTO meta(key, value) VALUES ('fts_load', '1')")  # its load, unfinished
    raw.close()
    stale = Path(f"{index}.fts-load-7.sqlite3")
    held = locks.try_lock(stale)  # as the stopped holder keeps it
    assert held is not None
    e = Engine(index, default_dirs(sessions, []))
    try:
        assert e.refresh().changed.get("rebuilt") == 6
        assert _epoch(index) == 8
        assert not stale.exists(), "the stopped holder's side file was left"
        assert not list(tmp_path.glob("index.sqlite3.fts-load*"))
        assert e.search("question", Filters(), ALL).hits
    finally:
        e.close()
        locks.unlock(held)


def test_a_woken_holder_knows_it_even_when_its_write_lost_first(tmp_path: Path) -> None:
    """Woken to hand over, the holder's next write transaction may find the taker's epoch before
    its heartbeat thread reads the wake-up request: it must still stop itself again (the
    request, not the order, says why it runs)."""
    record = tmp_path / "index.sqlite3.writer"
    held = lease._Held(record, os.open(record, os.O_RDWR | os.O_CREAT), flock=False, epoch=5)
    assert held.write(time.monotonic())
    Path(f"{record}.cas").write_text(f"wake {os.getpid()} 5".ljust(63) + "\n")
    held.lost = True  # the guard found epoch 6 first
    lease._drop(held)
    assert held.woken
    other = lease._Held(record, os.open(record, os.O_RDWR), flock=False, epoch=4)
    lease._drop(other)  # a request naming another holder wakes nobody here
    assert not other.woken
