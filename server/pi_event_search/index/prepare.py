"""The pure, CPU-heavy half of indexing: read a file's complete lines and project every entry.

Everything here is free of SQLite, so it can run ahead of the writer in a thread (`ReadAhead`):
zstd, hashing and SQLite release the GIL, which lets parsing and compression use the second core
while the writer is inside SQLite. (Preparing files in a worker process was measured and dropped:
unpickling the prepared entries cost the writer as much as preparing them.)
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from pi_event_search.core.timestamps import epoch_ms
from pi_event_search.index.textcodec import Packer
from pi_event_search.source import jsonl
from pi_event_search.source.projection import Event, project


@dataclass(slots=True)
class Prepared:
    line: int
    offset: int
    sub: int
    line_hash: bytes
    raw_id: str | None
    raw_parent: str | None
    ts: str | None
    ts_ms: int | None
    event: Event
    packed: list[str | bytes]  # each fragment's text as stored
    loaded: bool = True  # Pi's loader reads it (jsonl.Record.alone)


@dataclass(slots=True)
class ParsedFile:
    header: dict[str, Any] | None
    header_raw: bytes | None
    reason: str | None
    chunk: jsonl.Chunk = field(default_factory=jsonl.Chunk)
    records: Iterator[Prepared] = field(default_factory=lambda: iter(()))
    stat: os.stat_result | None = None  # of the handle it was read from (set by ReadAhead)


def prepare(records: Iterable[jsonl.Record], cwd: str | None, skip_header: bool,
            packer: Packer) -> Iterator[Prepared]:
    for rec in records:
        if skip_header and rec.line == 1 and rec.sub == 0:
            continue
        obj = rec.obj
        raw_id, raw_parent, ts = obj.get("id"), obj.get("parentId"), obj.get("timestamp")
        event = project(obj, cwd)
        yield Prepared(
            rec.line, rec.offset, rec.sub, rec.line_hash,
            raw_id if isinstance(raw_id, str) and raw_id else None,
            raw_parent if isinstance(raw_parent, str) and raw_parent else None,
            ts if isinstance(ts, str) else None, epoch_ms(ts), event,
            [packer.pack(f.text) for f in event.fragments], rec.alone)


def parse_open(fh: BinaryIO, packer: Packer) -> ParsedFile:
    """A whole file, from an open handle, as a stream: `records` yields entries one by one and
    `chunk` receives offsets and bad lines as they pass (the header decides the cwd for paths)."""
    size = os.fstat(fh.fileno()).st_size
    header, header_raw, reason = jsonl.read_header(fh)
    if header is None:
        return ParsedFile(None, header_raw, reason)
    chunk = jsonl.Chunk(end_offset=0, end_line=0)
    cwd = jsonl.header_cwd(header)
    stream = jsonl.stream_records(fh, 0, 1, size, chunk)
    return ParsedFile(header, header_raw, reason, chunk, prepare(stream, cwd, True, packer))


def sample_texts(paths: list[str], files: int = 64, head: int = 256 << 10) -> list[str]:
    """Fragment texts from the first `head` bytes of up to `files` of `paths`, spread over them:
    what a compression dictionary is trained on."""
    texts: list[str] = []
    step = max(1, len(paths) // files)
    for path in paths[::step][:files]:
        try:
            with open(path, "rb") as fh:  # read-only, never written
                header, _, _ = jsonl.read_header(fh)
                if header is None:
                    continue
                cwd = jsonl.header_cwd(header)
                for rec in jsonl.stream_records(fh, 0, 1, head, jsonl.Chunk()):
                    texts += (f.text for f in project(rec.obj, cwd).fragments)
        except (OSError, ValueError):
            continue
    return texts


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

    def __init__(self, paths: list[str], packer: Packer, depth: int = 16) -> None:
        self.paths, self.packer = paths, packer
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
                    parsed = parse_open(fh, self.packer)
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
