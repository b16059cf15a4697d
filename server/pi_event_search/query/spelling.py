"""Spelling: a plain word of the query that the index holds nowhere, in no inflection, is replaced
by the most frequent indexed word one edit away (a letter added, dropped, changed, or two
neighbours swapped). A word that occurs anywhere is never corrected.

The candidates are generated from the word (about 54 * its length of them) and looked up in the
FTS5 vocabulary by equality, which seeks each one instead of walking the vocabulary.
"""

from __future__ import annotations

import re
import sqlite3
import string

from pi_event_search.core.wire import Correction, DidYouMean
from pi_event_search.query.inflect import forms
from pi_event_search.query.parse import Parsed
from pi_event_search.query.relax import doc_counts

MIN_CHARS = 4  # shorter words are too close to too many others to correct
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


def suggestion(conn: sqlite3.Connection, word: str) -> str | None:
    """The correction of a word the index does not hold (None: it holds it, or nothing is near)."""
    if len(word) < MIN_CHARS or not word.isascii() or not word.isalpha():
        return None
    if any(doc_counts(conn, set(forms(word))).values()):
        return None
    counts = doc_counts(conn, edits(word))
    found = [(n, w) for w, n in counts.items() if n]
    if not found:
        return None
    return max(found, key=lambda nw: (nw[0], [-ord(c) for c in nw[1]]))[1]


def corrected(conn: sqlite3.Connection, query: str, parsed: Parsed) -> DidYouMean | None:
    """The query with each word the index does not hold replaced by its suggestion."""
    fixes: list[Correction] = []
    text = query
    for term in parsed.terms:
        if term.word is None or term.quoted:
            continue
        better = suggestion(conn, term.word)
        if better is None:
            continue
        fixes.append({"word": term.raw, "suggestion": better})
        text = re.sub(rf"(?<![\w\"]){re.escape(term.raw)}(?![\w\"])", better, text, count=1)
    return {"query": text, "corrections": fixes} if fixes else None
