"""The pure, CPU-heavy half of indexing: read a file's complete lines and project every entry.

Everything here is free of SQLite, so it can run ahead of the writer in a thread
(readahead.ReadAhead).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from pi_event_search.core.timestamps import epoch_ms
from pi_event_search.index.textcodec import Packer
from pi_event_search.source import jsonl
from pi_event_search.source.extractors import Registry
from pi_event_search.source.projection import Event, project, scrub_all


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


# Entries whose texts are scrubbed together (projection.scrub_all): up to this many, or as many
# as hold this many characters (the joined copy is bounded with them).
_SCRUB_BATCH = 64
_SCRUB_CHARS = 1 << 20


def prepare(records: Iterable[jsonl.Record], cwd: str | None, skip_header: int,
            packer: Packer, extractors: Registry) -> Iterator[Prepared]:
    """`skip_header`: how many lines the header takes (jsonl.header_lines), 0 for an append."""
    batch: list[tuple[jsonl.Record, Event]] = []
    chars = 0
    for rec in records:
        if rec.line <= skip_header and rec.sub == 0:
            continue
        event = project(rec.obj, cwd, extractors=extractors, scrubbed=False)
        batch.append((rec, event))
        chars += sum(len(f.text) for f in event.fragments)
        if len(batch) >= _SCRUB_BATCH or chars >= _SCRUB_CHARS:
            yield from _prepared(batch, packer)
            batch, chars = [], 0
    yield from _prepared(batch, packer)


def _prepared(batch: list[tuple[jsonl.Record, Event]], packer: Packer) -> Iterator[Prepared]:
    scrub_all([event for _, event in batch], utf8=True)
    for rec, event in batch:
        obj = rec.obj
        raw_id, raw_parent, ts = obj.get("id"), obj.get("parentId"), obj.get("timestamp")
        yield Prepared(
            rec.line, rec.offset, rec.sub, rec.line_hash,
            raw_id if isinstance(raw_id, str) and raw_id else None,
            raw_parent if isinstance(raw_parent, str) and raw_parent else None,
            ts if isinstance(ts, str) else None, epoch_ms(ts), event,
            _packed(packer, event), rec.alone)


def _packed(packer: Packer, event: Event) -> list[str | bytes]:
    packed = [packer.pack(f.text, f.utf8) for f in event.fragments]
    for f in event.fragments:
        f.utf8 = None  # packed: not kept while the entry waits for the writer
    return packed


def parse_open(fh: BinaryIO, packer: Packer, extractors: Registry) -> ParsedFile:
    """A whole file, from an open handle, as a stream: `records` yields entries one by one and
    `chunk` receives offsets and bad lines as they pass (the header decides the cwd for paths)."""
    size = os.fstat(fh.fileno()).st_size
    header, header_raw, reason = jsonl.read_header(fh)
    if header is None:
        return ParsedFile(None, header_raw, reason)
    chunk = jsonl.Chunk(end_offset=0, end_line=0)
    cwd = jsonl.header_cwd(header)
    stream = jsonl.stream_records(fh, 0, 1, size, chunk)
    return ParsedFile(header, header_raw, reason, chunk,
                      prepare(stream, cwd, jsonl.header_lines(header), packer, extractors))


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
                    if rec.line <= jsonl.header_lines(header):
                        continue
                    texts += (f.text for f in project(rec.obj, cwd).fragments)
        except (OSError, ValueError):
            continue
    return texts
