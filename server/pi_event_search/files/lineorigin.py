"""Which event wrote a line: the newest visible `edit` or `write` call on that file that wrote
the line's trimmed text, whole or in part (linewrites.py says when a call did), and the older
ones that wrote it too.

The index narrows the events (file evidence, then the tool call's indexed text); the decision is
made on the arguments read back from the session file, so nothing rests on a bounded or
normalised copy. A line an edit merely carried along as context was not written by it. A call whose result
was an error wrote nothing. Copies of one entry made by a fork are one event (the copy in the
session created first, the original).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any

import orjson

from pi_event_search.core import secrets
from pi_event_search.core.authz import Scope
from pi_event_search.core.wire import FileHit, LineOriginResult
from pi_event_search.files.filerefs import file_hit
from pi_event_search.files.linewrites import Needle, Write, indexed_evidence, written
from pi_event_search.index import textcodec
from pi_event_search.query.filepaths import TargetFile, target_file
from pi_event_search.query.shapes import EVENT_COLUMNS
from pi_event_search.source import jsonl
from pi_event_search.source.pitools import FILE_CHANGE_TOOLS
from pi_event_search.source.projection import HEAD_CHARS

MIN_CHARS = 8  # shorter lines (blank, a lone brace, `return;`) are written everywhere
MAX_CANDIDATES = 20
OMITTED = "[pi-event-search omitted "  # projection.bound()'s marker: the index lacks the middle


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
    # A line holding a credential is looked for as it would be shown, masked, in calls masked
    # the same way: a guessed value finds what the true one finds, so no answer confirms a guess.
    masked = secrets.scrub(needle)
    wanted = Needle(masked)
    for row, write in _writers(conn, target, wanted, scope, masked != needle):
        if (row["entry_id"], row["ts"]) in seen:
            continue
        seen.add((row["entry_id"], row["ts"]))
        # Read back from the session file, not the index: masked here as the index masks.
        text, mark = secrets.scrub(write.text), write.mark and secrets.scrub(write.mark)
        found.append(file_hit(conn, scope, row, fragment_id=f"tool.call:{write.block}",
                              kind="tool.call", text=text, mark=mark,
                              relation="file-changed", label="derived",
                              score=1.0 / (1 + len(found))))
        if len(found) > MAX_CANDIDATES:
            break
    if not found:
        return {"hit": None, "candidates": [], "reason": "short-edit" if wanted.short else "unknown"}
    return {"hit": found[0], "candidates": found[1:]}


def _writers(conn: sqlite3.Connection, target: TargetFile, needle: Needle, scope: Scope,
             masked: bool) -> Iterator[tuple[sqlite3.Row, Write]]:
    """Visible events that wrote the line into the file, newest first (judged on the calls'
    masked arguments when the line was masked)."""
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
        if masked:
            entry = _scrubbed(entry)
        for write in written(entry, target, row["cwd"], needle):
            if not _failed(conn, row["sid"], entry, write.block):
                yield row, write
                break


def _may_hold(conn: sqlite3.Connection, changes: str, params: list[Any], needle: Needle
              ) -> set[int]:
    """The events whose change calls could have written the line (never a false no), in one
    query: a file changed by hundreds of events costs one decompression each. A call whose
    indexed `edits` array is whole is judged on it; other shapes (a `write`, the legacy single
    replacement, a bounded text) pass when they hold the line or a piece of it long enough."""
    escaped = orjson.dumps(needle.text).decode()[1:-1]  # as it appears inside an `edits` array
    pieces = needle.windows()
    marks = ",".join("?" * len(FILE_CHANGE_TOOLS))
    out: set[int] = set()
    for f in conn.execute(
            f"SELECT eid, text FROM fragments WHERE eid IN ({changes}) AND kind = 'tool.call' "
            f"AND meta IN ({marks})", [*params, *sorted(FILE_CHANGE_TOOLS)]):
        text = textcodec.unpack(f["text"], conn)
        bounded = len(text) > HEAD_CHARS and OMITTED in text
        judged = None if bounded else indexed_evidence(text, needle)
        if bounded or judged or (judged is None and (
                needle.text in text or escaped in text or any(p in text for p in pieces))):
            out.add(f["eid"])
    return out


def _scrubbed(value: Any) -> Any:
    """Every string of a JSON value masked (a call's arguments, as the index holds them)."""
    if isinstance(value, str):
        return secrets.scrub(value)
    if isinstance(value, list):
        return [_scrubbed(v) for v in value]
    if isinstance(value, dict):
        return {k: _scrubbed(v) for k, v in value.items()}
    return value


def _source_entry(row: sqlite3.Row) -> dict[str, Any] | None:
    """The entry read back from its session file, when that line is still what was indexed."""
    return jsonl.read_entry(row["session_path"], row["byte_off"], row["sub"], row["lhash"])


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
