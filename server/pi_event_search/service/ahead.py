"""Reading the newest events ahead for their meaning, while this process writes the index.

The writer (the language server or the MCP server that holds the lease) gives the model the
opening text of new events as they are indexed, then of older ones back to a limit, so that a
first search of two words or more finds its best events' vectors known (docs/benchmarks.md:
730 ms -> 20 ms at 1.1 GB). Gently: after READ_AHEAD_IDLE seconds (a server started for one
question never does), half a second of work then 1.5 s of rest (a quarter of one core at most),
in a thread of its own at a lower priority that an exit never waits for. The order never depends
on it: a vector read ahead is the one a search would compute (query/meaning.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
from collections.abc import Callable
from typing import TypeVar

from pi_event_search.query import meaning
from pi_event_search.service.engine import Engine

# Events read ahead (PI_EVENT_SEARCH_READ_AHEAD: how many, 0: none), once the server has run this
# many seconds.
READ_AHEAD = 20_000
READ_AHEAD_IDLE = 10.0
T = TypeVar("T")


def limit() -> int:
    try:
        return max(0, int(os.environ.get("PI_EVENT_SEARCH_READ_AHEAD", READ_AHEAD)))
    except ValueError:
        return READ_AHEAD


async def read_ahead(engine: Engine, ahead: meaning.Ahead, stop: asyncio.Event,
                     warn: Callable[[str], None]) -> None:
    """Read ahead while this process holds the writer lease and `stop` is not set."""
    most = limit()

    def step() -> bool:
        return meaning.read_ahead(engine.reader(), ahead, most, 0.5)

    try:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(stop.wait(), READ_AHEAD_IDLE)
        while not stop.is_set() and engine.writer:
            more = await in_background(step)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(stop.wait(), 1.5 if more else 10.0)
    except Exception as exc:  # a cache: never worth the server
        warn(f"pi-event-search: reading ahead stopped: {exc}")


def in_background(fn: Callable[[], T]) -> asyncio.Future[T]:
    """`fn` in a daemon thread of its own at a lower priority: work that may be dropped half done
    (a cache), so that an exit never waits for it (a pool's thread is joined at exit: an editor
    restarting the server waited out a model load and a batch, over 3 s on a busy machine)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()

    def settle(value: T | None, exc: BaseException | None) -> None:
        if not done.done():
            if exc is not None:
                done.set_exception(exc)
            else:
                done.set_result(value)  # type: ignore[arg-type]

    def run() -> None:
        if sys.platform.startswith("linux"):  # this thread only: on Linux a task of its own
            with contextlib.suppress(OSError):
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
        try:
            value, exc = fn(), None
        except BaseException as caught:  # noqa: BLE001 - handed to the awaiting task
            value, exc = None, caught
        with contextlib.suppress(RuntimeError):  # the loop closed: nobody waits
            loop.call_soon_threadsafe(settle, value, exc)

    threading.Thread(target=run, name="pies-read-ahead", daemon=True).start()
    return done
