"""The pure, CPU-heavy half of indexing: read a file's complete lines and project every entry.

Everything here is free of SQLite. (Preparing files in a worker process was measured and
dropped: unpickling the prepared entries cost the writer as much as preparing them.)
"""

from __future__ import annotations

import os
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
    stat: tuple[int, int, int, int]  # dev, ino, size, mtime_ns when read
    header: dict[str, Any] | None
    header_raw: bytes | None
    reason: str | None
    chunk: jsonl.Chunk = field(default_factory=jsonl.Chunk)
    records: list[Prepared] = field(default_factory=list)


def ts_ms(value: Any) -> int | None:
    if not isinstance(value, str):
        return None
    try:
        return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


def prepare(records: list[jsonl.Record], cwd: str | None, skip_header: bool) -> list[Prepared]:
    out: list[Prepared] = []
    for rec in records:
        if skip_header and rec.line == 1 and rec.sub == 0:
            continue
        obj = rec.obj
        raw_id, raw_parent, ts = obj.get("id"), obj.get("parentId"), obj.get("timestamp")
        event = project(obj, cwd)
        out.append(Prepared(
            rec.line, rec.offset, rec.sub, rec.line_hash,
            raw_id if isinstance(raw_id, str) and raw_id else None,
            raw_parent if isinstance(raw_parent, str) and raw_parent else None,
            ts if isinstance(ts, str) else None, ts_ms(ts), event,
            [store.pack(f.text) for f in event.fragments]))
    return out


def parse_open(fh: BinaryIO) -> ParsedFile:
    """A whole file, from an open handle (the header decides the cwd used for paths)."""
    st = os.fstat(fh.fileno())
    stat = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    header, header_raw, reason = jsonl.read_header(fh)
    if header is None:
        return ParsedFile(stat, None, header_raw, reason)
    chunk = jsonl.read_lines(fh, 0, 1, limit=st.st_size)
    cwd = header.get("cwd") if isinstance(header.get("cwd"), str) else None
    records = prepare(chunk.records, cwd, skip_header=True)
    chunk.records = []
    return ParsedFile(stat, header, header_raw, reason, chunk, records)
