"""The one scoring model of a search: each event's score from its evidence.

A query term has alternatives: its words as typed, their other inflections, the word as a part of
an identifier (and a camelCase term's parts as words), a word the index never holds as the two it
holds side by side (`typecheck`: "type check"), its developer synonyms. Each alternative
has its own IDF (from its document count) and a discount below the typed word, and never counts
for more than the typed word would: a common synonym cannot flood a rare word's place. A fragment
holding an alternative scores what BM25 makes of its occurrences and its length (FTS5's own bm25
for an informative alternative; the word counted once for a common one): saturated and length
normalised, so a 50,000-character page that holds a word once scores far below a short message
that says it. An event scores, for each term, the best of its fragments (words spread over its
text and its tool calls all count), summed over the terms; the other event of its turn (a call's
result, a question's answer) lends its words at `turn` of their weight; the sum is multiplied by a
factor for the query's adjacent word pairs found side by side and in order in one fragment (the
mark of words copied from the event), and by a bounded coverage factor (0 as measured). Recency
breaks ties.

Common words decide nothing alone (as Lucene's CommonTermsQuery): an alternative held by more than
a share of the index only adds to the score of candidates that rarer ones chose, and a common
identifier part or synonym adds nothing. The candidates are the best fragments by FTS5's bm25 of
the informative alternatives together (ORDER BY rank reads their matches only, bounded since none
is common), the newest holding every term (a conjunction of common words, for a query of nothing
else), and the best by bm25 holding every term but one and every two of the rarest terms: an event
typed from memory may hold two common words of four, and at 250 MB the newest such are other
sessions'. A conjunction whose rarest term is in more than `scored_cap` fragments takes the newest
instead (bm25 reads every match). The weights live in evidence.json, each chosen on the relevance
set's dev split (docs/benchmarks.md).
"""

from __future__ import annotations

import bisect
import heapq
import json
import math
import os
import re
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

from pi_event_search.index import memo
from pi_event_search.query import prefixes
from pi_event_search.query.expansions import camel_parts, synonyms, written_apart
from pi_event_search.query.inflect import forms
from pi_event_search.query.matches import Query, fragment_filters, narrowed_any, tuples, words
from pi_event_search.query.parse import Term

SAMPLE = 1000  # newest matches read to estimate an alternative's document count
_NO_TIME = -(1 << 62)
_PHRASE = re.compile(r'"((?:[^"]|"")*)"')


@dataclass(frozen=True, slots=True)
class Weights:
    k1: float
    b: float
    smooth: float  # added to a document count before its IDF: a word (nearly) absent from
    # the index is most often the one remembered wrong, and must not outweigh the rest
    inflected: float
    parts: float
    synonym: float
    common_fraction: float  # an alternative in more than this share of the index is common...
    common_floor: int  # ...when it is also in more than this many fragments...
    common_cap: int  # ...and always past this many (what one ORDER BY rank may read)
    by_score: int  # candidates by bm25 of the informative alternatives
    all_terms: int  # newest fragments holding every term
    conjunction: int  # newest matches of a query of common words only
    all_but_one: int  # fragments holding every term but one (of `leave_out` terms)...
    leave_out: int
    pairs: int  # ...and holding two of those terms
    scored_cap: int  # candidates by bm25 when it reads at most this many matches, else newest
    proximity: float
    coverage: float
    turn: float  # of a term its turn's other event holds, relative to holding it itself
    turns: int  # the best events whose turn lends them words
    max_events: int  # the length of one search's order
    kinds: dict[str, float]
    meaning_top: int  # the best events read again for their meaning (query/meaning.py)...
    meaning_words: float  # ...their standard evidence score weighing this much (closeness the
    # rest)...
    meaning_further: int  # ...and this many after them glanced at...
    meaning_glance: int  # ...(their first this many tokens),...
    meaning_join: int  # ...the closest this many read in full...
    meaning_gate: float  # ...and joining the best when this many deviations closer than their mean
    meaning_tokens: int  # ...of the first this many tokens...
    meaning_chars: int  # ...of the first this many characters of each event
    meaning_alike: float  # a long event this close to a better one of its session waits...
    meaning_alike_chars: int  # ...long: its opening at least this many characters (meaning.unlike)


@lru_cache(maxsize=1)
def weights() -> Weights:
    """evidence.json's weights; PI_EVENT_SEARCH_EVIDENCE names a JSON file of some to change
    instead (bench/relevance tunes them without reinstalling)."""
    data = json.loads(resources.files("pi_event_search.query").joinpath("evidence.json")
                      .read_text(encoding="utf-8"))
    data.pop("about", None)
    other = os.environ.get("PI_EVENT_SEARCH_EVIDENCE")
    if other:
        data.update(json.loads(Path(other).read_text(encoding="utf-8")))
    return Weights(**data)


@dataclass(frozen=True, slots=True)
class Alt:
    """One way a term is held: an FTS5 expression (its columns named), its discount, and whether
    it counts for `match: "all"` (the words as typed or inflected)."""

    term: int
    expr: str
    discount: float
    exact: bool


class Row(NamedTuple):
    """A candidate fragment as the model reads it (size: stored characters), and how its text is
    stored (its length; its last 24 characters or bytes, when read): copies of one text store
    alike."""

    fid: int
    eid: int
    kind: str
    size: float
    ts: int | None
    sid: int
    stored: int
    ending: str | bytes | None


@dataclass(frozen=True, slots=True)
class Scored:
    """One event of the order: its evidence fragment, session row, the query terms (labels) it
    holds and lacks."""

    eid: int
    fid: int
    sid: int
    matched: tuple[str, ...]
    missing: tuple[str, ...]
    score: float  # the evidence's sum (what meaning's fusion weighs against closeness)


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _any(phrases: Iterable[str]) -> str:
    return " OR ".join(_quote(p) for p in phrases)


def alternatives(conn: sqlite3.Connection, term: Term, i: int, w: Weights,
                 prefix: str | None) -> list[Alt]:
    typed = term.typed
    if prefix is not None and typed.endswith("*") and " " not in term.label:
        found = prefixes.terms(conn, prefix)
        if 0 < len(found) <= prefixes.MAX_TERMS:
            typed = "(" + _any(found) + ")"
    out = [Alt(i, words(typed), 1.0, True)]
    if term.quoted or typed.endswith("*") or typed.startswith("("):
        return out
    if term.inflected:
        others = [p.replace('""', '"') for p in _PHRASE.findall(term.inflected)]
        others = [p for p in others if p.lower() != " ".join(term.tokens)]
        if others:
            out.append(Alt(i, words(_any(others)), w.inflected, True))
    parts = camel_parts(term.raw)
    whole = f"parts : ({term.inflected or typed})"
    out.append(Alt(i, f"{whole} OR {words(_quote(' '.join(parts)))}" if parts else whole,
                   w.parts, False))
    # A word the history never holds, in any inflection, may be one it writes apart.
    apart = (written_apart(term.word, lambda t: document_count(conn, words(_quote(t))))
             if term.word and not document_count(conn, words(term.inflected or typed)) else None)
    if apart:
        out.append(Alt(i, words(_quote(" ".join(apart))), w.parts, False))
    if term.word:
        syn = sorted({f for s in synonyms(term.word) for f in forms(s)})
        if syn:
            out.append(Alt(i, words(_any(syn)), w.synonym, False))
    return out


def _total(conn: sqlite3.Connection) -> int:
    known = memo.of(conn, "fragments")
    if "n" not in known:
        known["n"] = conn.execute("SELECT max(fid) AS n FROM fragments").fetchone()["n"] or 1
    return int(known["n"])


def _average_size(conn: sqlite3.Connection) -> float:
    """The average stored size of a fragment, over the newest ones (a sample: a full scan reads
    the whole table)."""
    known = memo.of(conn, "fragments")
    if "avg" not in known:
        n = _total(conn)
        row = conn.execute(
            "SELECT avg(length(text) * (CASE typeof(text) WHEN 'blob' THEN 2.5 ELSE 1.0 END)) "
            "AS a FROM fragments WHERE fid > ?", (n - 2000,)).fetchone()
        known["avg"] = float(row["a"] or 1.0) or 1.0
    return float(known["avg"])


def document_count(conn: sqlite3.Connection, expr: str) -> int:
    """Fragments an expression matches, about: counted up to SAMPLE of the newest, and a common
    one's count extrapolated from how far back those reach (an exact count walks the whole
    posting list: 25 ms for `the` at 250 MB, where an IDF needs only its order of magnitude)."""
    known = memo.of(conn, "document_count")
    if expr not in known:
        n = _total(conn)
        row = conn.execute(
            "SELECT count(*) AS count, min(rowid) AS low FROM (SELECT rowid FROM fts "
            "WHERE fts MATCH ? ORDER BY rowid DESC LIMIT ?)", (expr, SAMPLE)).fetchone()
        count = row["count"]
        known[expr] = count if count < SAMPLE else int(count * n / max(1, n - row["low"] + 1))
    return int(known[expr])


def _columns(q: Query) -> tuple[str, list[Any]]:
    kind_where, kind_params = fragment_filters(q.filters)
    extra = (" AND " + " AND ".join(kind_where)) if kind_where else ""
    return f"{' AND '.join(q.where)}{extra}", [*q.params, *kind_params]


_ROW = """SELECT f.fid, f.eid, f.kind,
         length(f.text) * (CASE typeof(f.text) WHEN 'blob' THEN 2.5 ELSE 1.0 END), e.ts_ms, e.sid,
         length(f.text), substr(f.text, -24)
  FROM fts JOIN fragments f ON f.fid = fts.rowid JOIN events e ON e.eid = f.eid
  JOIN sessions s ON s.sid = e.sid"""
_AMONG = "+rowid IN (SELECT value FROM json_each(?))"  # one of a JSON list of fids
COPIES = 20  # at most this many rows read for each one wanted: copies of one text count once


def _distinct(conn: sqlite3.Connection, sql: str, params: list[Any], limit: int) -> list[Row]:
    """The first `limit` rows of distinct texts: a forked session's copies of its entries (Pi's
    fork writes them again), or one session copied many times, hold the same text in the same
    kind, stored alike (same length and ending: the stored bytes of identical texts are
    identical), and would take every candidate's place with one event's words."""
    seen: set[tuple[Any, ...]] = set()
    out: list[Row] = []
    for read, r in enumerate(map(Row._make, tuples(conn).execute(sql, params))):
        if read == limit * COPIES:
            break
        mark = (r.kind, r.stored, r.ending)
        if mark in seen:
            continue
        seen.add(mark)
        out.append(r)
        if len(out) == limit:
            break
    return out


def _best(conn: sqlite3.Connection, q: Query, expr: str, limit: int) -> list[Row]:
    """The visible, filtered fragments an expression matches, best by FTS5's bm25 first (the
    text column counts in full, the tool and error column half, identifier parts 0.8), one of
    each text. The caller's places stay out of the MATCH (the SQL decides visibility): bm25
    would weigh them as words and count every fragment of the place to do so."""
    where, params = _columns(q)
    sql = (f"{_ROW} WHERE fts MATCH ? AND fts.rank MATCH 'bm25(1.0, 0.5, 0.8)' AND {where} "
           "ORDER BY fts.rank")
    return _distinct(conn, sql, [expr, *params], limit)


def _newest(conn: sqlite3.Connection, q: Query, expr: str, limit: int) -> list[Row]:
    where, params = _columns(q)
    sql = f"{_ROW} WHERE fts MATCH ? AND {where} ORDER BY fts.rowid DESC"
    return _distinct(conn, sql, [narrowed_any(q, expr), *params], limit)


def conjunction(alts: list[Alt], terms: Iterable[int]) -> str:
    """Each of these terms as typed or inflected, in one fragment."""
    return " AND ".join("(" + " OR ".join(a.expr for a in alts if a.term == i and a.exact) + ")"
                        for i in terms)


def _term_df(alts: list[Alt], df: list[int], term: int) -> int:
    return sum(df[k] for k, a in enumerate(alts) if a.term == term and a.exact)


def every_term(conn: sqlite3.Connection, q: Query) -> str | None:
    """The FTS5 expression of the fragments holding every term of the query."""
    terms = q.parsed.terms
    if not terms:
        return None
    w = weights()
    return conjunction([a for i, t in enumerate(terms) for a in alternatives(
        conn, t, i, w, q.parsed.prefix if i == len(terms) - 1 else None)], range(len(terms)))


def scored(conn: sqlite3.Connection, q: Query, exact: bool) -> list[Scored]:
    """Every event of the query's order, best first (at most max_events)."""
    w = weights()
    terms = q.parsed.terms
    if not terms:
        return []
    alts = [a for i, t in enumerate(terms)
            for a in alternatives(conn, t, i, w, q.parsed.prefix if i == len(terms) - 1 else None)]
    n = _total(conn)
    df = [document_count(conn, a.expr) for a in alts]
    typed_idf = [0.0] * len(terms)
    idf = []
    for a, d in zip(alts, df, strict=True):
        value = math.log(1 + (n - d + 0.5) / (d + w.smooth + 0.5))
        if a.discount == 1.0:
            typed_idf[a.term] = value
        idf.append(value)
    gain = [a.discount * (idf[k] if a.discount == 1.0 else min(idf[k], typed_idf[a.term]))
            for k, a in enumerate(alts)]
    cutoff = min(w.common_cap, max(w.common_floor, int(w.common_fraction * n)))
    quoted = [words(t.typed) for t in terms if t.quoted]
    required = " AND ".join(quoted)

    def needing(expr: str) -> str:
        return f"({expr}) AND {required}" if required and expr != required else expr

    rows: dict[int, Row] = {}
    chosen: list[str] = []

    def keep(expr: str, found: list[Row]) -> bool:
        if found:
            chosen.append(expr)
            rows.update((r.fid, r) for r in found)
        return bool(found)

    informative = [k for k, a in enumerate(alts) if 0 < df[k] <= cutoff]
    single = len(terms) == 1
    if informative:
        # The best fragments by bm25 of the informative alternatives together: one holding
        # several of them ranks above one holding one of them often.
        expr = needing(" OR ".join(f"({alts[k].expr})" for k in informative))
        keep(expr, _best(conn, q, expr, w.max_events if single else w.by_score))

    def take(expr: str, among: list[int], limit: int) -> None:
        # The best by bm25, which reads every match: at most as many as the conjunction's rarest
        # term is in; past `scored_cap` of those, the newest (FTS5 stops at the limit).
        bound = min(_term_df(alts, df, i) for i in among)
        keep(needing(expr),
             (_best if bound <= w.scored_cap else _newest)(conn, q, needing(expr), limit))

    # The newest fragments holding every term (a word the index holds nowhere cannot be
    # required): a term whose word as typed is common is chosen by nothing else.
    held = [i for i in range(len(terms))
            if any(df[k] for k, a in enumerate(alts) if a.term == i and a.exact)]
    tried = [conjunction(alts, held)] if held else []
    if not informative and len(held) > 1:  # common words only, not all together: the rarest
        tried.append(conjunction(alts, [min(held, key=lambda i: _term_df(alts, df, i))]))
    for expr in tried:
        if keep(needing(expr), _newest(conn, q, needing(expr),
                                       w.all_terms if informative else w.conjunction)):
            break
    # Every term but one, for each of the rarest terms left out in turn, and every two of them:
    # a query typed from memory holds a word its event lacks, or two, and its other words may
    # all be common ones.
    if len(held) >= 3:
        rarest = sorted(held, key=lambda i: _term_df(alts, df, i))[: w.leave_out]
        for i in rarest:
            among = [j for j in held if j != i]
            take(conjunction(alts, among), among, w.all_but_one)
        # A pair reads both words' postings: a word in more than `scored_cap` fragments (`the`)
        # pairs with none (with it, a first ask's p95 at 1.1 GB doubled).
        paired = [i for i in rarest if _term_df(alts, df, i) <= w.scored_cap] if w.pairs else []
        for at, i in enumerate(paired):
            for j in paired[at + 1:]:
                take(conjunction(alts, [i, j]), [i, j], w.pairs)
    if not rows:
        return []
    strength = [_strength(n, d) if 0 < d <= cutoff else 0.0 for d in df]
    return _rank(conn, q, exact, alts, gain, strength, chosen, rows, w)


def _strength(n: int, df: int) -> float:
    """FTS5's own IDF of an alternative (log((N - n + 0.5) / (n + 0.5)), at least 1e-6): its
    bm25 divided by this is what the word's occurrences and the fragment's length make of it."""
    return max(1e-6, math.log((n - df + 0.5) / (df + 0.5)))


def _rank(conn: sqlite3.Connection, q: Query, exact: bool, alts: list[Alt], gain: list[float],
          strength: list[float], chosen: list[str], rows: dict[int, Row], w: Weights
          ) -> list[Scored]:
    terms = q.parsed.terms
    candidates = {r.eid for r in rows.values()}
    # Each candidate event's fragments (consecutive fids), so that a term held by another of its
    # fragments than the one that made it a candidate counts too; and its neighbours', where the
    # other event of its turn most often is (a call's result, a question's answer).
    near_by = candidates | ({e + d for e in candidates for d in (-1, 1)} if w.turn else set())
    every_span = spans(conn, sorted(near_by))
    mine = {eid: span for eid, span in every_span.items() if eid in candidates}
    relevant = {fid for lo, hi in every_span.values() for fid in range(lo, hi + 1)}
    low = min(lo for lo, _ in mine.values())
    high = max(hi for _, hi in mine.values())
    chosen_expr = " OR ".join(f"({c})" for c in chosen)
    # fid -> the alternatives it holds, each with what its occurrences and the fragment's length
    # make of it: bm25 over the IDF for an informative alternative (FTS5 reads its matches, few by
    # definition), the word counted once (None) for a common one, found among the candidates'
    # own matches only.
    # The candidates' fragments are kept out of FTS5's hands (`+rowid`: a rowid it is given, it
    # seeks once per value) and checked by SQLite for each match in the range: a common word's
    # matches there run to 100,000, which one Python loop took 100 ms to sift.
    among = json.dumps(sorted(relevant))
    held: dict[int, list[tuple[int, float | None]]] = {}
    for k, a in enumerate(alts):
        if strength[k]:
            found = _named(conn).execute(
                "SELECT rowid AS fid, bm25(fts, 1.0, 0.5, 0.8) AS bm25 FROM fts "
                f"WHERE fts MATCH ? AND rowid BETWEEN ? AND ? AND {_AMONG}",
                (a.expr, low, high, among))
        elif not a.exact:
            # A common identifier part or synonym: a discounted common word, read over every
            # candidate for a share of nothing (dev and test orders the same without it), and what
            # made `bug` seem matched by every event that says "error".
            continue
        else:
            found = _named(conn).execute(
                "SELECT rowid AS fid, NULL AS bm25 FROM fts WHERE fts MATCH ? "
                f"AND rowid BETWEEN ? AND ? AND {_AMONG}",
                (narrowed_any(q, f"({a.expr}) AND ({chosen_expr})"), low, high, among))
        for fid, bm25 in found:
            held.setdefault(fid, []).append((k, None if bm25 is None else -bm25 / strength[k]))
    model = _Model(alts, gain, w, _average_size(conn))
    own = model.events(conn, q, mine, held, rows)
    pairs = (_pairs(conn, q, chosen_expr, low, high, among)
             if w.proximity and len(terms) > 1 else {})
    near = {eid: max((pairs.get(f, 0) for f in range(lo, hi + 1)), default=0)
            for eid, (lo, hi) in mine.items() if eid in own}
    npairs = max(1, len(terms) - 1)

    def strength_of(eid: int) -> float:
        return sum(own[eid].best.values()) * (1 + w.proximity * near.get(eid, 0) / npairs)

    # A tool call and its result, a question and its answer: one turn, often remembered as one.
    # The turn's other event lends its words (at `turn` of their weight) to the best events.
    lent: dict[int, dict[int, float]] = {}
    if w.turn:
        top = heapq.nlargest(w.turns, own, key=strength_of)
        partner = _turns(conn, top)
        others = {p: every_span[p] for p in partner.values() if p not in own and p in every_span}
        theirs = model.events(conn, q, others, held, {}) if others else {}
        for eid, p in partner.items():
            ev = own.get(p) or theirs.get(p)
            if ev is not None:
                lent[eid] = ev.best
    quoted = {i for i, t in enumerate(terms) if t.quoted}
    every = len(terms)
    labels = [t.label for t in terms]
    # Each term's own weight (its words as typed): the share of it an event holds is coverage.
    typed = {a.term: gain[k] for k, a in enumerate(alts) if a.discount == 1.0}
    typed_total = sum(typed.values()) or 1.0
    keyed: list[tuple[tuple[float, int, int], Scored]] = []
    for eid, ev in own.items():
        if quoted and not quoted <= ev.exact:
            continue
        if exact and len(ev.exact) < every:
            continue
        best, more = ev.best, lent.get(eid, {})
        base = sum(max(best.get(t, 0.0), w.turn * more.get(t, 0.0)) for t in best.keys() | more)
        coverage = sum(typed.get(t, 0.0) for t in best) / typed_total
        score = base * (1 + w.proximity * near.get(eid, 0) / npairs) * (1 + w.coverage * coverage)
        matched = tuple(labels[i] for i in range(every) if i in best)
        missing = tuple(labels[i] for i in range(every) if i not in best)
        keyed.append(((-round(score, 9), -ev.ts, eid),
                      Scored(eid, ev.fid, ev.sid, matched, missing, score)))
    keyed.sort(key=lambda kv: kv[0])
    return [s for _, s in keyed[: w.max_events]]


@dataclass(slots=True)
class _Event:
    sid: int
    ts: int
    fid: int = 0  # the evidence: the fragment holding the most
    mass: float = -1.0
    best: dict[int, float] = field(default_factory=dict)  # term -> its best fragment's weight
    exact: set[int] = field(default_factory=set)  # terms held as typed or inflected


class _Model:
    """What each fragment's holdings are worth, summed up per event."""

    def __init__(self, alts: list[Alt], gain: list[float], w: Weights, avg: float) -> None:
        self.alts, self.gain, self.w, self.avg = alts, gain, w, avg

    def events(self, conn: sqlite3.Connection, q: Query, spans: dict[int, tuple[int, int]],
               held: dict[int, list[tuple[int, float | None]]], rows: dict[int, Row]
               ) -> dict[int, _Event]:
        """The events of `spans`, from their fragments' holdings (rows of fragments not among
        `rows` are read, passing the fragment filters)."""
        mine = sorted((lo, hi, eid) for eid, (lo, hi) in spans.items())
        starts = [lo for lo, _, _ in mine]
        wanted: dict[int, int] = {}
        for fid in held:
            at = bisect.bisect_right(starts, fid) - 1
            if at >= 0 and fid <= mine[at][1]:
                wanted[fid] = mine[at][2]
        unread = [fid for fid in wanted if fid not in rows]
        rows = {**rows, **_fragments(conn, q, unread)} if unread else rows
        w, alts, gain = self.w, self.alts, self.gain
        k1, b, kinds = w.k1, w.b, w.kinds
        out: dict[int, _Event] = {}
        for fid in wanted:
            r = rows.get(fid)
            if r is None:  # filtered out (kind, tool)
                continue
            ev = out.get(r.eid)
            if ev is None:
                ev = out[r.eid] = _Event(r.sid, r.ts if r.ts is not None else _NO_TIME)
            kind = kinds.get(r.kind, 1.0)
            once = (k1 + 1) / (1 + k1 * (1 - b + b * r.size / self.avg))
            per: dict[int, float] = {}
            for k, tf in held[fid]:
                a = alts[k]
                c = gain[k] * (once if tf is None else tf) * kind
                if per.get(a.term, 0.0) < c:
                    per[a.term] = c
                if a.exact:
                    ev.exact.add(a.term)
            mass = sum(per.values())
            for t, c in per.items():
                if ev.best.get(t, 0.0) < c:
                    ev.best[t] = c
            if mass > ev.mass or (mass == ev.mass and fid < ev.fid):
                ev.mass, ev.fid = mass, fid
        return out


class _Held(NamedTuple):
    fid: int
    bm25: float | None


def _named(conn: sqlite3.Connection) -> sqlite3.Cursor:
    """A cursor yielding (fid, bm25) as _Held: the membership reads run to thousands of rows."""
    cur = conn.cursor()
    cur.row_factory = lambda _cur, row: _Held(*row)
    return cur


def spans(conn: sqlite3.Connection, eids: list[int]) -> dict[int, tuple[int, int]]:
    """Each event's first and last fragment (an event's fragments have consecutive fids)."""
    out: dict[int, tuple[int, int]] = {}
    for at in range(0, len(eids), 500):
        chunk = eids[at:at + 500]
        for r in conn.execute(
                f"SELECT eid, min(fid) AS lo, max(fid) AS hi FROM fragments WHERE eid IN "
                f"({','.join('?' * len(chunk))}) GROUP BY eid", chunk):
            out[r["eid"]] = (r["lo"], r["hi"])
    return out


def _fragments(conn: sqlite3.Connection, q: Query, fids: list[int]
               ) -> dict[int, Row]:
    """The rows of more fragments of candidate events, when they pass the fragment filters."""
    kind_where, kind_params = fragment_filters(q.filters)
    extra = (" AND " + " AND ".join(kind_where)) if kind_where else ""
    out: dict[int, Row] = {}
    for at in range(0, len(fids), 500):
        chunk = fids[at:at + 500]
        for r in map(Row._make, tuples(conn).execute(
                f"""SELECT f.fid, f.eid, f.kind,
                   length(f.text) * (CASE typeof(f.text) WHEN 'blob' THEN 2.5 ELSE 1.0 END),
                   e.ts_ms, e.sid, length(f.text), NULL FROM fragments f JOIN events e ON e.eid = f.eid
                   WHERE f.fid IN ({','.join('?' * len(chunk))}){extra}""",
                [*chunk, *kind_params])):
            out[r.fid] = r
    return out


def _pairs(conn: sqlite3.Connection, q: Query, chosen: str, low: int, high: int, among: str
           ) -> dict[int, int]:
    """For each fragment, how many of the query's adjacent word pairs it holds side by side and
    in order (the last word of a term, then the first of the next, as typed)."""
    terms = q.parsed.terms
    out: dict[int, int] = {}
    for a, b in zip(terms, terms[1:], strict=False):
        if not a.tokens or not b.tokens:
            continue
        pair = words(_quote(f"{a.tokens[-1]} {b.tokens[0]}"))
        for r in conn.execute(
                f"SELECT rowid AS fid FROM fts WHERE fts MATCH ? AND rowid BETWEEN ? AND ? AND {_AMONG}",
                (narrowed_any(q, f"{pair} AND ({chosen})"), low, high, among)):
            out[r["fid"]] = out.get(r["fid"], 0) + 1
    return out


def _turns(conn: sqlite3.Connection, eids: list[int]) -> dict[int, int]:
    """Each event's other half of its turn: a tool result's call and a call's result (the
    assistant message that made it), a user message's answer (its first assistant child) and an
    assistant message's question (its user parent)."""
    out: dict[int, int] = {}
    for at in range(0, len(eids), 500):
        chunk = eids[at:at + 500]
        marks = ",".join("?" * len(chunk))
        for sql in (f"""
            SELECT r.eid AS a, c.eid AS b FROM relations r JOIN events e ON e.eid = r.eid
            JOIN calls c ON c.sid = e.sid AND c.call_id = r.target
            WHERE r.type = 'tool-result-for' AND r.eid IN ({marks})""", f"""
            SELECT c.eid AS a, r.eid AS b FROM calls c JOIN relations r
            ON r.type = 'tool-result-for' AND r.target = c.call_id
            JOIN events e ON e.eid = r.eid AND e.sid = c.sid WHERE c.eid IN ({marks})""", f"""
            SELECT u.eid AS a, min(x.eid) AS b FROM events u JOIN events x ON x.sid = u.sid
            AND x.parent_id = u.entry_id AND x.role = 'assistant'
            WHERE u.role = 'user' AND u.eid IN ({marks}) GROUP BY u.eid""", f"""
            SELECT x.eid AS a, u.eid AS b FROM events x JOIN events u ON u.sid = x.sid
            AND u.entry_id = x.parent_id AND u.role = 'user'
            WHERE x.role = 'assistant' AND x.eid IN ({marks})"""):
            for r in conn.execute(sql, chunk):
                out.setdefault(r["a"], r["b"])
    return out
