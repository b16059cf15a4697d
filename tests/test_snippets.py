"""Snippets mark the words the tokenizer matched, diacritics folded: the slow folding path looks
only at tokens outside ASCII, and must still find what the literal scan cannot."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_event_search.index.fulltext import identifier_parts, split_identifier
from pi_event_search.query.snippets import snippet


def _marked(text: str, words: set[str], prefix: str | None = None, *, parts: bool = False
            ) -> list[str]:
    cut, matches = snippet(text, frozenset(words), prefix, parts=parts)
    return [cut[s:e] for s, e in matches]


def test_a_folded_word_is_marked_in_non_ascii_text() -> None:
    text = "le café est fermé; " + "mot " * 50 + "une crème brûlée"
    assert _marked(text, {"cafe"}) == ["café"]
    assert _marked(text, {"brulee"}) == ["brûlée"]


def test_a_folded_prefix_is_marked() -> None:
    assert _marked("déjà vu, et dépôt du code", set(), "depo") == ["dépôt"]


def test_ascii_words_beside_non_ascii_ones_are_marked_by_the_literal_scan() -> None:
    assert _marked("naïve retry_loop reconnects", {"retry"}) == ["retry"]
    assert _marked("naïve retry_loop reconnects", set(), "recon") == ["reconnects"]


def test_nothing_is_marked_when_the_match_is_elsewhere() -> None:
    # A hit whose match lies in metadata (a tool name, a path): the text holds no query word.
    text = "ümlaut " * 3000
    cut, matches = snippet(text, frozenset({"bash"}), None)
    assert matches == [] and cut.startswith("ümlaut")


def test_the_folding_table_holds_every_combining_mark() -> None:
    import unicodedata

    from pi_event_search.query.snippets import _combining

    every = {cp for cp in range(0x110000) if unicodedata.combining(chr(cp))}
    assert every == set(_combining())


def test_folding_is_skipped_only_when_no_character_can_fold_into_the_query() -> None:
    # Dashes, arrows and another script cannot fold to "recon": nothing to mark, and no fold
    # pass; a decomposed accent (a combining mark folds to nothing) or an accented letter can.
    from pi_event_search.query.snippets import _may_fold_into

    letters = frozenset("recon")
    assert not _may_fold_into("retry — done → ok 日本語 ✓", letters)
    assert _may_fold_into("Réconnect", letters)
    assert _may_fold_into("re\u0301connect", letters)
    noise = "retry — done → ok 日本語 ✓ " * 400
    assert _marked(noise + "Réconnecting", set(), "recon") == ["Réconnecting"]
    assert _marked(noise, set(), "recon") == []


def test_the_word_being_typed_is_marked_as_a_prefix() -> None:
    # Search-as-you-type: the parsed words hold the partial last word too ("zebraf"); the prefix
    # must still mark the whole token it begins, not lose it to the exact word that is cut short.
    assert _marked("the zebrafish build", {"zebraf"}, "zebraf") == ["zebrafish"]
    assert _marked("the zebrafish build", {"zebrafish", "bu"}, "bu") == ["zebrafish", "build"]
    assert _marked("the ZEBRAFISH build", {"zebraf"}, "zebraf") == ["ZEBRAFISH"]
    assert _marked("the zebraf build", {"zebraf"}, "zebraf") == ["zebraf"]


def test_a_partial_hit_marks_the_identifier_parts_it_was_found_by() -> None:
    # A partial hit's words match the index's identifier parts too (`retry` in `retryCount`):
    # its snippet marks them; a hit holding the words as written marks whole tokens only.
    text = "set retryCount to five in SessionManager.open"
    assert _marked(text, {"retry", "five"}, parts=True) == ["retry", "five"]
    assert _marked(text, {"retry", "five"}) == ["five"]
    assert _marked(text, {"session", "manager", "open"}, parts=True) == ["Session", "Manager", "open"]
    assert _marked("the HTTPServer and parseJSON2", {"http", "server", "json", "2"}, parts=True) \
        == ["HTTP", "Server", "JSON", "2"]


def test_only_what_the_index_splits_is_marked_as_a_part() -> None:
    # No case change, no identifier (`retrycount`); inside a part (`on` in `connection`,
    # `erver` in `HTTPServer`); a run broken by a letter outside ASCII (`naïveRetry`: the index
    # splits `veRetry`, and `ve` follows `ï`).
    words = {"retry", "on", "erver", "ve", "http"}
    assert _marked("retrycount connection HTTPServer naïveRetry", words, parts=True) \
        == ["HTTP", "Retry"]


_IDENT = st.lists(st.sampled_from(["get", "User", "HTTP", "Server", "id", "2", "x", "JSON", "ok"]),
                  min_size=1, max_size=4).map("".join)
_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")  # fulltext.split_identifier's cut


@settings(max_examples=300, deadline=None)
@given(st.lists(_IDENT, min_size=1, max_size=6), st.data())
def test_marked_parts_are_the_parts_the_index_holds(idents: list[str], data: st.DataObject) -> None:
    # Any part word asked for: an identifier the index splits (identifier_parts) shows each of
    # its parts equal to the word; any other token shows only as a whole.
    word = data.draw(st.sampled_from(sorted({p for i in idents for p in split_identifier(i)})))
    expected = []
    for ident in idents:
        if identifier_parts(ident):
            expected += [p for p in _PART.findall(ident) if p.lower() == word]
        elif ident.lower() == word:
            expected.append(ident)
    assert _marked(" ".join(idents), {word}, parts=True) == expected
