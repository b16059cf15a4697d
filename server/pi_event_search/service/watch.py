"""Following the sessions directories with watchfiles. Events are hints: each batch triggers an
ordinary refresh (stat-based), and a periodic rescan covers anything a watcher can miss.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Callable

import watchfiles

from pi_event_search.index.indexer import Report
from pi_event_search.service.engine import Engine

RESCAN_SECONDS = 30.0
BACKOFF_FIRST, BACKOFF_MAX = 1.0, 60.0  # seconds a watcher waits after an error


def _watched(engine: Engine) -> list[str]:
    """Existing session directories, or their nearest existing parent (a directory may appear)."""
    out: list[str] = []
    for d in engine.dirs:
        path = d.path
        while path != "/" and not os.path.isdir(path):
            path = os.path.dirname(path)
        out.append(path)
    return sorted(set(out))


def _relevant(change: watchfiles.Change, path: str) -> bool:
    return path.endswith(".jsonl") or change != watchfiles.Change.modified


def _grown(changes: set[tuple[watchfiles.Change, str]] | None) -> set[str]:
    """Session files that were only modified (appends, as a rule); empty when anything else
    happened (or on the periodic rescan), which calls for a full refresh."""
    if not changes or any(c != watchfiles.Change.modified or not p.endswith(".jsonl")
                          for c, p in changes):
        return set()
    return {p for _, p in changes}


def watch_forever(engine: Engine, on_change: Callable[[Report], None],
                  stop: threading.Event | None = None) -> None:
    """Blocking loop for `pi-event-search index --watch`."""
    while stop is None or not stop.is_set():
        for changes in watchfiles.watch(*_watched(engine), watch_filter=_relevant, debounce=50,
                                        step=10, rust_timeout=int(RESCAN_SECONDS * 1000),
                                        yield_on_timeout=True, stop_event=stop,
                                        raise_interrupt=False):
            report = engine.refresh_paths(_grown(changes))
            if report.changed_sessions and changes is not None:
                on_change(report)


async def watch_async(engine: Engine, on_change: Callable[[Report], None],
                      stop: asyncio.Event,
                      on_error: Callable[[str | None], None] | None = None) -> None:
    """The language server's loop: refreshes run in a worker thread, never on the event loop.
    An error (in a refresh, or in the watcher itself) is reported, then the loop waits a
    backoff (1 s doubling to 60 s) and carries on with a full refresh; the first refresh that
    succeeds clears the error."""
    delay, hints = BACKOFF_FIRST, True
    while not stop.is_set():
        try:
            async for changes in watchfiles.awatch(
                    *_watched(engine), watch_filter=_relevant, debounce=50, step=10,
                    rust_timeout=int(RESCAN_SECONDS * 1000), yield_on_timeout=True,
                    stop_event=stop):
                paths = _grown(changes) if hints else set()
                report = await asyncio.to_thread(engine.refresh_paths, paths)
                if not hints and on_error is not None:
                    on_error(None)
                delay, hints = BACKOFF_FIRST, True
                if report.changed_sessions:
                    on_change(report)
            return  # stopped
        except Exception as exc:  # the watcher outlives any one error
            if on_error is not None:
                on_error(f"watching failed: {type(exc).__name__}: {exc}; "
                         f"retrying in {delay:g} s")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), delay)
            delay, hints = min(delay * 2, BACKOFF_MAX), False
