"""Byte-level reader of Pi's JSONL: complete lines only, several objects per line, bad lines counted.

Only bytes up to the last `\\n` are durable; an unterminated tail is provisional and never read.
Nothing here writes to a file: sources are opened read-only, always.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import orjson

CHUNK = 4 << 20
_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,255}")  # docs/protocol.md, bounded
_DECODER = json.JSONDecoder()


@dataclass(frozen=True, slots=True)
class Record:
    """One JSON object found on a complete line."""

    line: int  # 1-based line number in the file
    offset: int  # byte offset of the line's first byte
    sub: int  # index of the object within its line (real files have two objects on one line)
    obj: dict[str, Any]
    line_hash: bytes  # digest of the whole line, to verify a later read at `offset`
    # Alone on its line, nothing else there: Pi's loader (JSON.parse per line) reads it. An object
    # sharing its line with another, or with bytes that are not JSON, is one Pi skips.
    alone: bool = True


@dataclass(slots=True)
class Chunk:
    """What one read of a file's durable suffix produced."""

    bad_lines: list[tuple[int, str]] = field(default_factory=list)
    end_offset: int = 0  # offset just after the last complete line
    end_line: int = 0  # number of complete lines up to end_offset
    last_line_offset: int | None = None
    last_line_hash: bytes | None = None


def digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=12).digest()


def parse_line(data: bytes) -> tuple[list[dict[str, Any]], str | None]:
    """Objects on one line, and an error when part of the line is not JSON.

    Fast path: one object. Slow path: several concatenated objects, or invalid UTF-8 (replaced
    with U+FFFD so the rest of the entry stays readable).
    """
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return _parse_slow(data)
    if isinstance(value, dict):
        return [value], None
    return [], f"not a JSON object ({type(value).__name__})"


def _parse_slow(data: bytes) -> tuple[list[dict[str, Any]], str | None]:
    text = data.decode("utf-8", errors="replace")
    objects: list[dict[str, Any]] = []
    pos, end = 0, len(text)
    error: str | None = None
    while pos < end:
        while pos < end and text[pos] in " \t\r\n":
            pos += 1
        if pos >= end:
            break
        try:
            value, pos = _DECODER.raw_decode(text, pos)
        except (json.JSONDecodeError, RecursionError) as exc:
            error = f"invalid JSON at column {pos + 1}: {getattr(exc, 'msg', 'too deeply nested')}"
            break
        if isinstance(value, dict):
            objects.append(_like_orjson(value))
        else:
            error = f"not a JSON object ({type(value).__name__})"
    return objects, error


def object_offsets(data: bytes) -> list[int]:
    """Byte offset, within the line, of each JSON object on a line that holds several (rare: a
    torn write followed by the next entry). Decoded with surrogateescape so that character
    positions map back to bytes exactly, even when the line is not valid UTF-8."""
    text = data.decode("utf-8", errors="surrogateescape")
    starts: list[int] = []
    pos, end, byte_pos, last = 0, len(text), 0, 0
    while pos < end:
        while pos < end and text[pos] in " \t\r\n":
            pos += 1
        if pos >= end:
            break
        byte_pos += len(text[last:pos].encode("utf-8", errors="surrogateescape"))
        last = pos
        try:
            value, pos = _DECODER.raw_decode(text, pos)
        except (json.JSONDecodeError, RecursionError):
            break
        if isinstance(value, dict):
            starts.append(byte_pos)
    return starts


def _like_orjson(value: dict[str, Any]) -> dict[str, Any]:
    """What the fast path would produce: lone surrogates become U+FFFD (SQLite and orjson refuse
    them) and integers beyond 64 bits become floats (orjson parses them so). Iterative: a deeply
    nested object must not exhaust the stack."""
    root: list[Any] = [value]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:
        container, key = stack.pop()
        item = container[key]
        if isinstance(item, str):
            container[key] = valid_text(item)
        elif isinstance(item, int) and not isinstance(item, bool):
            if not -(1 << 63) <= item < (1 << 64):
                try:
                    container[key] = float(item)
                except OverflowError:
                    container[key] = None
        elif isinstance(item, dict):
            if not all(isinstance(k, str) and k.isascii() for k in item):
                item = {valid_text(k): v for k, v in item.items()}
                container[key] = item
            stack.extend((item, k) for k in item)
        elif isinstance(item, list):
            stack.extend((item, i) for i in range(len(item)))
    result: dict[str, Any] = root[0]
    return result


def valid_text(text: str) -> str:
    """Text SQLite and orjson accept: lone surrogates become U+FFFD."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def stream_records(fh: BinaryIO, start: int, first_line: int, limit: int | None,
                   chunk: Chunk) -> Iterator[Record]:
    """Records one by one (memory bounded by the longest line); `chunk` receives the offsets,
    hashes and bad lines as the stream advances."""
    for line_no, offset, raw in iter_lines(fh, start, first_line, limit):
        line_hash = digest(raw)
        chunk.end_offset = offset + len(raw) + 1
        chunk.end_line = line_no
        chunk.last_line_offset, chunk.last_line_hash = offset, line_hash
        if not raw.strip():
            continue
        objects, error = parse_line(raw)
        if error is not None:
            chunk.bad_lines.append((line_no, error))
        starts = object_offsets(raw) if len(objects) > 1 else [0]
        alone = len(objects) == 1 and error is None
        for sub, obj in enumerate(objects):
            # Every object's own offset: the second of two joined objects is not at line start.
            yield Record(line_no, offset + (starts[sub] if sub < len(starts) else 0), sub, obj,
                         line_hash, alone)


def iter_lines(fh: BinaryIO, start: int, first_line: int,
               limit: int | None = None) -> Iterator[tuple[int, int, bytes]]:
    """(line number, offset, bytes without the newline) of every complete line from `start`."""
    fh.seek(start)
    pending = b""
    pending_offset = start
    line_no = first_line
    remaining = limit
    while True:
        size = CHUNK if remaining is None else min(CHUNK, remaining)
        if size <= 0:
            return
        block = fh.read(size)
        if not block:
            return
        if remaining is not None:
            remaining -= len(block)
        data = pending + block if pending else block
        pos = 0
        while True:
            nl = data.find(b"\n", pos)
            if nl < 0:
                break
            yield line_no, pending_offset + pos, data[pos:nl]
            line_no += 1
            pos = nl + 1
        pending_offset += pos
        pending = data[pos:]


def read_line_at(fh: BinaryIO, offset: int) -> bytes | None:
    """The complete line starting at `offset`, or None when it is not (yet) terminated. Read in
    growing blocks from 64 KiB: most lines are short, and a reader's CHUNK per line would read
    4 MiB for each entry read back (0.7 ms each; 500 references in a note took 336 ms)."""
    fh.seek(offset)
    parts: list[bytes] = []
    size = 64 << 10
    while True:
        block = fh.read(size)
        if not block:
            return None
        nl = block.find(b"\n")
        if nl >= 0:
            parts.append(block[:nl])
            return b"".join(parts)
        parts.append(block)
        size = min(size * 2, CHUNK)


def read_entry_line(fh: BinaryIO, offset: int, sub: int) -> bytes | None:
    """The whole line holding the entry whose object starts at `offset` (object `sub` of the
    line): for a later object of a joined line, the line starts before that offset."""
    return read_line_at(fh, offset if sub == 0 else line_start(fh, offset))


def read_entry(path: str, offset: int, sub: int, lhash: bytes) -> dict[str, Any] | None:
    """Entry `sub` of the line holding the object at `offset`, read back from the session file
    at `path`; None when the file is gone or that line is no longer the one indexed (`lhash` is
    the digest of the whole line, joined objects and all)."""
    try:
        with open(path, "rb") as fh:
            raw = read_entry_line(fh, offset, sub)
    except OSError:
        return None
    if raw is None or digest(raw) != lhash:
        return None
    objects, _ = parse_line(raw)
    return objects[sub] if sub < len(objects) else None


def unreadable(path: str) -> str | None:
    """Why the file at `path` cannot be read, when it exists and permissions are why (None: it
    reads, or it is gone)."""
    try:
        with open(path, "rb"):
            return None
    except PermissionError:
        return "permission denied"
    except OSError:
        return None


def line_start(fh: BinaryIO, offset: int) -> int:
    """Offset just after the newline that precedes `offset` (0 when none)."""
    pos = offset
    while pos > 0:
        step = min(CHUNK, pos)
        fh.seek(pos - step)
        block = fh.read(step)
        nl = block.rfind(b"\n")
        if nl >= 0:
            return pos - step + nl + 1
        pos -= step
    return 0


def header_cwd(header: dict[str, Any]) -> str | None:
    """The working directory a session header records (tool paths resolve against it)."""
    cwd = header.get("cwd")
    return cwd if isinstance(cwd, str) else None


# Oh My Pi keeps its mutable current title in a fixed-width record on line 1, before the header
# (session-title-slot.ts): `{"type":"title","v":1,"title":…,"pad":"   "}`, 256 bytes, rewritten in
# place. The header is then line 2. Stored under this key of the header dict (never a JSON key).
TITLE_SLOT = "\x00titleSlot"


def is_title_slot(obj: dict[str, Any]) -> bool:
    return obj.get("type") == "title" and obj.get("v") == 1 and isinstance(obj.get("title"), str)


def header_lines(header: dict[str, Any]) -> int:
    """How many lines the header takes: 2 after an Oh My Pi title record, else 1."""
    return 2 if TITLE_SLOT in header else 1


def read_header(fh: BinaryIO) -> tuple[dict[str, Any] | None, bytes | None, str | None]:
    """The session header when it is one, the raw first line (the title record of an Oh My Pi
    file: its digest then changes with the title, and the file is read again), or the reason it
    is not. An Oh My Pi header carries its title record under TITLE_SLOT."""
    raw = read_line_at(fh, 0)
    if raw is None:
        fh.seek(0)
        head = fh.read(1)
        return None, None, "empty file" if not head else "first line not complete yet"
    objects, error = parse_line(raw)
    if not objects or error is not None:
        return None, raw, f"first line is not JSON ({error or 'empty'})"
    header = objects[0]
    if is_title_slot(header) and len(objects) == 1:
        slot = header
        second = read_line_at(fh, len(raw) + 1)
        if second is None:
            return None, raw, "header line after the title record not complete yet"
        objects, error = parse_line(second)
        if not objects or error is not None:
            return None, raw, f"line 2 is not JSON ({error or 'empty'})"
        header = {**objects[0], TITLE_SLOT: slot}
    if header.get("type") != "session" or not isinstance(header.get("id"), str):
        return None, raw, "first line is not a Pi session header"
    if not header["id"]:
        return None, raw, "session header has an empty id"
    if _SESSION_ID.fullmatch(header["id"]) is None:  # its events could never be referenced
        return None, raw, "session id is not an id (letters, digits, '.', '_', '-'; at most 256)"
    return header, raw, None


def header_title(header: dict[str, Any]) -> str | None:
    """An Oh My Pi session's current title: its title record's, else the header's (set when the
    session was made). None for a Pi session (it names sessions with session_info entries)."""
    slot = header.get(TITLE_SLOT)
    for title in (slot.get("title") if isinstance(slot, dict) else None, header.get("title")):
        if isinstance(title, str) and title.strip():
            return " ".join(title.split())
    return None


def header_source(header: dict[str, Any]) -> str:
    """Which agent wrote the file: "omp" (Oh My Pi: a title record, or its header fields) or
    "pi"."""
    omp_fields = ("title", "titleSource", "additionalDirectories", "previousSessionFiles")
    return "omp" if TITLE_SLOT in header or any(k in header for k in omp_fields) else "pi"
