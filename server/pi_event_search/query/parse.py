"""The user's query is data: plain terms and quoted phrases, implicit AND, nothing else.

Every term reaches FTS5 as a quoted string, so `*`, `:`, `^`, `-`, parentheses, `NEAR`, `OR`, `AND`,
`NOT` and stray quotes are ordinary text. Terms without a single letter or digit are dropped (the
tokenizer would make nothing of them).

Each query has two FTS5 expressions: `match`, the words as typed, and `inflected`, where every plain
English word also matches its other inflections (`failing` -> fail OR fails OR failed OR failing).
Quoted phrases, identifiers (camelCase, ALLCAPS, snake_case, anything with a digit), paths, file
names and the search-as-you-type prefix stay exact in both. The search ranks the events matching
`match` first and only then those matching `inflected` alone.

A query is at most MAX_QUERY_CHARS characters and MAX_TERMS terms (words and quoted phrases, as
typed); past either it is refused (QueryTooLong), which every surface reports as "Query too long".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pi_event_search.query.inflect import forms

MAX_QUERY_CHARS = 4096
# Words and quoted phrases: more is a pasted text, not a search, and each term is a part of the
# ranking to weigh, a word to spell-check and an FTS5 term to intersect.
MAX_TERMS = 64
_PIECE = re.compile(r'"([^"]*)"?|(\S+)')
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
# Punctuation a person types around a word in a sentence ("fails," "(retry)") without making it
# part of a path or identifier.
_AROUND = "\"'`.,;:!?()[]{}<>"


class QueryTooLong(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class Parsed:
    match: str | None  # FTS5 MATCH expression, None when the query has no searchable term
    words: tuple[str, ...]  # lower-cased tokens, for highlighting
    inflected: str | None = None  # the expression with inflections; None when nothing inflects
    forms: tuple[str, ...] = ()  # words plus their inflections, for highlighting those hits
    prefix: str | None = None  # the search-as-you-type prefix, if any
    # The FTS5 text both expressions end with when that prefix is one token (`"recon" *`): what
    # prefixes.expand replaces with the vocabulary's terms.
    tail: str | None = None
    terms: tuple[Term, ...] = ()  # each term of the query on its own, for partial matches
    # Typed and paused (protocol `settled`): the last word still a prefix, and the best hits read
    # again for their meaning as a finished query's are (query/meaning.py).
    settled: bool = False


@dataclass(frozen=True, slots=True)
class Term:
    """One term of a query as the scoring model (evidence.py) weighs it."""

    label: str  # as typed, lower-cased, without surrounding punctuation; a phrase in quotes
    raw: str  # as typed (case kept): camelCase parts are read from it
    typed: str  # its FTS5 expression as typed
    inflected: str | None  # with the other inflections of a plain word (None: none)
    quoted: bool  # a quoted phrase: every hit holds it
    word: str | None  # the plain English word it is (lower case), for synonyms and spelling
    tokens: tuple[str, ...]  # its tokens, lower-cased


@dataclass(frozen=True, slots=True)
class _Term:
    text: str  # space-joined tokens
    quoted: bool
    variants: tuple[str, ...]  # inflections (including the word) when the term is a plain word
    label: str = ""  # the piece as typed, surrounding punctuation stripped
    plain: bool = False  # one English-looking word


def _plain_word(piece: str, tokens: list[str]) -> bool:
    """One English-looking word as typed: letters only, lower case or Capitalised."""
    if len(tokens) != 1 or piece.strip(_AROUND) != tokens[0]:
        return False
    word = tokens[0]
    return word.isascii() and word.isalpha() and (word.islower() or (
        word[0].isupper() and word[1:].islower()))


def _terms(query: str) -> list[_Term]:
    out: list[_Term] = []
    for phrase, word in _PIECE.findall(query):
        text = phrase if phrase else word
        tokens = _WORD.findall(text)
        if not tokens:
            continue
        quoted = bool(phrase)
        plain = not quoted and _plain_word(text, tokens)
        variants = forms(tokens[0].lower()) if plain else ()
        out.append(_Term(" ".join(tokens), quoted, variants if len(variants) > 1 else (),
                         text.strip(_AROUND) if not quoted else "", plain))
    return out


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def parse(query: str, *, prefix_last: bool = False, settled: bool = False) -> Parsed:
    if len(query) > MAX_QUERY_CHARS:
        raise QueryTooLong(f"{len(query)} characters (at most {MAX_QUERY_CHARS})")
    terms = _terms(query)
    if len(terms) > MAX_TERMS:
        raise QueryTooLong(f"{len(terms)} words or quoted phrases (at most {MAX_TERMS})")
    if not terms:
        return Parsed(None, ())
    exact = [_quote(t.text) for t in terms]
    prefix = tail = None
    if prefix_last and not terms[-1].quoted and not query.rstrip().endswith('"') \
            and query[-1:] not in (" ", "\t"):
        exact[-1] += " *"
        prefix = terms[-1].text.split()[-1].lower()
        tail = exact[-1] if " " not in terms[-1].text else None
        terms[-1] = _Term(terms[-1].text, False, (), terms[-1].label, terms[-1].plain)
    inflected = [("(" + " OR ".join(_quote(v) for v in t.variants) + ")") if t.variants else e
                 for t, e in zip(terms, exact, strict=True)]
    words = tuple(dict.fromkeys(w.lower() for t in terms for w in t.text.split()))
    more = tuple(dict.fromkeys([*words, *(v for t in terms for v in t.variants)]))
    expanded = " AND ".join(inflected) if more != words else None
    return Parsed(" ".join(exact), words, expanded, more, prefix, tail, _each(terms, exact),
                  settled and prefix is not None)


def _each(terms: list[_Term], exact: list[str]) -> tuple[Term, ...]:
    """The distinct terms (by label), each with its own expressions."""
    out: dict[str, Term] = {}
    for t, e in zip(terms, exact, strict=True):
        tokens = tuple(w.lower() for w in t.text.split())
        label = f'"{t.text.lower()}"' if t.quoted else (t.label or t.text).lower()
        if label in out:
            continue
        inflected = "(" + " OR ".join(_quote(v) for v in t.variants) + ")" if t.variants else None
        word = tokens[0] if t.plain and not e.endswith("*") else None
        out[label] = Term(label, t.label or t.text, e, inflected, t.quoted, word, tokens)
    return tuple(out.values())
