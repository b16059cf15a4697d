"""Which event wrote a line: the newest visible `edit` or `write` call on that file whose new
text holds the line's trimmed text, and the older ones that wrote it too.

The index narrows the events (file evidence, then the tool call's indexed text); the decision is
made on the arguments read back from the session file, so nothing rests on a bounded or
normalised copy. An edit counts only when its new text holds the line more often than its old
text: a line an edit merely carried along as context was not written by it. A call whose result
was an error wrote nothing. Copies of one entry made by a fork are one event (the copy in the
session created first, the original).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from pi_event_search.core.authz import Scope
from pi_event_search.core.wire import FileHit, LineOriginResult
from pi_event_search.files.filerefs import TargetFile, file_hit, target_file
from pi_event_search.index import textcodec
from pi_event_search.query.shapes import EVENT_COLUMNS
from pi_event_search.source import jsonl
from pi_event_search.source.pitools import FILE_CHANGE_TOOLS
from pi_event_search.source.projection import HEAD_CHARS

MIN_CHARS = 8  # shorter lines (blank, a lone brace, `return;`) are written everywhere
MAX_CANDIDATES = 20
OMITTED = "[pi-event-search omitted "  # projection.bound()'s marker: the index lacks the middle


@dataclass(frozen=True, slots=True)
class Write:
    block: int  # index of the tool call in message.content
    text: str  # the new text that holds the line


def line_origin(conn: sqlite3.Connection, path: str, line_text: str, scope: Scope
                ) -> LineOriginResult:
    needle = line_text.strip()
    if len(needle) < MIN_CHARS:
        return {"hit": None, "candidates": [], "reason": "trivial"}
    target = target_file(conn, path)
    if target is None:
        return {"hit": None, "candidates": [], "reason": "unknown"}
    found: list[FileHit] = []
    seen: set[tuple[str, str | None]] = set()
    for row, write in _writers(conn, target, needle, scope):
        if (row["entry_id"], row["ts"]) in seen:
            continue
        seen.add((row["entry_id"], row["ts"]))
        found.append(file_hit(conn, scope, row, fragment_id=f"tool.call:{write.block}",
                              kind="tool.call", text=write.text, mark=needle,
                              relation="file-changed", label="derived",
                              score=1.0 / (1 + len(found))))
        if len(found) > MAX_CANDIDATES:
            break
    if not found:
        return {"hit": None, "candidates": [], "reason": "unknown"}
    return {"hit": found[0], "candidates": found[1:]}


def _writers(conn: sqlite3.Connection, target: TargetFile, needle: str, scope: Scope
             ) -> Iterator[tuple[sqlite3.Row, Write]]:
    """Visible events that wrote the line into the file, newest first."""
    paths, params = target.sql("r.path")
    changes = (f"SELECT r.eid FROM file_refs r WHERE {paths} AND r.op = 'changed' "
               "AND r.label = 'derived'")
    auth, auth_params = scope.event_sql(None)
    rows = conn.execute(
        f"SELECT {EVENT_COLUMNS} FROM events e JOIN sessions s ON s.sid = e.sid "
        f"WHERE e.eid IN ({changes}) AND {auth} ORDER BY e.ts_ms DESC, s.created, e.eid",
        [*params, *auth_params]).fetchall()
    holding = _may_hold(conn, changes, params, needle)
    for row in rows:
        if row["eid"] not in holding:
            continue
        entry = _source_entry(row)
        if entry is None:  # the file changed since it was indexed: no claim either way
            continue
        for write in _written(entry, target, row["cwd"], needle):
            if not _failed(conn, row["sid"], entry, write.block):
                yield row, write
                break


def _may_hold(conn: sqlite3.Connection, changes: str, params: list[Any], needle: str
              ) -> set[int]:
    """The events whose indexed change calls could hold the line (never a false no), in one
    query: a file changed by hundreds of events costs one decompression each, nothing more."""
    escaped = orjson.dumps(needle).decode()[1:-1]  # as it appears inside an `edits` array
    marks = ",".join("?" * len(FILE_CHANGE_TOOLS))
    out: set[int] = set()
    for f in conn.execute(
            f"SELECT eid, text FROM fragments WHERE eid IN ({changes}) AND kind = 'tool.call' "
            f"AND meta IN ({marks})", [*params, *sorted(FILE_CHANGE_TOOLS)]):
        text = textcodec.unpack(f["text"], conn)
        if needle in text or escaped in text or (len(text) > HEAD_CHARS and OMITTED in text):
            out.add(f["eid"])
    return out


def _source_entry(row: sqlite3.Row) -> dict[str, Any] | None:
    """The entry read back from its session file, when that line is still what was indexed."""
    try:
        with open(row["session_path"], "rb") as fh:
            raw = jsonl.read_line_at(fh, row["byte_off"])
    except OSError:
        return None
    if raw is None or jsonl.digest(raw) != row["lhash"]:
        return None
    objects, _ = jsonl.parse_line(raw)
    return objects[row["sub"]] if row["sub"] < len(objects) else None


def _written(entry: dict[str, Any], target: TargetFile, cwd: str | None, needle: str
             ) -> Iterator[Write]:
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    for i, block in enumerate(content if isinstance(content, list) else []):
        if not isinstance(block, dict) or block.get("type") != "toolCall":
            continue
        args = block.get("arguments")
        if block.get("name") not in FILE_CHANGE_TOOLS or not isinstance(args, dict):
            continue
        if not target.holds(args.get("path", args.get("file_path")), cwd):
            continue
        for new, old in _replacements(block["name"], args):
            if new.count(needle) > old.count(needle):
                yield Write(i, new)
                break


def _replacements(name: str, args: dict[str, Any]) -> list[tuple[str, str]]:
    """(new text, old text) pairs of a call, in every argument shape Pi's tools accept."""
    if name == "write":
        content = args.get("content")
        return [(content, "")] if isinstance(content, str) else []
    edits = args.get("edits")
    if isinstance(edits, str):  # some models send the array as a JSON string; Pi parses it
        try:
            edits = orjson.loads(edits)
        except orjson.JSONDecodeError:
            edits = None
    listed = [e for e in (edits if isinstance(edits, list) else []) if isinstance(e, dict)]
    pairs = [_pair(e) for e in [*listed, args]]  # args: the legacy single replacement
    return [p for p in pairs if p is not None]


def _pair(edit: dict[str, Any]) -> tuple[str, str] | None:
    new, old = edit.get("newText"), edit.get("oldText")
    if not isinstance(new, str):
        return None
    return new, old if isinstance(old, str) else ""


def _failed(conn: sqlite3.Connection, sid: int, entry: dict[str, Any], block: int) -> bool:
    """Whether the call's recorded result says it failed (no result: it is not known to)."""
    call_id = entry["message"]["content"][block].get("id")
    if not isinstance(call_id, str):
        return False
    row = conn.execute(
        "SELECT max(e.is_error) AS failed FROM relations r JOIN events e ON e.eid = r.eid "
        "WHERE r.target = ? AND r.type = 'tool-result-for' AND e.sid = ?",
        (call_id, sid)).fetchone()
    return bool(row and row["failed"])
