"""One file's evidence in the index: which spellings of its path the index may hold, and the
visible events that read or changed it, shaped as hits.

Paths are compared canonically. The index stores a tool's path as Pi resolved it, against the
cwd the session *recorded*; when that cwd reaches the project through a symlink, the stored
spelling differs from the canonical one, so the canonical path is spelled once more under each
such recorded cwd. Another checkout of the same repository has another canonical path and never
matches.
"""

from __future__ import annotations

import posixpath
import sqlite3
from dataclasses import dataclass
from typing import Any

from pi_event_search.core.authz import Scope, canonical
from pi_event_search.core.wire import FileHit
from pi_event_search.query.shapes import hit_from_row
from pi_event_search.query.snippets import snippet_at
from pi_event_search.source.pitools import resolve_path


@dataclass(frozen=True, slots=True)
class TargetFile:
    """The file asked about: its canonical path and every spelling the index may use for it."""

    path: str
    spellings: tuple[str, ...]

    def holds(self, raw: Any, cwd: str | None) -> bool:
        """Whether a tool's path argument, resolved as Pi resolves it, names this file."""
        return resolve_path(raw, cwd or "") in self.spellings

    def sql(self, column: str) -> tuple[str, list[Any]]:
        return f"{column} IN ({','.join('?' * len(self.spellings))})", list(self.spellings)


def target_file(conn: sqlite3.Connection, path: str) -> TargetFile | None:
    """The file at an absolute path (it need not exist any more), or None for a relative one."""
    canon = canonical(path)
    if canon is None:
        return None
    spellings = dict.fromkeys([canon, posixpath.normpath(path)])
    parts = canon.strip("/").split("/")
    ancestors = ["/" + "/".join(parts[:i]) for i in range(len(parts) + 1)]
    for row in conn.execute(
            "SELECT DISTINCT cwd, cwd_canon FROM sessions WHERE cwd_canon IN "
            f"({','.join('?' * len(ancestors))}) AND cwd != cwd_canon", ancestors):
        cwd = row["cwd"]
        if isinstance(cwd, str) and cwd.startswith("/"):
            rest = canon[len(row["cwd_canon"]):].lstrip("/")
            spellings[posixpath.normpath(posixpath.join(cwd, rest))] = None
    return TargetFile(canon, tuple(spellings))


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
