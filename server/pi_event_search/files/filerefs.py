"""One file's evidence in the index: the visible events that read or changed it, shaped as hits
(which spellings of its path the index may hold is query/filepaths.py's).
"""

from __future__ import annotations

import sqlite3

from pi_event_search.core.authz import Scope
from pi_event_search.core.wire import FileHit
from pi_event_search.query.shapes import hit_from_row
from pi_event_search.query.snippets import snippet_at


def file_hit(conn: sqlite3.Connection, scope: Scope, row: sqlite3.Row, *, fragment_id: str,
             kind: str, text: str, mark: str | None, relation: str, label: str,
             score: float) -> FileHit:
    """The search Hit shape (docs/protocol.md) plus the file relation and its label, from a row
    of EVENT_COLUMNS; the snippet is cut from `text` around the first occurrence of `mark`,
    which is its match."""
    hit = hit_from_row(row, fragment_id=fragment_id, kind=kind, snippet=snippet_at(text, mark),
                       score=score, session_name=scope.session_name(
                           conn, row["session_id"], row["session_name"]))
    return {**hit, "relation": relation, "label": label}
