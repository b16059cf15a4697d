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
# Such an identifier is a whole run of ASCII letters and digits holding a lower-case letter or a
# digit before an upper-case letter, or two upper-case letters before a lower-case one. Found with
# bytes.find over class maps of the text rather than a regular expression: the expression
# backtracked (quadratic in a long run, 30 to 45 ns a character at best) and was three quarters
# of a first index's full-text worker; this is 1.9 times faster than its linear form.
_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
MAX_PARTS_CHARS = 4096  # of one text's parts: enough for the identifiers of a long output
# Each byte of the UTF-8 text as a class; anything but an ASCII letter or digit (every byte of a
# non-ASCII character included) is a space, which ends a run. _LOWER: a lower-case letter or a
# digit is `a`, an upper-case letter `A`. _CAPITALS: digits apart, as `0`.
_LOWER = bytes(97 if 97 <= b <= 122 or 48 <= b <= 57 else 65 if 65 <= b <= 90 else 32
               for b in range(256))
_CAPITALS = bytes(97 if 97 <= b <= 122 else 48 if 48 <= b <= 57 else 65 if 65 <= b <= 90 else 32
                  for b in range(256))
_SPLIT_CACHE: dict[str, str] = {}  # identifier -> its parts, space-joined (a worker's lifetime)
_SPLIT_CACHE_MAX = 100_000


def split_identifier(word: str) -> list[str]:
    """`retryCount` -> [retry, count]; `HTTPServer` -> [http, server] (lower case)."""
    return [p.lower() for p in _PART.findall(word)]


def part_bounds(word: str) -> set[int]:
    """The offsets where split_identifier cuts `word`, its two ends included."""
    return {at for m in _PART.finditer(word) for at in m.span()}


def mixed_case_words(text: str) -> list[str]:
    """The text's mixed-case identifiers, each once, in order of first appearance, until their
    lengths (plus a separator each) pass MAX_PARTS_CHARS (the one that passes it included)."""
    raw = text.encode("utf-8", "surrogatepass")
    lower = raw.translate(_LOWER)
    find, rfind = lower.find, lower.rfind
    low = find(b"aA")  # the next lower-case letter or digit before an upper-case letter
    capitals = raw.translate(_CAPITALS) if b"AA" in lower else b""
    caps = capitals.find(b"AAa")  # the next two upper-case letters before a lower-case one
    seen: dict[bytes, None] = {}
    size = 0
    while low >= 0 or caps >= 0:
        at = low if caps < 0 or 0 <= low < caps else caps
        start = rfind(b" ", 0, at) + 1
        stop = find(b" ", at)
        if stop < 0:
            stop = len(lower)
        word = raw[start:stop]
        if word not in seen:
            seen[word] = None
            size += stop - start + 1
            if size > MAX_PARTS_CHARS:
                break
        if 0 <= low < stop:  # the rest of this run is done with
            low = find(b"aA", stop)
        if 0 <= caps < stop:
            caps = capitals.find(b"AAa", stop)
    return [word.decode("ascii") for word in seen]


def identifier_parts(text: str) -> str:
    """The parts of the text's mixed-case identifiers, each identifier once, space-joined."""
    if not text:
        return ""
    out = []
    for word in mixed_case_words(text):
        parts = _SPLIT_CACHE.get(word)
        if parts is None:
            if len(_SPLIT_CACHE) >= _SPLIT_CACHE_MAX:
                _SPLIT_CACHE.clear()
            parts = _SPLIT_CACHE[word] = " ".join(split_identifier(word))
        out.append(parts)
    return " ".join(out)


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
