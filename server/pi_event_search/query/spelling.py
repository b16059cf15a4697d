"""Spelling: a plain word of the query that no event the caller may see holds, in no inflection, is
replaced by the most frequent indexed word one edit away (a letter added, dropped, changed, or two
neighbours swapped) that a visible event holds. A word that occurs in what the caller may see is
never corrected.

The candidates are generated from the word (about 54 * its length of them) and looked up in the
FTS5 vocabulary by equality, which seeks each one instead of walking the vocabulary. A word longer
than MAX_CHARS letters is never corrected: its candidates would number 54 per letter, each as long
as the word (a 2,000-letter word: 108,000 candidates, 530 MB), and a word that long is far more
often a hash or pasted text than a typo.

What the caller may see is where it may search: every visible session, and its own session before
the cutoff even when this search leaves that session out (core/authz.py `Scope.searchable_sql`).

Search-as-you-type (`prefixLast`) searches its last word as a prefix: that word is corrected only
when it begins no word the caller may see (`websokcet`, not `webso`), as a whole word would be.
"""

from __future__ import annotations

import re
import sqlite3
import string
from dataclasses import dataclass
from typing import Any

from pi_event_search.core.wire import Correction, DidYouMean
from pi_event_search.index import memo
from pi_event_search.query.inflect import forms
from pi_event_search.query.parse import Parsed
from pi_event_search.query.prefixes import terms as prefix_terms

MIN_CHARS = 4  # shorter words are too close to too many others to correct
MAX_CHARS = 40  # longer ones are never corrected (the candidates grow with the square of it)
MAX_TRIED = 8  # candidates checked for visibility, the most frequent first
PREFIX_TERMS = 32  # a prefix's terms checked for visibility before the prefix itself
_LETTERS = string.ascii_lowercase
_VOCAB = "temp.pies_rows"


def doc_counts(conn: sqlite3.Connection, tokens: set[str]) -> dict[str, int]:
    """Fragments holding each token, anywhere in the index (the FTS5 vocabulary's row counts:
    exact, but a walk over each token's whole posting list; spelling's existence checks)."""
    known = memo.of(conn, "doc_counts")
    wanted = [t for t in tokens if t not in known]
    if wanted:
        conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {_VOCAB} USING fts5vocab(main, fts, row)")
        found = {r["term"]: r["doc"] for r in conn.execute(
            f"SELECT term, doc FROM {_VOCAB} WHERE term IN ({','.join('?' * len(wanted))})",
            wanted)}
        for t in wanted:
            known[t] = found.get(t, 0)
    return {t: known[t] for t in tokens}


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

    def holds(self, conn: sqlite3.Connection, words: list[str], prefix: bool = False) -> bool:
        """Whether a fragment the caller may see holds one of the words (with `prefix`, a word
        beginning with one of them)."""
        star = " *" if prefix else ""
        match = " OR ".join('"' + w.replace('"', '""') + '"' + star for w in words)
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
    if not MIN_CHARS <= len(word) <= MAX_CHARS or not word.isascii() or not word.isalpha():
        return None
    if visible.holds(conn, list(forms(word))):
        return None
    counts = doc_counts(conn, edits(word))
    found = sorted(((n, w) for w, n in counts.items() if n),
                   key=lambda nw: (-nw[0], nw[1]))
    return next((w for _, w in found[:MAX_TRIED] if visible.holds(conn, [w])), None)


def _plain(raw: str) -> bool:
    """One English-looking word as typed (parse.py's rule): letters, lower case or Capitalised."""
    return raw.isascii() and raw.isalpha() and (raw.islower() or (
        raw[0].isupper() and raw[1:].islower()))


def corrected(conn: sqlite3.Connection, query: str, parsed: Parsed, visible: Visible
              ) -> DidYouMean | None:
    """The query with each word no visible fragment holds replaced by its suggestion."""
    fixes: list[Correction] = []
    text = query
    for term in parsed.terms:
        word = term.word
        if term.quoted:
            continue
        if word is None and term.typed.endswith(" *") and parsed.prefix is not None \
                and term.tokens == (parsed.prefix,) and _plain(term.raw):
            # Search-as-you-type's last word, a prefix: one that begins no word the caller may
            # see is a typo, and corrected as the whole word would be (the corrected query keeps
            # it a prefix). The vocabulary's terms of the prefix (the list its expansion reads)
            # answer most keystrokes: none, or one of the first few visible; only a prefix
            # whose first terms are all hidden pays for FTS5's merge of every term it begins.
            begun = prefix_terms(conn, parsed.prefix)
            if begun and (visible.holds(conn, begun[:PREFIX_TERMS])
                          or visible.holds(conn, [parsed.prefix], prefix=True)):
                continue
            word = parsed.prefix
        if word is None:
            continue
        better = suggestion(conn, word, visible)
        if better is None:
            continue
        fixes.append({"word": term.raw, "suggestion": better})
        text = re.sub(rf"(?<![\w\"]){re.escape(term.raw)}(?![\w\"])", better, text, count=1)
    return {"query": text, "corrections": fixes} if fixes else None
