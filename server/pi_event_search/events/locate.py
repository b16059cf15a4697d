"""Where many events are, in one pass: what a note with hundreds of `pi-event:` references needs
for its links. One query per session named, and each session file opened once to check that the
stored lines still hold their entries (a file rewritten since it was indexed gives no location
until it is indexed again, as a read would say)."""

from __future__ import annotations

import sqlite3
from collections import defaultdict

from pi_event_search.core.authz import Scope
from pi_event_search.core.eventref import Ref
from pi_event_search.core.wire import Source
from pi_event_search.query.shapes import source
from pi_event_search.source import jsonl


def locate(conn: sqlite3.Connection, refs: list[Ref], scope: Scope
           ) -> dict[tuple[str, str], Source]:
    """The source location, by (session id, entry id), of every visible, indexed event among
    `refs` whose line is still the one indexed; the others are left out."""
    by_session: dict[str, set[str]] = defaultdict(set)
    for ref in refs:
        by_session[ref.session_id].add(ref.entry_id)
    rows: dict[str, list[sqlite3.Row]] = defaultdict(list)
    for session_id, entries in by_session.items():
        where, params = scope.event_sql(session_id)
        marks = ",".join("?" * len(entries))
        for row in conn.execute(
                "SELECT s.session_id, e.entry_id, s.path, e.line, e.byte_off, e.sub, e.lhash "
                "FROM events e JOIN sessions s ON s.sid = e.sid WHERE s.session_id = ? "
                f"AND e.entry_id IN ({marks}) AND {where}", [session_id, *entries, *params]):
            rows[row["path"]].append(row)
    out: dict[tuple[str, str], Source] = {}
    for path, found in rows.items():
        try:
            fh = open(path, "rb")  # noqa: SIM115 - closed below; read-only, never written
        except OSError:
            continue
        with fh:
            for row in found:
                raw = jsonl.read_entry_line(fh, row["byte_off"], row["sub"])
                if raw is not None and jsonl.digest(raw) == row["lhash"]:
                    out[(row["session_id"], row["entry_id"])] = source(
                        path, row["line"], row["byte_off"])
    return out
