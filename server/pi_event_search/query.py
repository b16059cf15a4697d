"""The user's query is data: plain terms and quoted phrases, implicit AND, nothing else.

Every term reaches FTS5 as a quoted string, so `*`, `:`, `^`, `-`, parentheses, `NEAR`, `OR`, `AND`,
`NOT` and stray quotes are ordinary text. Terms without a single letter or digit are dropped (the
tokenizer would make nothing of them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_QUERY_CHARS = 4096
_PIECE = re.compile(r'"([^"]*)"?|(\S+)')
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


class QueryTooLong(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class Parsed:
    match: str | None  # FTS5 MATCH expression, None when the query has no searchable term
    words: tuple[str, ...]  # lower-cased tokens, for highlighting


def parse(query: str, *, prefix_last: bool = False) -> Parsed:
    if len(query) > MAX_QUERY_CHARS:
        raise QueryTooLong(f"{len(query)} characters (at most {MAX_QUERY_CHARS})")
    terms: list[tuple[str, bool]] = []  # (text, quoted)
    for phrase, word in _PIECE.findall(query):
        text = phrase if phrase else word
        quoted = bool(phrase)
        tokens = _WORD.findall(text)
        if tokens:
            terms.append((" ".join(tokens), quoted))
    if not terms:
        return Parsed(None, ())
    parts = ['"' + text.replace('"', '""') + '"' for text, _ in terms]
    if prefix_last and not terms[-1][1] and not query.rstrip().endswith('"') \
            and query[-1:] not in (" ", "\t"):
        parts[-1] += " *"
    words = tuple(dict.fromkeys(t.lower() for text, _ in terms for t in text.split()))
    return Parsed(" ".join(parts), words)
