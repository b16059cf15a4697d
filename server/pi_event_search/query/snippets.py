"""Snippets: a bounded window of an evidence text around its matches, with exact match offsets.

Snippets are cut from the indexed text, whitespace collapsed, never paraphrased. Match offsets are
Unicode code points into the snippet. Search marks the query's words; file evidence marks one
literal text (a path, a line), through the same window and cut.
"""

from __future__ import annotations

import itertools
import re
import sqlite3
import string
import unicodedata
from collections.abc import Collection, Iterator
from functools import lru_cache

from pi_event_search.index import textcodec
from pi_event_search.index.fulltext import mixed_case_words, part_bounds

SNIPPET_CHARS = 200
WINDOW = 400  # raw characters considered before whitespace is collapsed
FOLD_CHARS = 20_000  # how far the slow, diacritic-folding scan looks
MAX_SPANS = 40  # matches looked at to place the window (the first ones, in text order)
SCAN_AFTER = 8_000  # ... found at most this many characters after the first match
CHUNK = 4_096  # bytes of text decompressed at a time
_OPEN, _CLOSE = "\x01", "\x02"
_TOKEN = re.compile(r"[^\W_]+")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def snippet(stored: str | bytes, words: Collection[str], prefix: str | None,
            terms: int | None = None, conn: sqlite3.Connection | None = None, *,
            parts: bool = False) -> tuple[str, list[list[int]]]:
    """Snippet and match offsets of one fragment, cut from its stored (bounded) text. `terms`:
    how many distinct words a window can show at most (none given: forms of one word count
    apart), so that reading can stop at the first window showing them all. `parts`: a word
    also matches as parts of an identifier (`retry` in `retryCount`), as a partial hit's
    words match the index's identifier parts."""
    folded = frozenset(fold(w) for w in words)
    finder = _Finder(folded, fold(prefix) if prefix is not None else None, parts)
    text, spans = _scan(stored, finder, terms, conn)
    return collapse(_mark(text, spans))


def snippet_at(text: str, mark: str | None) -> tuple[str, list[list[int]]]:
    """Snippet of `text` around the first occurrence of `mark` (a path, a line), which is its
    one match; no occurrence: the text's start, unmatched."""
    at = text.find(mark) if mark else -1
    spans = [(at, at + len(mark), mark)] if mark and at >= 0 else []
    return collapse(_mark(text, spans))


class _Finder:
    """Query words in text: a literal alternation over the lower-cased text (no look-around per
    character, so the regex engine skips ahead), token boundaries checked per match."""

    def __init__(self, words: frozenset[str], prefix: str | None, parts: bool = False) -> None:
        self.words, self.prefix, self.parts = words, prefix, parts
        self.letters = frozenset("".join(words) + (prefix or ""))
        self.pattern = _literals(words, prefix)
        self.margin = 256  # a token straddling a chunk boundary is looked at again

    def find(self, low: str, text: str, pos: int, limit: int, final: bool
             ) -> tuple[list[tuple[int, int, str]], int]:
        """Matches in low[pos:] (at most `limit`), and where the next scan starts; a match
        touching the end of an unfinished text is left for the next scan. `text` is what `low`
        lower-cases, offset for offset (its case tells identifier parts apart)."""
        spans: list[tuple[int, int, str]] = []
        if self.pattern is None or limit <= 0:
            return spans, pos
        n = len(low)
        for m in self.pattern.finditer(low, pos):
            s, e = m.span()
            if e == n and not final:
                break
            if ((s and low[s - 1].isalnum()) or (e < n and low[e].isalnum())) \
                    and not (self.parts and _identifier_part(text, s, e)):
                continue
            spans.append((s, e, m.group()))
            pos = e
            if len(spans) >= limit:
                return spans, pos
        return spans, max(pos, n - self.margin) if not final else n

    def folded(self, text: str) -> list[tuple[int, int, str]]:
        """The slow path, for text whose diacritics the tokenizer folds ("cafe" finds "café").
        Only tokens with a letter outside ASCII are folded: the literal scan, which found
        nothing, already looked at every other one (folding each token of a long text cost 300 ms
        on a page of prefix hits whose match lay in metadata)."""
        spans: list[tuple[int, int, str]] = []
        head = text[:FOLD_CHARS]
        if not _may_fold_into(head, self.letters):
            return spans
        folded = unicodedata.normalize("NFKD", head.lower()).translate(_combining())
        if not any(w in folded for w in self.words) and (self.prefix is None
                                                       or self.prefix not in folded):
            return spans  # no token can fold to a query word: skip the per-token pass
        for m in _TOKEN.finditer(text, 0, FOLD_CHARS):
            if m.group().isascii():
                continue
            tok = fold(m.group())
            if tok in self.words or (self.prefix is not None and tok.startswith(self.prefix)):
                spans.append((m.start(), m.end(), tok))
                if len(spans) >= MAX_SPANS:
                    break
        return spans


def _may_fold_into(text: str, letters: frozenset[str]) -> bool:
    """Whether a character outside ASCII in `text` folds to a letter of the query (or to nothing,
    a combining mark): only then can folding make a token match that the literal scan missed.
    Most texts outside ASCII hold dashes, arrows, box lines or another script, and folding all
    of them cost about 1 ms per snippet, most of a later page of prefix hits."""
    for char in set(_NON_ASCII.findall(text)):
        folded = _fold_char(char)
        if not folded or not letters.isdisjoint(folded):
            return True
    return False


@lru_cache(maxsize=4096)
def _fold_char(char: str) -> str:
    return fold(char)


@lru_cache(maxsize=256)
def _literals(words: frozenset[str], prefix: str | None) -> re.Pattern[str] | None:
    """The prefix first: it takes a whole token, and the words hold the word being typed as
    well, which would match its first letters only and fail the token boundary."""
    alternatives = [re.escape(w) for w in sorted(words, key=len, reverse=True)]
    if prefix is not None:
        alternatives.insert(0, re.escape(prefix) + r"[^\W_]*")
    return re.compile("|".join(alternatives)) if alternatives else None


def _scan(stored: str | bytes, finder: _Finder, terms: int | None,
          conn: sqlite3.Connection | None) -> tuple[str, list[tuple[int, int, str]]]:
    """The text (decompressed only as far as the window needs) and the matches placing it: the
    first MAX_SPANS, or those up to a window showing every term, or (terms unknown) those within
    SCAN_AFTER characters of the first; then a window's width of text after the last."""
    if isinstance(stored, str):
        chunks: Iterator[str] = iter((stored,))
    else:
        chunks = textcodec.chunks(stored, CHUNK, conn)
    text, low, pos, exact = "", "", 0, True
    spans: list[tuple[int, int, str]] = []
    for chunk, final in _flagged(chunks):
        text += chunk
        lowered = chunk.lower()
        exact = exact and len(lowered) == len(chunk)  # offsets in low are offsets in text
        low += lowered if exact else ""
        if not exact:
            continue
        if finder.pattern is None:
            if len(text) >= WINDOW:
                break
            continue
        found, pos = finder.find(low, text, pos, MAX_SPANS - len(spans), final)
        spans += found
        enough = bool(spans) and (
            len(spans) >= MAX_SPANS or _densest(spans)[1] >= terms if terms is not None
            else len(spans) >= MAX_SPANS or len(text) - spans[0][0] >= SCAN_AFTER)
        if enough and len(text) > spans[-1][1] + WINDOW:  # room for any window, and its "…"
            break
    if not exact:  # the loop read every chunk
        return text, _regex_spans(text, finder)
    if not spans and not text.isascii():
        return text, finder.folded(text)
    return text, spans


_ALNUM = frozenset(string.ascii_letters + string.digits)
_PART_RUN = 256  # the longest identifier looked into (a longer run of letters is not one)


def _identifier_part(text: str, s: int, e: int) -> bool:
    """Whether text[s:e] is one or more whole parts of a mixed-case identifier: what the index's
    `parts` column holds (fulltext.identifier_parts), so that a partial hit found through it
    shows where."""
    for i in (s, e):
        if 0 < i < len(text) and text[i - 1].isalnum() and text[i].isalnum() and (
                text[i - 1] not in _ALNUM or text[i] not in _ALNUM
                or (text[i - 1].islower() and text[i].islower())):
            return False  # most matches inside a word end here, by two characters
    a, b = s, e
    while a and text[a - 1] in _ALNUM and s - a < _PART_RUN:
        a -= 1
    while b < len(text) and text[b] in _ALNUM and b - e < _PART_RUN:
        b += 1
    run = text[a:b]
    if len(run) >= _PART_RUN or not run.isascii() or mixed_case_words(run) != [run]:
        return False
    bounds = part_bounds(run)
    return s - a in bounds and e - a in bounds


def _flagged(chunks: Iterator[str]) -> Iterator[tuple[str, bool]]:
    """Each chunk, and whether it is the last one."""
    prev = next(chunks, None)
    for chunk in chunks:
        assert prev is not None
        yield prev, False
        prev = chunk
    if prev is not None:
        yield prev, True


def _regex_spans(text: str, finder: _Finder) -> list[tuple[int, int, str]]:
    """Case-insensitive matching on the text itself, for the rare text whose lower case has
    another length (offsets into a lower-cased copy would drift)."""
    pattern = _insensitive(finder.words, finder.prefix)
    if pattern is None:
        return []
    spans = [(m.start(), m.end(), m.group().lower())
             for m in itertools.islice(pattern.finditer(text), MAX_SPANS)]
    return spans or (finder.folded(text) if not text.isascii() else [])


@lru_cache(maxsize=256)
def _insensitive(words: frozenset[str], prefix: str | None) -> re.Pattern[str] | None:
    alternatives = [re.escape(w) for w in sorted(words, key=len, reverse=True)]
    if prefix is not None:  # first, as in _literals
        alternatives.insert(0, re.escape(prefix) + r"[^\W_]*")
    if not alternatives:
        return None
    return re.compile(r"(?<![^\W_])(?:" + "|".join(alternatives) + r")(?![^\W_])",
                      re.IGNORECASE)


@lru_cache(maxsize=1)
def _combining() -> dict[int, None]:
    """Every combining code point, for str.translate (built once, on the first folded text)."""
    return {cp: None for cp in range(0x20000) if unicodedata.combining(chr(cp))}  # none above


@lru_cache(maxsize=8192)
def fold(token: str) -> str:
    """Lower case without diacritics, as the FTS tokenizer sees a token (remembered: a page of
    partial hits folds the same synonyms for every hit)."""
    decomposed = unicodedata.normalize("NFKD", token.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _densest(spans: list[tuple[int, int, str]]) -> tuple[int, int]:
    """The first span starting the run (WINDOW // 2 characters) with the most distinct words
    (a sliding window; it stops once a run holds every word found), and that number."""
    every = len({tok for _, _, tok in spans})
    counts: dict[str, int] = {}
    best, best_n, j = 0, -1, 0
    for i, (start, _, tok) in enumerate(spans):
        while j < len(spans) and spans[j][0] - start < WINDOW // 2:
            counts[spans[j][2]] = counts.get(spans[j][2], 0) + 1
            j += 1
        if len(counts) > best_n:
            best, best_n = i, len(counts)
            if best_n == every:
                break
        counts[tok] -= 1
        if not counts[tok]:
            del counts[tok]
    return best, best_n


def _mark(text: str, spans: list[tuple[int, int, str]]) -> str:
    """A window of the text around the densest matches, matches wrapped in markers."""
    if not spans:
        return text[:WINDOW] + ("…" if len(text) > WINDOW else "")
    first = spans[_densest(spans)[0]][0]
    begin = max(0, first - WINDOW // 5)
    while begin > 0 and not text[begin - 1].isspace() and first - begin < WINDOW // 3:
        begin -= 1
    end = min(len(text), begin + WINDOW)
    parts = ["…" if begin > 0 else ""]
    pos = begin
    for s, e, _ in spans:
        if s < begin or s >= end:
            continue
        e = min(e, end)  # a long match (a whole line) is cut with the window
        parts += [text[pos:s], _OPEN, text[s:e], _CLOSE]
        pos = e
    parts += [text[pos:end], "…" if end < len(text) else ""]
    return "".join(parts)


_SPACES = re.compile(r"\s+")
_MARKS = re.compile(f"[{_OPEN}{_CLOSE}]")


def collapse(marked: str) -> tuple[str, list[list[int]]]:
    """Collapse whitespace, drop the markers, bound the length; offsets follow the text."""
    squeezed = _SPACES.sub(" ", marked).strip()
    matches: list[list[int]] = []
    start: int | None = None
    for n, m in enumerate(_MARKS.finditer(squeezed)):
        at = m.start() - n
        if m.group() == _OPEN:
            start = at
        elif start is not None:
            matches.append([start, at])
            start = None
    text = squeezed.replace(_OPEN, "").replace(_CLOSE, "")
    if len(text) <= SNIPPET_CHARS:
        return text, matches
    first = matches[0][0] if matches else 0
    begin = max(0, min(first - SNIPPET_CHARS // 4, len(text) - SNIPPET_CHARS))
    end = begin + SNIPPET_CHARS
    lead = "…" if begin > 0 else ""
    trail = "…" if end < len(text) else ""
    cut = lead + text[begin:end] + trail
    shift = len(lead) - begin
    kept = [[s + shift, min(e, end) + shift] for s, e in matches if s >= begin and s < end]
    return cut, kept
