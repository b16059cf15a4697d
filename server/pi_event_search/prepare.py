"""The pure, CPU-heavy half of indexing: read a file's complete lines and project every entry.

Everything here is free of SQLite. (Preparing files in a worker process was measured and
dropped: unpickling the prepared entries cost the writer as much as preparing them.)
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, BinaryIO

from pi_event_search import jsonl, store
from pi_event_search.projection import Event, project


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


@dataclass(slots=True)
class ParsedFile:
    header: dict[str, Any] | None
    header_raw: bytes | None
    reason: str | None
    chunk: jsonl.Chunk = field(default_factory=jsonl.Chunk)
    records: Iterator[Prepared] = field(default_factory=lambda: iter(()))


def ts_ms(value: Any) -> int | None:
    if not isinstance(value, str):
        return None
    try:
        return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


def prepare(records: Iterable[jsonl.Record], cwd: str | None, skip_header: bool
            ) -> Iterator[Prepared]:
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
            ts if isinstance(ts, str) else None, ts_ms(ts), event,
            [store.pack(f.text) for f in event.fragments])


def parse_open(fh: BinaryIO) -> ParsedFile:
    """A whole file, from an open handle, as a stream: `records` yields entries one by one and
    `chunk` receives offsets and bad lines as they pass (the header decides the cwd for paths)."""
    size = os.fstat(fh.fileno()).st_size
    header, header_raw, reason = jsonl.read_header(fh)
    if header is None:
        return ParsedFile(None, header_raw, reason)
    chunk = jsonl.Chunk(end_offset=0, end_line=0)
    cwd = header.get("cwd") if isinstance(header.get("cwd"), str) else None
    stream = jsonl.stream_records(fh, 0, 1, size, chunk)
    return ParsedFile(header, header_raw, reason, chunk, prepare(stream, cwd, True))
