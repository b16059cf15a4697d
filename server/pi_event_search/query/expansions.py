"""What a query word also matches besides itself: its developer synonyms (synonyms.json) and, for a
camelCase term, its identifier parts. evidence.py weighs each below the word as typed."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from importlib import resources

from pi_event_search.index.fulltext import split_identifier
from pi_event_search.query.inflect import forms


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


def camel_parts(label: str) -> tuple[str, ...] | None:
    """`retryCount` -> (retry, count); None when the term is not one camelCase identifier."""
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", label):
        return None
    parts = split_identifier(label)
    return tuple(parts) if len(parts) > 1 else None
