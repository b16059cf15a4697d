"""Search-as-you-type prefixes, expanded through the index's own vocabulary.

FTS5 answers `"recon" *` (without a `prefix=` index, which would cost index size) by merging the
whole doclist of every term starting with `recon` before it can return the newest match: 5.4 ms
of CPU for the 135 terms of `recon` at 1.1 GB, 117 ms for `re`. The same terms joined with OR
are read lazily, newest first, and stop with the window: listing them from an fts5vocab table and
running the OR took 2.6 ms and 35 ms (`bench/report/history.py --area query-latency`). The expansion
matches exactly what the prefix matches: the vocabulary holds every term of the index, and a term
whose rows were all deleted matches nothing.
"""

from __future__ import annotations

import dataclasses
import sqlite3

from pi_event_search.index import memo
from pi_event_search.query.parse import Parsed

# More terms than this and the expression itself costs more than FTS5's merge saves.
MAX_TERMS = 2000
_VOCAB = "temp.pies_terms"


def expand(conn: sqlite3.Connection, parsed: Parsed) -> Parsed:
    """`parsed` with its trailing one-token prefix replaced by the OR of the index terms that
    start with it; unchanged when there is none, it is not ASCII (FTS5 folds diacritics, a range
    over the raw prefix would not), or it has no term or too many."""
    tail, prefix = parsed.tail, parsed.prefix
    if tail is None or prefix is None or parsed.match is None or not prefix.isascii():
        return parsed
    found = terms(conn, prefix)
    if not found or len(found) > MAX_TERMS:
        return parsed
    alternatives = "(" + " OR ".join('"' + t.replace('"', '""') + '"' for t in found) + ")"

    def swap(expr: str | None) -> str | None:
        if expr is None or not expr.endswith(tail):
            return expr
        head = expr[: len(expr) - len(tail)]
        if head.endswith(" ") and not head.endswith(" AND "):
            head += "AND "  # FTS5 joins a phrase and a parenthesised group only explicitly
        return head + alternatives

    return dataclasses.replace(parsed, match=swap(parsed.match), inflected=swap(parsed.inflected))


def terms(conn: sqlite3.Connection, prefix: str) -> list[str]:
    """The index's terms starting with `prefix` (MAX_TERMS + 1 of them: too many), remembered
    while the index is unchanged. Listing them walks every term's postings (1 to 2 ms for the
    bench's prefixes); a later page asks again, and each keystroke of a search-as-you-type
    extends the last prefix, whose complete list holds every term of the longer one."""
    known = memo.of(conn, "prefix_terms")
    listed: list[str] | None = known.get(prefix)
    if listed is not None:
        return listed
    shorter = (known.get(prefix[:n]) for n in range(len(prefix) - 1, 0, -1))
    complete = next((t for t in shorter if t is not None and len(t) <= MAX_TERMS), None)
    if complete is not None:
        listed = [t for t in complete if t.startswith(prefix)]
    else:
        conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {_VOCAB} USING fts5vocab(main, fts, row)")
        upper = prefix[:-1] + chr(ord(prefix[-1]) + 1)
        listed = [r["term"] for r in conn.execute(
            f"SELECT term FROM {_VOCAB} WHERE term >= ? AND term < ? LIMIT ?",
            (prefix, upper, MAX_TERMS + 1))]
    known[prefix] = listed
    return listed
