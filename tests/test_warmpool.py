"""The server's read threads (lsp/warmpool.py): the thread that finished last takes the next call,
overlapping calls get threads of their own up to the pool's size, the rest wait their turn."""

from __future__ import annotations

import threading

import pytest

from pi_event_search.lsp.warmpool import WarmPool


def _thread() -> str:
    return threading.current_thread().name


def test_calls_one_after_another_run_on_the_same_thread() -> None:
    pool = WarmPool(4, "t")
    names = {pool.submit(_thread).result(timeout=10) for _ in range(200)}
    assert names == {"t-1"}


def test_the_thread_that_finished_last_takes_the_next_call() -> None:
    # Its connection's pages are the warm ones (a plain executor hands the call to the thread
    # that has waited longest).
    pool = WarmPool(4, "t")
    gates = [threading.Event(), threading.Event()]
    first = pool.submit(lambda: (gates[0].wait(10), _thread())[1])
    second = pool.submit(lambda: (gates[1].wait(10), _thread())[1])
    gates[0].set()
    early = first.result(timeout=10)
    gates[1].set()
    late = second.result(timeout=10)
    assert early != late
    assert {pool.submit(_thread).result(timeout=10) for _ in range(20)} == {late}


def test_overlapping_calls_get_their_own_threads_up_to_the_size() -> None:
    pool = WarmPool(3, "t")
    gate = threading.Event()
    started = threading.Semaphore(0)

    def held() -> str:
        started.release()
        gate.wait(10)
        return _thread()

    futures = [pool.submit(held) for _ in range(7)]
    for _ in range(3):
        assert started.acquire(timeout=10)
    assert not started.acquire(timeout=0.2)  # the other four wait: no fourth thread
    gate.set()
    names = [f.result(timeout=10) for f in futures]
    assert set(names) == {"t-1", "t-2", "t-3"}
    # idle again, the last thread to finish takes the next call
    assert pool.submit(_thread).result(timeout=10) in {"t-1", "t-2", "t-3"}
    assert pool._threads == 3


def test_an_exception_reaches_the_caller() -> None:
    pool = WarmPool(2, "t")

    def fails() -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        pool.submit(fails).result(timeout=10)
    assert pool.submit(lambda: 42).result(timeout=10) == 42  # the thread lives on


def test_a_cancelled_call_that_waits_never_runs() -> None:
    pool = WarmPool(1, "t")
    gate = threading.Event()
    ran: list[str] = []
    first = pool.submit(lambda: gate.wait(10))
    waiting = pool.submit(lambda: ran.append("ran"))
    assert waiting.cancel()
    gate.set()
    assert first.result(timeout=10) is True
    assert pool.submit(lambda: "after").result(timeout=10) == "after"
    assert ran == []
