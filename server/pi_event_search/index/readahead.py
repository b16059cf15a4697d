"""Work beside the writer: how many cores this process may use, and the thread that parses and
prepares files ahead of the writer (prepare.py's pure half of indexing).

zstd, hashing and SQLite release the GIL, which lets parsing and compression use the second core
while the writer is inside SQLite. (Preparing files in a worker process was measured and dropped:
unpickling the prepared entries cost the writer as much as preparing them.)
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Iterator

from pi_event_search.index.prepare import ParsedFile, Prepared, parse_open
from pi_event_search.index.textcodec import Packer
from pi_event_search.source.extractors import Registry


def cores() -> int:
    """CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


_BATCH = 32  # prepared entries per hand-over (fewer queue operations and GIL switches)
_END = object()


class ReadAhead:
    """Parses and prepares `paths`, in order, in a thread ahead of the writer. `take(path)` gives a
    ParsedFile whose records come from that thread; memory is bounded by the queue (at most
    `depth` batches in flight). An error in the thread is raised in the writer, from the file's
    records, exactly where an inline parse would raise it."""

    def __init__(self, paths: list[str], packer: Packer, extractors: Registry,
                 depth: int = 16) -> None:
        self.paths, self.packer, self.extractors = paths, packer, extractors
        self.pos = {p: i for i, p in enumerate(paths)}
        self.next = 0  # index of the next file the writer may take
        self.q: queue.Queue[tuple[int, object]] = queue.Queue(depth)
        self.stop = threading.Event()
        self.head: tuple[int, object] | None = None
        self.cpu = 0.0  # the thread's CPU seconds, once it is done
        self.thread = threading.Thread(target=self._run, name="pies-read-ahead", daemon=True)
        self.thread.start()

    def _put(self, item: tuple[int, object]) -> bool:
        while not self.stop.is_set():
            try:
                self.q.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _run(self) -> None:
        try:
            self._prepare_all()
        finally:
            self.cpu = time.thread_time()

    def _prepare_all(self) -> None:
        for i, path in enumerate(self.paths):
            started = False
            try:
                with open(path, "rb") as fh:  # read-only, never written
                    st = os.fstat(fh.fileno())  # before reading, as the writer's own path does
                    parsed = parse_open(fh, self.packer, self.extractors)
                    parsed.stat = st
                    records, parsed.records = parsed.records, iter(())
                    started = self._put((i, parsed))
                    if not started:
                        return
                    batch: list[Prepared] = []
                    for rec in records:
                        batch.append(rec)
                        if len(batch) >= _BATCH:
                            if not self._put((i, batch)):
                                return
                            batch = []
                    if not self._put((i, batch)) or not self._put((i, _END)):
                        return
            except Exception as exc:  # noqa: BLE001 - the writer redoes or raises it
                # Before the file was handed over, the writer simply parses it itself (and meets
                # the same error where it always would); after, the error ends its records.
                if not self._put((i, exc if started else None)) or not self._put((i, _END)):
                    return

    def _get(self) -> tuple[int, object]:
        if self.head is not None:
            item, self.head = self.head, None
            return item
        return self.q.get()

    def take(self, path: str) -> ParsedFile | None:
        """The prepared file, or None when the writer must read it itself (not read ahead,
        already taken, or the read failed)."""
        i = self.pos.get(path)
        if i is None or i < self.next:
            return None
        self.next = i + 1
        while True:
            item = self._get()
            if item[0] < i:
                continue  # leftovers of a file the writer skipped or abandoned
            if not isinstance(item[1], ParsedFile):
                return None
            parsed = item[1]
            parsed.records = self._records(i)
            return parsed

    def _records(self, i: int) -> Iterator[Prepared]:
        while True:
            item = self._get()
            if item[0] != i or item[1] is _END:
                if item[0] != i:
                    self.head = item
                return
            if isinstance(item[1], BaseException):
                raise item[1]
            yield from item[1]  # type: ignore[misc]

    def close(self) -> None:
        self.stop.set()
        while True:  # unblock the thread, then let it finish
            try:
                self.q.get_nowait()
            except queue.Empty:
                break
        self.thread.join(5)
