"""Spelling: a plain word of the query that no event the caller may see holds, in no inflection, is
replaced by the most frequent indexed word one edit away (a letter added, dropped, changed, or two
neighbours swapped) that a visible event holds. A word that occurs in what the caller may see is
never corrected.

The candidates are generated from the word (about 54 * its length of them) and looked up in the
FTS5 vocabulary by equality, which seeks each one instead of walking the vocabulary.
"""

from __future__ import annotations

import re
import sqlite3
import string
from dataclasses import dataclass
from typing import Any

from pi_event_search.core.wire import Correction, DidYouMean
from pi_event_search.query.inflect import forms
from pi_event_search.query.parse import Parsed
from pi_event_search.query.relax import doc_counts

MIN_CHARS = 4  # shorter words are too close to too many others to correct
MAX_TRIED = 8  # candidates checked for visibility, the most frequent first
_LETTERS = string.ascii_lowercase


def edits(word: str) -> set[str]:
    """Every string one edit away from `word`."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    out = {a + b[1:] for a, b in splits if b}
    out |= {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
    out |= {a + c + b[1:] for a, b in splits if b for c in _LETTERS}
    out |= {a + c + b for a, b in splits for c in _LETTERS}
    out.discard(word)
    return {w for w in out if len(w) >= MIN_CHARS - 1}


@dataclass(frozen=True, slots=True)
class Visible:
    """What the caller may see: SQL on the fragment `f`, its event `e` and session `s`, and the
    FTS5 phrases of the caller's places (None: everywhere)."""

    where: list[str]
    params: list[Any]
    scope_fts: str | None

    def holds(self, conn: sqlite3.Connection, words: list[str]) -> bool:
        """Whether a fragment the caller may see holds one of the words."""
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        if self.scope_fts:
            match = f"({match}) AND {self.scope_fts}"
        return conn.execute(
            "SELECT 1 FROM fts JOIN fragments f ON f.fid = fts.rowid JOIN events e "
            f"ON e.eid = f.eid JOIN sessions s ON s.sid = e.sid WHERE fts MATCH ? AND "
            f"{' AND '.join(self.where)} LIMIT 1", [match, *self.params]).fetchone() is not None


def suggestion(conn: sqlite3.Connection, word: str, visible: Visible) -> str | None:
    """The correction of a word no fragment the caller may see holds (None: one holds it, or
    no visible word is near). Only visible words are suggested: a suggestion must not tell a
    word of a session the caller may not see."""
    if len(word) < MIN_CHARS or not word.isascii() or not word.isalpha():
        return None
    if visible.holds(conn, list(forms(word))):
        return None
    counts = doc_counts(conn, edits(word))
    found = sorted(((n, w) for w, n in counts.items() if n),
                   key=lambda nw: (-nw[0], nw[1]))
    return next((w for _, w in found[:MAX_TRIED] if visible.holds(conn, [w])), None)


def corrected(conn: sqlite3.Connection, query: str, parsed: Parsed, visible: Visible
              ) -> DidYouMean | None:
    """The query with each word no visible fragment holds replaced by its suggestion."""
    fixes: list[Correction] = []
    text = query
    for term in parsed.terms:
        if term.word is None or term.quoted:
            continue
        better = suggestion(conn, term.word, visible)
        if better is None:
            continue
        fixes.append({"word": term.raw, "suggestion": better})
        text = re.sub(rf"(?<![\w\"]){re.escape(term.raw)}(?![\w\"])", better, text, count=1)
    return {"query": text, "corrections": fixes} if fixes else None
