"""Partial matches in the engine (real SQLite): identifier parts as indexed, and each synonym
group of query/synonyms.json finding its other words (over the server: tests/lsp/test_relax_lsp.py)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from builder import SessionBuilder
from engine_support import ALL, engine
from pi_event_search.index.fulltext import MAX_PARTS_CHARS, identifier_parts, split_identifier
from pi_event_search.query.expansions import synonym_groups
from pi_event_search.query.inflect import forms
from pi_event_search.query.search import Filters
from support import PiHome


@pytest.mark.parametrize(("text", "parts"), [
    ("retryCount = 3", "retry count"),
    ("new SessionManager().open()", "session manager"),
    ("HTTPServer and parseJSON2", "http server parse json 2"),
    ("snake_case and kebab-case stay with the tokenizer", ""),
    ("retryCount retryCount", "retry count"),
    ("", ""),
])
def test_identifier_parts(text, parts):
    assert identifier_parts(text) == parts


# What an identifier is, said as a regular expression: the definition the index was built with
# before the scan by class maps (fulltext.mixed_case_words) replaced it for speed. The index must
# hold the same parts for every text.
_DEFINITION = re.compile(r"[A-Za-z0-9]*(?:[a-z0-9][A-Z]|[A-Z]{2}[a-z])[A-Za-z0-9]*")


def _parts_by_definition(text: str) -> str:
    seen: dict[str, None] = {}
    size = 0
    for m in _DEFINITION.finditer(text):
        if m.group() not in seen:
            seen[m.group()] = None
            size += len(m.group()) + 1
            if size > MAX_PARTS_CHARS:
                break
    return " ".join(" ".join(split_identifier(w)) for w in seen)


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet="aAbZz09_ .-/\u00e9\u00c9\U0001f600\n", max_size=60))
def test_identifier_parts_equal_the_definition(text):
    assert identifier_parts(text) == _parts_by_definition(text)


def test_identifier_parts_of_long_and_many():
    # A long run without a case change (the regular expression took 1.5 s on 10,000 letters),
    # identifiers past the budget (the one that passes it still counts), non-ASCII around them.
    long_run = "x" * 200_000 + "Count"
    many = " ".join(f"item{i}Name caféBar{i}" for i in range(2_000))
    for text in (long_run, many, "é" + long_run + "ÉtatHTTPServer"):
        assert identifier_parts(text) == _parts_by_definition(text)
    assert identifier_parts(long_run).endswith(" count")


@pytest.fixture(scope="module")
def synonym_index(tmp_path_factory):
    """One event per word of every group, each with a marker word of its own."""
    root = tmp_path_factory.mktemp("syn")
    home = PiHome(root, root / "agent", root / "agent" / "sessions", root / "index.sqlite3")
    home.sessions.mkdir(parents=True)
    with pytest.MonkeyPatch.context() as mp:
        for key, value in home.env().items():
            if key in ("PI_CODING_AGENT_DIR", "PI_EVENT_SEARCH_INDEX", "XDG_CACHE_HOME",
                       "XDG_CONFIG_HOME"):
                mp.setenv(key, value)
        sb = SessionBuilder(home.sessions, "/p")
        ids = {}
        for g, group in enumerate(synonym_groups()):
            for w, word in enumerate(group):
                ids[(g, w)] = sb.user(f"marker{g}x{w} {word}")
        e = engine(home.index)
        e.refresh()
        yield e, ids


@pytest.mark.parametrize("group", range(len(synonym_groups())))
def test_each_synonym_group_finds_its_other_words_below_the_word_as_typed(synonym_index, group):
    e, ids = synonym_index
    words = synonym_groups()[group]
    asked = words[0]
    for w, _ in enumerate(words[1:], start=1):
        page = e.search(f"marker{group}x{w} {asked}", Filters(), ALL, limit=50)
        hit = next(h for h in page.hits if h["entryId"] == ids[(group, w)])
        assert hit["missing"] == [] and hit["matched"] == [f"marker{group}x{w}", asked]
        # the event holding the word as typed (and not the marker) ranks below it, partial
        typed = next(h for h in page.hits if h["entryId"] == ids[(group, 0)])
        assert typed["missing"] == [f"marker{group}x{w}"]
    # and never with match "all"
    assert not e.search(f"marker{group}x1 {asked}", Filters(), ALL, exact=True).hits


def test_every_synonym_group_is_well_formed():
    groups = synonym_groups()
    words = [w for g in groups for w in g]
    assert len(words) == len(set(words)), "a word in two groups"
    assert all(len(g) >= 2 and all(w.isalpha() and w.islower() for w in g) for g in groups)
    # an inflection is found anyway, as typed: a group lists each word once, in one form
    assert not [(a, b) for g in groups for a in g for b in g if a != b and b in forms(a)]
