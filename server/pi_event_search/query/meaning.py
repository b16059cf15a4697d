"""The best events of the evidence order, read again for what they mean.

A query typed from memory says what happened in other words than the event did ("git commit was
refused" for "commit blocked by the guard"): word evidence alone puts the event somewhere in the
first few dozen. The model (meaning/minilm.py) turns the query and each of the `meaning_top` best
events' opening text into vectors. Each event then scores `meaning_words` of its evidence score
plus the rest of its closeness to the query, both as standard scores over those events (how many
deviations above their mean), so that neither scale decides alone: an event far ahead by words
stays ahead, and among events the words barely tell apart, meaning decides. The next
`meaning_further` events are glanced at (their first `meaning_glance` tokens), and the few that
clearly mean the query join the best before the fusion (`joining`): the words place an event typed
from memory past the best 30 about as often as inside them. A long event meaning what a better one
of its session means (the same file read again) then waits after the others (`unlike`). The rest
keep their order. No model installed, or PI_EVENT_SEARCH_MEANING=off: the evidence order as it is.
Measured on the relevance set (docs/benchmarks.md): dev from-memory MRR@10 0.42 -> 0.61 alone,
0.38 -> 0.56 at 250 MB, agent 0.77 -> 0.82 and 0.74 -> 0.83, copied no lower; the glance, test
from-memory R@10 0.72 -> 0.81 alone and 0.67 -> 0.72 at 250 MB (dev the same).
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pi_event_search.index import textcodec
from pi_event_search.meaning import minilm
from pi_event_search.meaning.vectors import vectors
from pi_event_search.query.evidence import Scored, Weights, weights
from pi_event_search.query.parse import Parsed


def reranked(conn: sqlite3.Connection, parsed: Parsed, events: list[Scored], w: Weights
             ) -> list[Scored]:
    """`events` with its first `meaning_top` fused with their order by meaning: for a query of
    two terms or more (one word's meaning is the word), not one still being typed (a
    search-as-you-type prefix: each keystroke answers at the speed of words) unless its typing
    paused (`settled`: an editor asks once more)."""
    top = events[: w.meaning_top]
    typing = parsed.prefix is not None and not parsed.settled
    if len(top) < 2 or len(parsed.terms) < 2 or typing:
        return events
    query = " ".join(t.raw for t in parsed.terms)
    model = minilm.model()
    if isinstance(model, minilm.Unavailable):
        return events
    beside = index_path(conn)
    further = events[w.meaning_top: w.meaning_top + w.meaning_further]
    texts = opening_texts(conn, [s.eid for s in top + further], w.meaning_chars)
    found = vectors.of(model, [texts.get(s.eid, "") for s in top], w.meaning_tokens, beside)
    asked = vectors.of(model, [query], w.meaning_tokens, None)[0]
    close = found @ asked
    joined = joining(model, query, asked, further, texts, close, w, beside)
    pool = top + [further[i] for i in joined]
    close = np.concatenate([close, np.array([c for c, _ in joined.values()], dtype=close.dtype)])
    fused = (w.meaning_words * standard(np.array([s.score for s in pool]))
             + (1 - w.meaning_words) * standard(close))
    order = sorted(range(len(pool)), key=lambda i: (-round(float(fused[i]), 9), i))
    order = unlike(order, pool, np.vstack([found, *(v for _, v in joined.values())]),
                   [len(texts.get(s.eid, "")) >= w.meaning_alike_chars for s in pool],
                   w.meaning_alike)
    left = set(joined)
    return ([pool[i] for i in order] + [s for i, s in enumerate(further) if i not in left]
            + events[w.meaning_top + w.meaning_further:])


def unlike(order: list[int], pool: list[Scored], found: np.ndarray, long: list[bool],
           alike: float) -> list[int]:
    """`order` with each long event (`long`: its opening fills what the model reads) that means
    what a better long event of its session means (the closeness of their vectors, `found`, at
    least `alike`) moved after the others: the same file read three times took three places of a
    first page that a query typed from memory needed for its event (dev, `tried reading a
    folder` 11 -> 9). Short texts alike but for a number ("tank 3 readings", "tank 5 readings")
    are distinct moments, and so is the same error met in two sessions."""
    kept: list[int] = []
    later: list[int] = []
    for i in order:
        mine = [k for k in kept if long[k] and pool[k].sid == pool[i].sid] if long[i] else []
        (later if mine and float(np.max(found[mine] @ found[i])) >= alike else kept).append(i)
    return kept + later


def joining(model: minilm.Model, query: str, asked: np.ndarray, further: list[Scored],
            texts: dict[int, str], close: np.ndarray, w: Weights, beside: Path | None
            ) -> dict[int, tuple[float, np.ndarray]]:
    """Which of the events after the best (`further`, by position) join them, with their
    closeness to the query (`asked`: its full vector; `close`: the best's) and their vector, in
    their order. A query typed from memory shares few words with its event, which the words then
    place past the best 30. Glanced at (the first `meaning_glance` tokens: a fifth of a full
    read), the `meaning_join` closest are read in full, and join when closer to the query than
    the best's
    mean closeness by `meaning_gate` of its deviation (an event the words placed far down must
    mean the query clearly: the keyword queries of an agent lost their first hit without that,
    on dev)."""
    if not further or not w.meaning_join:
        return {}
    glance = vectors.of(model, [texts.get(s.eid, "") for s in further], w.meaning_glance, beside)
    near = glance @ vectors.of(model, [query], w.meaning_glance, None)[0]
    picked = sorted(sorted(range(len(further)), key=lambda i: (-float(near[i]), i))
                    [: w.meaning_join])
    full = vectors.of(model, [texts.get(further[i].eid, "") for i in picked], w.meaning_tokens,
                      beside)
    spread = float(close.std()) or 1.0
    bar = float(close.mean()) + w.meaning_gate * spread
    return {i: (float(c), v) for i, c, v in zip(picked, full @ asked, full, strict=True)
            if float(c) >= bar}


def standard(values: np.ndarray) -> np.ndarray:
    """Each value's distance from their mean in standard deviations (0 when all are equal): an
    evidence score has no fixed scale and closeness lives in a narrow band."""
    spread = float(values.std())
    return (values - values.mean()) / spread if spread > 1e-12 else np.zeros_like(values)


def opening_texts(conn: sqlite3.Connection, eids: list[int], chars: int) -> dict[int, str]:
    """Each event's first `chars` characters: its fragments in order (text, then tool calls)."""
    out: dict[int, list[str]] = {}
    size: dict[int, int] = {}
    marks = ",".join("?" * len(eids))
    for r in conn.execute(f"SELECT eid, text FROM fragments WHERE eid IN ({marks}) ORDER BY fid",
                          eids):
        eid = r["eid"]
        if size.get(eid, 0) >= chars:
            continue
        text = textcodec.unpack(r["text"], conn)[:chars]
        out.setdefault(eid, []).append(text)
        size[eid] = size.get(eid, 0) + len(text) + 1
    return {eid: "\n".join(parts)[:chars] for eid, parts in out.items()}


def index_path(conn: sqlite3.Connection) -> Path | None:
    """The index's file (the vectors' file lies beside it); None for one in memory."""
    for r in conn.execute("PRAGMA database_list"):
        if r["name"] == "main":
            return Path(r["file"]) if r["file"] else None
    return None


@dataclass(slots=True)
class Ahead:
    """How far reading ahead has come: every event of eids [below, top) was read (eids are
    locations in this index, kept by the process that reads ahead; None: not begun)."""

    below: int | None = None
    top: int | None = None
    read: int = 0  # events read going back (at most the limit); new ones always are


BATCH = 16


def read_ahead(conn: sqlite3.Connection, ahead: Ahead, limit: int, seconds: float) -> bool:
    """Read events not yet read, for about `seconds`: new ones as they come, then back from the
    newest, up to `limit`; so that a search finds its best events' vectors known and a first ask
    costs the words' order and the query's own vector. The order does not depend on it: a vector
    read ahead is the one the search would compute. False when nothing is left to read."""
    model = minilm.model()
    if isinstance(model, minilm.Unavailable):
        return False
    w = weights()
    beside = index_path(conn)
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        newest = conn.execute("SELECT max(eid) AS n FROM events").fetchone()["n"] or 0
        if ahead.top is not None and newest < ahead.top - 1:
            # Fewer events than were read: the index was rebuilt (its eids begin again) or its
            # newest sessions left it; begin again too (a text read before costs a lookup).
            ahead.top = ahead.below = None
            ahead.read = 0
        if ahead.top is None or ahead.below is None:
            ahead.top = ahead.below = newest + 1
        new = newest >= ahead.top
        if new:  # new events, oldest first: the range stays whole
            eids = [r["eid"] for r in conn.execute(
                "SELECT eid FROM events WHERE eid >= ? ORDER BY eid LIMIT ?", (ahead.top, BATCH))]
        elif ahead.read < limit and ahead.below > 1:
            eids = [r["eid"] for r in conn.execute(
                "SELECT eid FROM events WHERE eid < ? ORDER BY eid DESC LIMIT ?",
                (ahead.below, BATCH))]
        else:
            return False
        texts = opening_texts(conn, eids, w.meaning_chars) if eids else {}
        if texts:
            vectors.of(model, list(texts.values()), w.meaning_tokens, beside)
            vectors.of(model, list(texts.values()), w.meaning_glance, beside)
        if new:
            ahead.top = max(eids) + 1
        else:
            ahead.below = min(eids) if eids else 1
            ahead.read += len(eids)
    return True
