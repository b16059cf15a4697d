"""Following the sessions directories with watchfiles. Events are hints: each batch triggers an
ordinary refresh (stat-based), and a full refresh covers anything a watcher can miss: the first
one within a second of the watcher's start (what changed between the last pass and the start),
then one every RESCAN_SECONDS, busy or not.

Only directories that exist are watched. A missing one (no Pi yet, an unmounted archive) is
polled, once a tick, until it appears: watching its nearest existing parent recursively put an
inotify watch on every folder of $HOME (304 after 300 new folders) and a full refresh on every
file touched there. When a directory appears or goes, the watcher starts again on the new list,
with a full refresh.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from collections.abc import AsyncGenerator, Callable, Iterator

import watchfiles

from pi_event_search.index.indexer import Report
from pi_event_search.service.engine import Engine

RESCAN_SECONDS = 30.0
TICK_MS = 1000  # the watcher wakes at least this often to see whether a full refresh is due
BACKOFF_FIRST, BACKOFF_MAX = 1.0, 60.0  # seconds a watcher waits after an error


def _watched(engine: Engine) -> list[str]:
    """The session directories that exist now (the others are polled: _moved), this process's
    and those other processes on the index read (a process that starts with a directory of its
    own changes the list: the watcher starts again, with a full refresh)."""
    return sorted({d.path for d in engine.scanned() if os.path.isdir(d.path)})


def _moved(engine: Engine, watched: list[str]) -> bool:
    """A directory appeared or went since the watcher started on `watched`: start again."""
    return _watched(engine) != watched


def _relevant(change: watchfiles.Change, path: str) -> bool:
    return path.endswith(".jsonl") or change != watchfiles.Change.modified


def _grown(changes: set[tuple[watchfiles.Change, str]]) -> set[str]:
    """Session files that were only modified (appends, as a rule); empty when anything else
    happened, which calls for a full refresh."""
    if any(c != watchfiles.Change.modified or not p.endswith(".jsonl") for c, p in changes):
        return set()
    return {p for _, p in changes}


class _Rescan:
    """When a watcher's wake-up calls for a full refresh rather than the hinted files: the first
    one (nothing saw what changed before the watcher started), then every RESCAN_SECONDS."""

    def __init__(self) -> None:
        self.last: float | None = None

    def paths(self, changes: set[tuple[watchfiles.Change, str]] | None) -> set[str] | None:
        """The files to refresh (empty: all of them), or None: nothing to do."""
        now = time.monotonic()
        if self.last is None or now - self.last >= RESCAN_SECONDS:
            self.last = now
            return set()
        if not changes:
            return None  # a tick
        return _grown(changes)

    def redo(self) -> None:
        """The next wake-up refreshes everything (after an error)."""
        self.last = None


def watch_forever(engine: Engine, on_change: Callable[[Report], None],
                  stop: threading.Event | None = None) -> None:
    """Blocking loop for `pi-event-search index --watch`."""
    rescan = _Rescan()
    while stop is None or not stop.is_set():
        watched = _watched(engine)
        ticks = watchfiles.watch(*watched, watch_filter=_relevant, debounce=50, step=10,
                                 rust_timeout=TICK_MS, yield_on_timeout=True, stop_event=stop,
                                 raise_interrupt=False) if watched else _poll(stop)
        for changes in ticks:
            if _moved(engine, watched):
                rescan.redo()
                break
            paths = rescan.paths(changes)
            if paths is None:
                continue
            report = engine.refresh_paths(paths)
            if report.changed_sessions:
                on_change(report)


def _poll(stop: threading.Event | None) -> Iterator[set[tuple[watchfiles.Change, str]]]:
    """A tick a second, no events: while no session directory exists."""
    while stop is None or not stop.wait(TICK_MS / 1000):
        yield set()


async def _apoll(stop: asyncio.Event) -> AsyncGenerator[set[tuple[watchfiles.Change, str]], None]:
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), TICK_MS / 1000)
        if not stop.is_set():
            yield set()


async def watch_async(engine: Engine, on_change: Callable[[Report], None],
                      stop: asyncio.Event,
                      on_error: Callable[[str | None], None] | None = None) -> None:
    """The language server's loop: refreshes run in a worker thread, never on the event loop.
    An error (in a refresh, or in the watcher itself) is reported, then the loop waits a
    backoff (1 s doubling to 60 s) and carries on with a full refresh; the first refresh that
    succeeds clears the error. It ends when this process is no longer the writer (another
    took the lease while this one was stopped): the caller follows the new writer."""
    # failed: the first refresh that succeeds clears the error (the writer's first pass, which
    # ran before the watcher, may have left one: a full disk)
    delay, failed, rescan = BACKOFF_FIRST, True, _Rescan()
    while not stop.is_set():
        try:
            watched = _watched(engine)
            ticks: AsyncGenerator[set[tuple[watchfiles.Change, str]], None] = watchfiles.awatch(
                *watched, watch_filter=_relevant, debounce=50, step=10, rust_timeout=TICK_MS,
                yield_on_timeout=True, stop_event=stop) if watched else _apoll(stop)
            async with contextlib.aclosing(ticks):  # a watcher left by `break` stops now
                async for changes in ticks:
                    if engine.lease.lost or not engine.writer:
                        await asyncio.to_thread(engine.still_writer)
                        return
                    if _moved(engine, watched):
                        rescan.redo()
                        break
                    paths = rescan.paths(changes)
                    if paths is None and engine.replaced():
                        paths = set()  # a damaged index was moved aside: fill the new one
                    if paths is None:
                        continue
                    report = await asyncio.to_thread(engine.refresh_paths, paths)
                    if failed and on_error is not None:
                        on_error(None)
                    delay, failed = BACKOFF_FIRST, False
                    if report.changed_sessions:
                        on_change(report)
                else:
                    return  # stopped
        except Exception as exc:  # the watcher outlives any one error
            if on_error is not None:
                on_error(f"watching failed: {type(exc).__name__}: {exc}; "
                         f"retrying in {delay:g} s")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), delay)
            delay, failed = min(delay * 2, BACKOFF_MAX), True
            rescan.redo()
