"""Search-as-you-type: a trailing prefix, expanded through the index's vocabulary, finds exactly the
events whose words start with it, as FTS5's own prefix query does (docs/design.md, prefixes)."""

from __future__ import annotations

import random
import re

import pytest

from builder import SessionBuilder
from engine_support import ALL, cli_json, engine

TOKEN = re.compile(r"[^\W_]+")


def _words(rng: random.Random) -> str:
    return " ".join("".join(rng.choice("abc") for _ in range(rng.randint(1, 6)))
                    for _ in range(rng.randint(1, 8)))


@pytest.fixture
def corpus(pi_home):
    rng = random.Random(7)
    sb = SessionBuilder(pi_home.sessions, "/home/dev/proj")
    texts: dict[str, str] = {}
    for _ in range(150):
        text = _words(rng)
        texts[sb.user(text)] = text
    many = " ".join(f"zq{n:04d}" for n in range(2100))  # more terms than one expansion takes
    texts[sb.user("Reconnect " + many)] = "Reconnect " + many
    texts[sb.user("naïve café")] = "naïve café"
    e = engine(pi_home.index)
    e.refresh()
    return e, texts


def _expected(texts: dict[str, str], words: list[str], prefix: str) -> set[str]:
    out = set()
    for entry_id, text in texts.items():
        tokens = {t.lower() for t in TOKEN.findall(text)}
        if all(w in tokens for w in words) and any(t.startswith(prefix) for t in tokens):
            out.add(entry_id)
    return out


def _found(e, query: str) -> set[str]:
    page = e.search(query, _filters(), ALL, limit=200, prefix_last=True, exact=True)
    assert page.next_cursor is None
    return {h["entryId"] for h in page.hits}


def _filters():
    from pi_event_search.query.search import Filters

    return Filters()


def test_every_prefix_finds_exactly_the_events_with_a_word_starting_with_it(corpus):
    e, texts = corpus
    prefixes = ["".join(p) for n in (1, 2, 3) for p in _product("abc", n)]
    for prefix in prefixes:
        assert _found(e, prefix) == _expected(texts, [], prefix), prefix
        # The words before the prefix must match as typed.
        assert _found(e, f"ab {prefix}") == _expected(texts, ["ab"], prefix), prefix


def _product(alphabet: str, n: int) -> list[tuple[str, ...]]:
    if n == 0:
        return [()]
    return [(*p, c) for p in _product(alphabet, n - 1) for c in alphabet]


def test_a_prefix_with_more_terms_than_one_expansion_still_finds_them(corpus):
    e, texts = corpus
    assert len(_found(e, "zq")) == 1
    assert _found(e, "zq20") == _expected(texts, [], "zq20")
    assert _found(e, "RECON") == _expected(texts, [], "recon") != set()


def test_a_prefix_with_no_term_and_a_folded_prefix(corpus):
    e, texts = corpus
    assert _found(e, "xyz") == set()
    # Not ASCII: FTS5's own prefix query, which folds diacritics as the tokenizer does.
    naive = {i for i, t in texts.items() if t.startswith("naïve")}
    assert _found(e, "naï") == _found(e, "nai") == naive


def test_prefix_through_the_cli(corpus):
    _, texts = corpus
    out = cli_json("search", "zq000", "--prefix-last", "--root", "/home/dev/proj")
    assert {h["entryId"] for h in out["hits"]} == _expected(texts, [], "zq000")


def test_a_remembered_expansion_is_forgotten_when_the_index_changes(pi_home, corpus):
    # Terms listed for a prefix are kept while the index is unchanged: a term the writer adds
    # afterwards must still be found, by the prefix itself and by a longer one.
    e, texts = corpus
    before = _found(e, "qu")
    assert _found(e, "quo") == set()
    sb = SessionBuilder(pi_home.sessions, "/home/dev/proj")
    added = sb.user("quorum lost")
    e.refresh()
    assert _found(e, "qu") == before | {added}
    assert _found(e, "quo") == {added}
