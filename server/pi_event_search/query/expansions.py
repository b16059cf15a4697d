"""What a query word also matches besides itself: its developer synonyms (synonyms.json), for a
camelCase term its identifier parts, and for a word the history never holds the two words it
holds side by side. evidence.py weighs each below the word as typed."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
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


APART_MIN = 3  # letters in each part: shorter ones (`a`, `de`) make a split of almost any word
APART_MAX = 24  # letters in the word: past it no split is tried (the splits grow with it)


def written_apart(word: str, count: Callable[[str], int]) -> tuple[str, str] | None:
    """`typecheck` -> (type, check): how the history may write apart a word typed as one that it
    never holds (the caller knows), when `count` (fragments holding a token) says it holds both
    parts; of several splits, the one whose rarer part is commonest (`non zero`, not `nonz ero`).
    From memory a person writes `typecheck` for "type check" as they write `retryCount` for
    "retry count": the parts count as camelCase parts do. Two counts a split, linear in the
    word's length."""
    if not APART_MIN * 2 <= len(word) <= APART_MAX or not word.isalpha():
        return None
    best: tuple[int, str, str] | None = None
    for at in range(APART_MIN, len(word) - APART_MIN + 1):
        head, tail = word[:at], word[at:]
        held = min(count(head), count(tail))
        if held and (best is None or held > best[0]):
            best = (held, head, tail)
    return best[1:] if best else None
