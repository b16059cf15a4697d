"""Partial matches: the events that hold some of a query's terms but not all, ranked as one list.

The events holding every term come first (ranking.py's phases 0 and 1); this is the phase after
them. Each term weighs its IDF (bm25's, from the FTS5 vocabulary): an event's coverage is the share
of the query's weight it holds, a term held as typed (or inflected) counting in full, as an
identifier's parts 0.8, through a synonym 0.6, and through the other event of its turn (a
tool call's result, a question's answer) 0.7 of that. Events rank by coverage, then by a bm25-like
score of their best fragment (the IDF of the terms it holds, saturated by its length, times the
kind weight), then newest first.

Ranking every event that holds one common word would read most of the index, so the candidates are
the fragments holding one of the rarest terms (those whose documents add up to CANDIDATES, at least
the rarest one), from a fid bound down that keeps them under CANDIDATES; an event holding only
common words ranks below them anyway. Every query is one FTS5 MATCH with the caller's scope and
filters in its SQL; which other terms a candidate holds is one more MATCH per term, ANDed with the
candidates' own terms so FTS5 reads no more than it must.
"""

from __future__ import annotations

import heapq
import json
import math
import re
import sqlite3
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

from pi_event_search.index import memo
from pi_event_search.index.fulltext import split_identifier
from pi_event_search.query.inflect import forms
from pi_event_search.query.matches import KIND_WEIGHTS, Query, narrowed_any, tuples, window, words
from pi_event_search.query.parse import Parsed, Term

CANDIDATES = 1000  # fragments a relaxed ranking reads at most (docs/protocol.md)
SAMPLE = 1000  # matches read to estimate a token's document count
ALL_BUT_ONE = 200  # newest fragments holding all the terms but one, for each term
# Added to every document count before its IDF: a word nearly absent from the index is most often
# the one the user remembered wrong, and bm25's IDF (log N / df) would let it outweigh the rest of
# the query (`broke`, in 1 fragment, against `fastify bump lockfile`, in thousands each).
SMOOTH = 100
TYPED, PARTS, SYNONYM = 1.0, 0.8, 0.6
TURN = 0.7  # a term its turn's other event holds, relative to holding it itself
MAX_PARTIAL = 500  # partial hits of one query at most (docs/protocol.md)
TURNS = 100  # of them, those whose turn is looked up: the ones holding the most terms
_VOCAB = "temp.pies_rows"


@dataclass(frozen=True, slots=True)
class Relaxed:
    """One partial hit: its event, evidence fragment, session row; the query terms (labels) it
    holds, those its turn's other event supplied, and that event's id."""

    eid: int
    fid: int
    sid: int
    matched: tuple[str, ...]
    missing: tuple[str, ...]
    turn: tuple[str, ...] = ()
    turn_eid: int | None = None


@dataclass(slots=True)
class _Event:
    eid: int
    sid: int
    ts: int
    weights: dict[int, float] = field(default_factory=dict)  # term index -> best weight
    best: tuple[float, float, int] = (0.0, 0.0, 0)  # (coverage, bm25-like, -fid) of a fragment
    fid: int = 0
    full: bool = False  # one fragment holds every term: ranking.py lists it already


@lru_cache(maxsize=1)
def synonym_groups() -> tuple[tuple[str, ...], ...]:
    data = json.loads(resources.files("pi_event_search.query").joinpath("synonyms.json")
                      .read_text(encoding="utf-8"))
    return tuple(tuple(g) for g in data["groups"])


@lru_cache(maxsize=1024)
def synonyms(word: str) -> tuple[str, ...]:
    """The other words of the word's synonym groups (the word's inflections find them too)."""
    keys = set(forms(word))
    out: dict[str, None] = {}
    for group in synonym_groups():
        if keys & set(group) or any(keys & set(forms(w)) for w in group):
            out.update((w, None) for w in group if w not in keys)
    return tuple(out)


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def camel_parts(label: str) -> tuple[str, ...] | None:
    """`retryCount` -> (retry, count); None when the term is not one camelCase identifier."""
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", label):
        return None
    parts = split_identifier(label)
    return tuple(parts) if len(parts) > 1 else None


def alternatives(term: Term) -> list[tuple[str, float]]:
    """The FTS5 expressions that hold a term, each with its weight: the words as written (text
    and meta columns), an identifier's parts (the parts column, or a camelCase term's parts as
    a phrase anywhere), a synonym."""
    if term.quoted:
        return [(words(term.typed), TYPED)]
    # as typed or inflected: one query (ranking.py's phases 0 and 1 tell them apart already)
    out = [(words(term.inflected or term.typed), TYPED)]
    parts = camel_parts(term.raw)
    whole = f"parts : ({term.inflected or term.typed})"
    out.append((f"{whole} OR {_quote(' '.join(parts))}" if parts else whole, PARTS))
    if term.word:
        syn = synonyms(term.word)
        if syn:
            found = sorted({f for w in syn for f in forms(w)})
            out.append((words(" OR ".join(_quote(w) for w in found)), SYNONYM))
    return out


def doc_counts(conn: sqlite3.Connection, tokens: set[str]) -> dict[str, int]:
    """Fragments holding each token, anywhere in the index (the FTS5 vocabulary's row counts:
    exact, but a walk over each token's whole posting list; spelling's existence checks)."""
    known = memo.of(conn, "doc_counts")
    wanted = [t for t in tokens if t not in known]
    if wanted:
        conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {_VOCAB} USING fts5vocab(main, fts, row)")
        found = {r[0]: r[1] for r in tuples(conn).execute(
            f"SELECT term, doc FROM {_VOCAB} WHERE term IN ({','.join('?' * len(wanted))})",
            wanted)}
        for t in wanted:
            known[t] = found.get(t, 0)
    return {t: known[t] for t in tokens}


def estimated_counts(conn: sqlite3.Connection, tokens: set[str]) -> dict[str, int]:
    """Fragments holding each token, about: counted up to SAMPLE of its newest, and a common
    token's count extrapolated from how far back those reach (the vocabulary's exact count walks
    the whole posting list: 25 ms for `the` at 250 MB, where an IDF needs only its order)."""
    known = memo.of(conn, "estimated_counts")
    n = _total(conn)
    for t in tokens:
        if t in known:
            continue
        rows = tuples(conn).execute(
            "SELECT count(*), min(rowid) FROM (SELECT rowid FROM fts WHERE fts MATCH ? "
            "ORDER BY rowid DESC LIMIT ?)", (_quote(t), SAMPLE)).fetchone()
        count, low = rows
        known[t] = count if count < SAMPLE else int(count * n / max(1, n - low + 1))
    return {t: known[t] for t in tokens}


def _total(conn: sqlite3.Connection) -> int:
    known = memo.of(conn, "fragments")
    if "n" not in known:
        known["n"] = conn.execute("SELECT max(fid) AS n FROM fragments").fetchone()["n"] or 1
    return int(known["n"])


def _expr_tokens(expr: str) -> list[list[str]]:
    """The phrases of an OR of quoted phrases, each as its tokens."""
    return [p.replace('""', '"').lower().split() for p in re.findall(r'"((?:[^"]|"")*)"', expr)]


def relaxed(conn: sqlite3.Connection, q: Query) -> list[Relaxed]:
    """Every partial hit of the query, best first (empty when the query cannot be relaxed: one
    term, or only quoted phrases); remembered while the index is unchanged, so that every page
    of one question reads the same list."""
    known = memo.of(conn, "relaxed")
    key = (q.parsed, repr(q.filters), tuple(q.where), tuple(map(repr, q.params)), q.scope_fts)
    found: list[Relaxed] | None = known.get(key)
    if found is None:
        found = known[key] = _relaxed(conn, q, q.parsed)
    return found


def _relaxed(conn: sqlite3.Connection, q: Query, parsed: Parsed) -> list[Relaxed]:
    terms = parsed.terms
    loose = [i for i, t in enumerate(terms) if not t.quoted]
    if len(terms) < 2 or not loose:
        return []
    alts = [alternatives(t) for t in terms]
    # A term's weight is its own: its words as typed or inflected, not its synonyms or parts.
    own = [_expr_tokens(a[0][0]) for a in alts]
    counts = estimated_counts(conn, {tok for phrases in own for p in phrases for tok in p})
    n = _total(conn)
    dfs = [sum(min(counts[t] for t in p) for p in phrases if p) for phrases in own]
    idf = [math.log(1 + n / (df + SMOOTH)) for df in dfs]
    required = " AND ".join(words(t.typed) for t in terms if t.quoted)
    order = sorted((i for i in loose if dfs[i] > 0), key=lambda i: dfs[i])
    if not order and not required:
        return []
    # Windows of candidates, each an FTS5 expression, how many of its newest matches to take, and
    # the terms every match of it holds as typed. The rarest terms' newest matches (as many terms
    # as stay under CANDIDATES matches together); and, for three terms or more, the fragments
    # holding all the terms but one, for each term: the events most of the query describes, however
    # old, which the newest matches of common words would miss in a large history.
    sources: list[int] = []
    total = 0
    for i in order:
        if sources and total + dfs[i] > CANDIDATES:
            break
        sources.append(i)
        total += dfs[i]
    windows: list[tuple[str, int, tuple[int, ...]]] = []
    if required:  # every hit holds the quoted phrases: they alone choose the candidates
        windows.append((required, CANDIDATES, tuple(i for i, t in enumerate(terms) if t.quoted)))
    else:
        windows.append((" OR ".join(f"({e})" for i in sources for e, _ in alts[i]), CANDIDATES,
                        ()))
        if len(terms) >= 3:
            for k in loose:
                others = tuple(i for i in range(len(terms)) if i != k)
                windows.append((" AND ".join(alts[i][0][0] for i in others), ALL_BUT_ONE, others))
    found: dict[int, tuple[Any, ...]] = {}
    held: dict[int, dict[int, float]] = {}
    for w, cap, known in windows:
        got_rows = _candidates(conn, q, narrowed_any(q, w), cap)
        if not got_rows:
            continue
        low = min(r[0] for r in got_rows)
        for r in got_rows:
            found[r[0]] = r
            got = held.setdefault(r[0], {})
            for i in known:
                got[i] = TYPED
        # Which other terms each holds, from the window's lowest fid on (FTS5 reads no further
        # back than the window).
        for i, a in enumerate(alts):
            if i in known:
                continue
            for expr, weight in a:
                for (fid,) in tuples(conn).execute(
                        "SELECT rowid FROM fts WHERE fts MATCH ? AND rowid >= ?",
                        (f"({expr}) AND ({w})", low)):
                    if fid in found:
                        got = held.setdefault(fid, {})
                        if got.get(i, 0.0) < weight:
                            got[i] = weight
    rows = list(found.values())
    if not rows:
        return []
    return _rank(conn, terms, idf, rows, held)


def _candidates(conn: sqlite3.Connection, q: Query, match: str, cap: int
                ) -> list[tuple[Any, ...]]:
    """The newest `cap` visible, filtered fragments `match` finds, and the rest of the last
    one's event."""
    rows = window(conn, match, q, "1", cap)
    if len(rows) >= cap:
        last_fid, last_eid = rows[-1][0], rows[-1][1]
        first = conn.execute("SELECT min(fid) AS fid FROM fragments WHERE eid = ?",
                             (last_eid,)).fetchone()["fid"]
        if first < last_fid:
            rows += window(conn, match, q, f"fts.rowid >= {int(first)} AND "
                                            f"fts.rowid < {int(last_fid)}", None)
    return rows


def _rank(conn: sqlite3.Connection, terms: tuple[Term, ...], idf: list[float],
          rows: list[tuple[Any, ...]], held: dict[int, dict[int, float]]) -> list[Relaxed]:
    whole = sum(idf) or 1.0
    avg = sum(r[3] for r in rows) / len(rows) or 1.0
    kind_weight = KIND_WEIGHTS.get
    every = len(terms)
    events: dict[int, _Event] = {}
    for fid, eid, kind, size, ts, sid in rows:
        got = held.get(fid)
        if not got:
            continue
        ev = events.get(eid)
        if ev is None:
            ev = events[eid] = _Event(eid, sid, ts if ts is not None else -(1 << 62))
        weights = ev.weights
        mass = 0.0
        for i, w in got.items():
            mass += idf[i] * w
            if weights.get(i, 0.0) < w:
                weights[i] = w
        if len(got) == every and mass >= whole - 1e-9:  # every term as typed: ranking.py's
            ev.full = True
        score = (mass, mass * 2.2 / (1.3 + 0.9 * size / avg) * kind_weight(kind, 1.0), -fid)
        if score > ev.best:
            ev.best, ev.fid = score, fid
    # The best MAX_PARTIAL events by what they hold themselves; a turn lends at most TURN of a
    # term, so only the best of these can rise by it enough to matter.
    live = {ev.eid: ev for ev in heapq.nsmallest(
        MAX_PARTIAL, (ev for ev in events.values() if not ev.full),
        key=lambda ev: (-sum(idf[i] * w for i, w in ev.weights.items()), -ev.best[1], -ev.ts,
                        ev.eid))}
    near = heapq.nsmallest(TURNS, live.values(), key=lambda ev: (-len(ev.weights), -ev.best[0]))
    pairs = _turns(conn, [ev.eid for ev in near])
    labels: dict[tuple[int, ...], tuple[tuple[str, ...], tuple[str, ...]]] = {}
    out: list[tuple[tuple[float, float, int, int], Relaxed]] = []
    for eid, ev in live.items():
        own = ev.weights
        partner = events.get(pairs[eid]) if eid in pairs else None
        lent: list[int] = []
        if partner is not None:
            own = dict(own)
            for i, w in partner.weights.items():
                if own.get(i, 0.0) < w * TURN:
                    lent.append(i)
                    own[i] = w * TURN
        coverage = sum(idf[i] * w for i, w in own.items()) / whole
        have = tuple(sorted(own))
        if have not in labels:
            labels[have] = (tuple(t.label for i, t in enumerate(terms) if i in own),
                            tuple(t.label for i, t in enumerate(terms) if i not in own))
        matched, missing = labels[have]
        turn = tuple(terms[i].label for i in sorted(lent))
        key = (-round(coverage, 9), -ev.best[1], -ev.ts, eid)
        out.append((key, Relaxed(eid, ev.fid, ev.sid, matched, missing, turn,
                                 partner.eid if lent and partner is not None else None)))
    out.sort(key=lambda kv: kv[0])
    return [r for _, r in out]


def _turns(conn: sqlite3.Connection, eids: list[int]) -> dict[int, int]:
    """Each event's other half of its turn: a tool result's call and a call's result (the
    assistant message that made it), a user message's answer (its first assistant child) and an
    assistant message's question (its user parent)."""
    if not eids:
        return {}
    marks = ",".join("?" * len(eids))
    out: dict[int, int] = {}
    for a, b in tuples(conn).execute(f"""
        SELECT r.eid, c.eid FROM relations r JOIN events e ON e.eid = r.eid
        JOIN calls c ON c.sid = e.sid AND c.call_id = r.target
        WHERE r.type = 'tool-result-for' AND r.eid IN ({marks})""", eids):
        out.setdefault(a, b)
    for a, b in tuples(conn).execute(f"""
        SELECT c.eid, r.eid FROM calls c JOIN relations r ON r.type = 'tool-result-for'
        AND r.target = c.call_id JOIN events e ON e.eid = r.eid AND e.sid = c.sid
        WHERE c.eid IN ({marks})""", eids):
        out.setdefault(a, b)
    for a, b in tuples(conn).execute(f"""
        SELECT u.eid, min(x.eid) FROM events u JOIN events x ON x.sid = u.sid
        AND x.parent_id = u.entry_id AND x.role = 'assistant'
        WHERE u.role = 'user' AND u.eid IN ({marks}) GROUP BY u.eid""", eids):
        out.setdefault(a, b)
    for a, b in tuples(conn).execute(f"""
        SELECT x.eid, u.eid FROM events x JOIN events u ON u.sid = x.sid
        AND u.entry_id = x.parent_id AND u.role = 'user'
        WHERE x.role = 'assistant' AND x.eid IN ({marks})""", eids):
        out.setdefault(a, b)
    return out
