"""Where a writer's full-text rows go, and what a commit of the main index owes them.

Passed explicitly down an indexing pass (indexer -> ingest -> rows, sessions) and to its
WriteBatch. The plain route writes the main index's FTS5 table in the same transaction; a bulk
load's route (ftsload.FtsLoad) also feeds a side database whose transactions follow the main
one's: commit and rollback are called right after the main index's.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable
from typing import Any

# Rows come as (fid, text, meta); the `parts` column is derived from the text here, so a delete
# (which must repeat what was inserted) derives the same.
INSERT_SQL = "INSERT INTO fts (rowid, text, meta, parts) VALUES (?,?,?,?)"
DELETE_SQL = "INSERT INTO fts (fts, rowid, text, meta, parts) VALUES ('delete', ?, ?, ?, ?)"

# An identifier with a case change inside (retryCount, SessionManager, HTTPServer, parseJSON2):
# the tokenizer keeps it whole (`retrycount`); its parts go to the `parts` column so that `retry`
# finds it too. snake_case, kebab-case, dotted names and paths are split by the tokenizer itself.
_MIXED = re.compile(r"[A-Za-z0-9]*(?:[a-z0-9][A-Z]|[A-Z]{2}[a-z])[A-Za-z0-9]*")
_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
MAX_PARTS_CHARS = 4096  # of one text's parts: enough for the identifiers of a long output


def split_identifier(word: str) -> list[str]:
    """`retryCount` -> [retry, count]; `HTTPServer` -> [http, server] (lower case)."""
    return [p.lower() for p in _PART.findall(word)]


def identifier_parts(text: str) -> str:
    """The parts of the text's mixed-case identifiers, each identifier once, space-joined."""
    if not text:
        return ""
    seen: dict[str, None] = {}
    size = 0
    for m in _MIXED.finditer(text):
        word = m.group()
        if word in seen:
            continue
        seen[word] = None
        size += len(word) + 1
        if size > MAX_PARTS_CHARS:
            break
    return " ".join(" ".join(split_identifier(w)) for w in seen)


def with_parts(rows: Iterable[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """(fid, text, meta) rows as the table takes them: with the text's identifier parts."""
    return [(fid, text, meta, identifier_parts(text)) for fid, text, meta in rows]


class FullText:
    """The main index's full-text table, written in the writer's own transaction."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def insert(self, rows: list[tuple[Any, ...]]) -> None:
        """(fid, text, meta) rows."""
        self.conn.executemany(INSERT_SQL, with_parts(rows))

    def delete(self, rows: Iterable[tuple[Any, ...]]) -> None:
        """Forget (fid, original text, meta) rows: a contentless FTS5 table needs the text."""
        self.conn.executemany(DELETE_SQL, with_parts(rows))

    def commit(self) -> None:
        """The main index committed (nothing more to do here)."""

    def rollback(self) -> None:
        """The main index rolled back (nothing more to do here)."""
