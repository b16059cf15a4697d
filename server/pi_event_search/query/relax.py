"""Partial matches: the events that hold some of a query's terms but not all, ranked as one list.

The events holding every term come first (ranking.py's phases 0 and 1); this is the phase after
them. Each term weighs its IDF (bm25's, from the FTS5 vocabulary): an event's coverage is the share
of the query's weight it holds, a term held as typed counting in full, through an inflection 0.9,
as an identifier's parts 0.8, through a synonym 0.6, and through the other event of its turn (a
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

import json
import math
import re
import sqlite3
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

from pi_event_search.index import memo
from pi_event_search.query.inflect import forms
from pi_event_search.query.matches import KIND_WEIGHTS, Query, narrowed, tuples, window
from pi_event_search.query.parse import Parsed, Term

CANDIDATES = 2000  # fragments a relaxed ranking reads at most (docs/protocol.md)
TYPED, INFLECTED, PARTS, SYNONYM = 1.0, 0.9, 0.8, 0.6
TURN = 0.7  # a term its turn's other event holds, relative to holding it itself
_VOCAB = "temp.pies_rows"
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


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
    parts = _CAMEL.findall(label)
    return tuple(p.lower() for p in parts) if len(parts) > 1 else None


def alternatives(term: Term) -> list[tuple[str, float]]:
    """The FTS5 expressions that hold a term, each with its weight."""
    out = [(term.typed, TYPED)]
    if term.quoted:
        return out
    if term.inflected:
        out.append((term.inflected, INFLECTED))
    parts = camel_parts(term.raw)
    if parts:
        out.append((_quote(" ".join(parts)), PARTS))
    if term.word:
        syn = synonyms(term.word)
        if syn:
            words = sorted({f for w in syn for f in forms(w)})
            out.append(("(" + " OR ".join(_quote(w) for w in words) + ")", SYNONYM))
    return out


def doc_counts(conn: sqlite3.Connection, tokens: set[str]) -> dict[str, int]:
    """Fragments holding each token, anywhere in the index (the FTS5 vocabulary's row counts)."""
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


def _total(conn: sqlite3.Connection) -> int:
    known = memo.of(conn, "fragments")
    if "n" not in known:
        known["n"] = conn.execute("SELECT max(fid) AS n FROM fragments").fetchone()["n"] or 1
    return int(known["n"])


def _expr_tokens(expr: str) -> list[list[str]]:
    """The phrases of an OR of quoted phrases, each as its tokens."""
    return [p.replace('""', '"').lower().split() for p in re.findall(r'"((?:[^"]|"")*)"', expr)]


def _df(counts: dict[str, int], expr: str) -> int:
    """Documents an OR of phrases matches, about: each phrase by its rarest token, summed."""
    return sum(min((counts.get(t, 0) for t in p), default=0) for p in _expr_tokens(expr))


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
    counts = doc_counts(conn, {tok for a in alts for e, _ in a for p in _expr_tokens(e)
                               for tok in p})
    n = _total(conn)
    dfs = [_df(counts, " OR ".join(e for e, _ in a)) for a in alts]
    # n counts fragments, df the FTS rows holding a token: on a small index df can exceed n, and
    # a negative weight would rank holding a word below lacking it.
    idf = [max(0.01, math.log(1 + (n - min(df, n) + 0.5) / (min(df, n) + 0.5))) for df in dfs]
    required = " AND ".join(f"({terms[i].typed})" for i, t in enumerate(terms) if t.quoted)
    order = sorted((i for i in loose if dfs[i] > 0), key=lambda i: dfs[i])
    if not order and not required:
        return []
    sources: list[int] = []
    total = 0
    for i in order:
        if sources and total + dfs[i] > CANDIDATES:
            break
        sources.append(i)
        total += dfs[i]
    # Every hit holds the quoted phrases: they alone choose the candidates when there are any.
    source = required or " OR ".join(f"({e})" for i in sources for e, _ in alts[i])
    rows = _candidates(conn, q, narrowed(q, source))
    if not rows:
        return []
    low = min(r[0] for r in rows)
    frags: dict[int, tuple[int, str, float]] = {fid: (eid, kind, size)
                                               for fid, eid, kind, size, _, _ in rows}
    held: dict[int, dict[int, float]] = {}
    for i, a in enumerate(alts):
        for expr, weight in a:
            fids = tuples(conn).execute(
                "SELECT rowid FROM fts WHERE fts MATCH ? AND rowid >= ?",
                (f"({expr}) AND ({source})", low)).fetchall()
            for (fid,) in fids:
                if fid in frags:
                    got = held.setdefault(fid, {})
                    if got.get(i, 0.0) < weight:
                        got[i] = weight
    return _rank(conn, terms, idf, rows, held)


def _candidates(conn: sqlite3.Connection, q: Query, match: str) -> list[tuple[Any, ...]]:
    """The newest CANDIDATES visible, filtered fragments `match` finds, and the rest of the
    last one's event."""
    rows = window(conn, match, q, "1", CANDIDATES)
    if len(rows) >= CANDIDATES:
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
    events: dict[int, _Event] = {}
    for fid, eid, kind, size, ts, sid in rows:
        got = held.get(fid)
        if not got:
            continue
        ev = events.get(eid)
        if ev is None:
            ev = events[eid] = _Event(eid, sid, ts if ts is not None else -(1 << 62))
        if len(got) == len(terms) and all(w >= INFLECTED for w in got.values()):
            ev.full = True
        for i, w in got.items():
            if ev.weights.get(i, 0.0) < w:
                ev.weights[i] = w
        mass = sum(idf[i] * w for i, w in got.items())
        score = (mass / whole, mass * 2.2 / (1.3 + 0.9 * size / avg) * KIND_WEIGHTS.get(kind, 1.0),
                 -fid)
        if score > ev.best:
            ev.best, ev.fid = score, fid
    live = {eid: ev for eid, ev in events.items() if not ev.full}
    pairs = _turns(conn, list(live))
    out: list[tuple[tuple[float, float, int, int], Relaxed]] = []
    for eid, ev in live.items():
        own = dict(ev.weights)
        partner = live.get(pairs.get(eid, -1)) or events.get(pairs.get(eid, -1))
        lent: list[int] = []
        if partner is not None:
            for i, w in partner.weights.items():
                if own.get(i, 0.0) < w * TURN:
                    lent.append(i)
                    own[i] = w * TURN
        coverage = sum(idf[i] * w for i, w in own.items()) / whole
        matched = tuple(t.label for i, t in enumerate(terms) if i in own)
        missing = tuple(t.label for i, t in enumerate(terms) if i not in own)
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
