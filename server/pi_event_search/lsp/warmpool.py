"""The threads that run a server's reads: the most recently idle one takes the next call.

Each thread reads through its own SQLite connection (Engine.reader), with its own page cache and
memo. asyncio's default executor hands sequential requests to its threads in turn (a finished
thread is not idle yet when the next request comes), so every search ran on a cache the other
thread had left cold in the CPU: a two-word search at 1.1 GB took 5.8 ms of CPU in the server
against 4.7 ms in a single thread. Here a call goes to the thread that finished last; a second
thread starts only when calls overlap, up to `size`.
"""

from __future__ import annotations

import collections
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

_Job = tuple[Callable[[], Any], "Future[Any]"]


class WarmPool:
    """Up to `size` daemon threads; idle ones on a stack, calls beyond them in a queue."""

    def __init__(self, size: int, name: str) -> None:
        self.size, self.name = size, name
        self._lock = threading.Lock()
        self._idle: list[queue.SimpleQueue[_Job]] = []  # each idle thread's inbox, last idle on top
        self._waiting: collections.deque[_Job] = collections.deque()
        self._threads = 0

    def submit(self, fn: Callable[[], Any]) -> Future[Any]:
        future: Future[Any] = Future()
        job = (fn, future)
        with self._lock:
            if self._idle:
                self._idle.pop().put(job)
                return future
            if self._threads >= self.size:
                self._waiting.append(job)
                return future
            self._threads += 1
            n = self._threads
        inbox: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        inbox.put(job)
        threading.Thread(target=self._serve, args=(inbox,), name=f"{self.name}-{n}",
                         daemon=True).start()
        return future

    def _serve(self, inbox: queue.SimpleQueue[_Job]) -> None:
        job = inbox.get()
        while True:
            fn, future = job
            result: Any = None
            error: BaseException | None = None
            run = future.set_running_or_notify_cancel()
            if run:
                try:
                    result = fn()
                except BaseException as exc:  # noqa: BLE001 - the caller's to raise
                    error = exc
            # Idle before the caller hears back: its next call finds this thread ready.
            with self._lock:
                after = self._waiting.popleft() if self._waiting else None
                if after is None:
                    self._idle.append(inbox)
            if run:
                if error is not None:
                    future.set_exception(error)
                else:
                    future.set_result(result)
            job = after if after is not None else inbox.get()
