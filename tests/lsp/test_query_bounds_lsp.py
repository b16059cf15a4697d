"""A query's bounds and spelling's scope through the real server over stdio (issue 46, items 6
and 7): spelling never corrects a word the caller may find anywhere it may search, its own
session before the cutoff included; very long words answer; 64 words or quoted phrases are
searched and 65 are refused as too long (docs/protocol.md)."""

from __future__ import annotations

import string
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from builder import SessionBuilder
from lsp.conftest import Start
from support import PiHome

QUERY_TOO_LONG = -32003


async def search(client: Any, query: str, **params: Any) -> Any:
    return await client.protocol.send_request_async(
        "piEvents/search", {"query": query, "limit": 50, **params})


def words(n: int) -> str:
    """n distinct plain words (letters only, so each is spell-checked and inflected)."""
    letters = string.ascii_lowercase
    return " ".join("zx" + letters[i // 26 % 26] + letters[i % 26] + "ozoid" for i in range(n))


async def test_a_word_of_the_callers_own_session_is_not_corrected(
        start: Start, pi_home: PiHome, tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    SessionBuilder(pi_home.sessions, str(proj)).user("the reconnect handler restarts")
    sb = SessionBuilder(pi_home.sessions, str(proj))
    mine = sb.user("the reconnectz flag and the frobnicate switch")
    sb.assistant("Noted.")
    # the entry holding the call, then what was written after it: never the caller's to find
    cutoff = sb.assistant(tool_calls=[("c1", "event_search", {"query": "zorblax"})])
    sb.tool_result("c1", "event_search", "reconnecty came later")
    me = {"currentSession": {"sessionId": sb.session_id, "cutoff": cutoff}}
    own = {"filters": {"sessionId": sb.session_id}, **me}
    client = await start([str(proj)])

    # named, the own session finds its word as typed
    res = await search(client, "reconnectz", **own)
    assert res["didYouMean"] is None and [h["entryId"] for h in res["hits"]] == [mine]
    # left out (the default), the word is still one the caller may search: not corrected
    res = await search(client, "reconnectz", **me)
    assert res["didYouMean"] is None and res["hits"] == []
    # its words before the cutoff are suggestions like any visible word's
    res = await search(client, "frobnicatr", **own)
    assert res["didYouMean"] == {"query": "frobnicate", "corrections": [
        {"word": "frobnicatr", "suggestion": "frobnicate"}]}
    assert [h["entryId"] for h in res["hits"]] == [mine]
    # from the cutoff on, its words are nowhere: corrected as absent, and never suggested
    for extra in (own, me):
        res = await search(client, "reconnecty", **extra)
        assert res["didYouMean"]["corrections"] == [
            {"word": "reconnecty", "suggestion": "reconnect"}]
        assert (await search(client, "zorblaxe", **extra))["didYouMean"] is None


async def test_long_words_answer_and_a_query_holds_64_terms(
        start: Start, pi_home: PiHome, tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    long40, long41 = "quux" * 10, "quux" * 10 + "a"
    sb = SessionBuilder(pi_home.sessions, str(proj))
    sb.user(f"{words(64)} all of them")
    sb.user(f"the {long40} and {long41} words")
    client = await start([str(proj)])

    for word in ("y" * 1500, "a" * 2000, "ab" * 1000, "yay" * 600):
        for prefix in (False, True):
            res = await search(client, f"words {word}", prefixLast=prefix)
            # the event holding the other word, the long one missing (and not corrected)
            assert [h["missing"] for h in res["hits"]] == [[word]], (word[:6], prefix)
            assert res["didYouMean"] is None, (word[:6], prefix)
    # a typo up to 40 letters is corrected; a longer word is searched as typed
    res = await search(client, "quux" * 9 + "quix")
    assert res["didYouMean"]["corrections"] == [{"word": "quux" * 9 + "quix", "suggestion": long40}]
    res = await search(client, "quux" * 9 + "quixa")
    assert res["didYouMean"] is None and res["hits"] == []

    assert len((await search(client, words(64), match="all"))["hits"]) == 1
    # a quoted phrase is one term, however many words it quotes
    assert len((await search(client, f'"all of them" {words(63)}', match="all"))["hits"]) == 1
    for query in (words(65), f'"all of them" {words(64)}', " ".join(["same"] * 65)):
        with pytest.raises(JsonRpcException) as info:
            await search(client, query)
        assert (info.value.code, info.value.message) == (
            QUERY_TOO_LONG, "Query too long: 65 words or quoted phrases (at most 64)")
