"""Partial matches through the real server over stdio: the events holding every word first, then
those holding fewer, each marked with what it lacks; `match: "all"`; phrases; identifier parts;
a call and its result; spelling; filters and authorization on every part (docs/protocol.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from builder import SessionBuilder
from support import PiHome


async def request(client: Any, method: str, params: dict[str, Any]) -> Any:
    return await client.protocol.send_request_async(method, params)


async def search(client: Any, query: str, **params: Any) -> Any:
    return await request(client, "piEvents/search", {"query": query, "limit": 200, **params})


def by_entry(res: Any) -> dict[str, Any]:
    return {h["entryId"]: h for h in res["hits"]}


def marked(hit: Any) -> list[str]:
    return [hit["snippet"][s:e] for s, e in hit["matches"]]


@pytest.fixture
def history(pi_home: PiHome, tmp_path: Path) -> tuple[Path, dict[str, str], SessionBuilder]:
    proj = tmp_path / "proj"
    proj.mkdir()
    sb = SessionBuilder(pi_home.sessions, str(proj))
    ids = {
        "socket": sb.user("the websocket reconnect fails after the laptop sleeps"),
        "socket_answer": sb.assistant("Looking at the socket client now."),
        "both": sb.user("websocket reconnect overnight is flaky"),
        "phrase": sb.user("alpha beta delta notes"),
        "swapped": sb.user("beta alpha gamma notes"),
        "apart": sb.user("alpha gamma notes"),
        "ident": sb.user("the retry_count setting is ignored by the client"),
        "camel": sb.user("set retryCount to five in SessionManager.open"),
        "whole": sb.user("retry five times then give up"),
    }
    ids["call"] = sb.assistant(tool_calls=[("c1", "bash", {"command": "npx vitest --config e2e.ts"})])
    ids["result"] = sb.tool_result("c1", "bash", "Timeout of 5000ms exceeded in e2e suite",
                                   is_error=True)
    for n in range(7):  # partial hits to page through: each holds "widget" but not "zanzibar"
        ids[f"widget{n}"] = sb.user(f"widget number {n} rendered")
    ids["zanzibar"] = sb.user("widget zanzibar together")
    # another project: never visible from proj's root, in any part of the answer
    other = SessionBuilder(pi_home.sessions, str(tmp_path / "elsewhere"))
    ids["hidden"] = other.user("websocket reconnect hiddenword from another project")
    return proj, ids, sb


async def test_one_absent_word_finds_the_event_marked_missing(start, history):
    proj, ids, _ = history
    client = await start([str(proj)])
    res = await search(client, "websocket reconnect sleeping laptop battery")
    found = by_entry(res)
    hit = found[ids["socket"]]
    assert hit["missing"] == ["battery"]
    assert hit["matched"] == ["websocket", "reconnect", "sleeping", "laptop"]
    assert res["hits"][0]["entryId"] == ids["socket"]  # it covers the most of the query
    # holding fewer words ranks below, and says which
    assert found[ids["both"]]["missing"] == ["sleeping", "laptop", "battery"]
    assert [h["entryId"] for h in res["hits"]].index(ids["both"]) > 0
    assert ids["hidden"] not in found  # another project's event: in no part of the answer
    # match "all" keeps all-words matching: nothing holds every word
    exact = await search(client, "websocket reconnect sleeping laptop battery", match="all")
    assert exact["hits"] == []
    # and an event holding every word is first, unmarked, in both
    both = await search(client, "websocket reconnect overnight")
    assert both["hits"][0]["entryId"] == ids["both"] and both["hits"][0]["missing"] == []
    assert [h["entryId"] for h in (await search(client, "websocket reconnect overnight",
                                                match="all"))["hits"]] == [ids["both"]]


async def test_pages_of_a_relaxed_query_never_repeat_or_skip(start, history):
    proj, ids, _ = history
    client = await start([str(proj)])
    whole = await search(client, "widget zanzibar")
    order = [h["entryId"] for h in whole["hits"]]
    assert order[0] == ids["zanzibar"] and whole["hits"][0]["missing"] == []
    assert {ids[f"widget{n}"] for n in range(7)} <= set(order[1:])
    assert all(h["missing"] == ["zanzibar"] for h in whole["hits"][1:])
    for size in (1, 2, 3):
        seen: list[str] = []
        cursor = None
        while True:
            page = await request(client, "piEvents/search", {
                "query": "widget zanzibar", "limit": size, "cursor": cursor})
            seen += [h["entryId"] for h in page["hits"]]
            cursor = page["nextCursor"]
            if cursor is None:
                break
        assert seen == order, size


async def test_a_quoted_phrase_is_never_relaxed(start, history):
    proj, ids, _ = history
    client = await start([str(proj)])
    res = await search(client, '"alpha beta" gamma')
    found = by_entry(res)
    assert set(found) == {ids["phrase"]}  # holds the phrase; the others hold its words apart
    assert found[ids["phrase"]]["missing"] == ["gamma"]
    assert found[ids["phrase"]]["matched"] == ['"alpha beta"']
    assert (await search(client, '"beta delta alpha"'))["hits"] == []


async def test_identifier_parts(start, history):
    proj, ids, _ = history
    client = await start([str(proj)])
    # a camelCase query word finds the identifier written with underscores, below whole words
    res = await search(client, "retryCount ignored")
    hit = by_entry(res)[ids["ident"]]
    assert hit["missing"] == [] and hit["matched"] == ["retrycount", "ignored"]
    assert (await search(client, "retryCount ignored", match="all"))["hits"] == []
    # plain words find an identifier by its parts, below the events holding them whole
    res = await search(client, "retry five")
    order = [h["entryId"] for h in res["hits"]]
    assert order[0] == ids["whole"] and ids["camel"] in order
    camel = by_entry(res)[ids["camel"]]
    assert camel["missing"] == [] and camel["matched"] == ["retry", "five"]
    # and its snippet shows where: the part inside the identifier is marked
    assert marked(camel) == ["retry", "five"]
    assert marked(by_entry(res)[ids["whole"]]) == ["retry", "five"]
    assert [h["entryId"] for h in (await search(client, "retry five", match="all"))["hits"]] \
        == [ids["whole"]]
    session = by_entry(await search(client, "session manager open"))[ids["camel"]]
    assert session["missing"] == [] and marked(session) == ["Session", "Manager", "open"]


async def test_a_call_and_its_result_split_the_words(start, history):
    proj, ids, _ = history
    client = await start([str(proj)])
    res = await search(client, "vitest config timeout")
    top = by_entry(res)
    # the call holds two of the three words, its result the third: the two come first, each
    # lent the other's words by its turn, each saying what it holds itself
    assert {h["entryId"] for h in res["hits"][:2]} == {ids["call"], ids["result"]}
    assert top[ids["call"]]["missing"] == ["timeout"]
    assert "timeout" in top[ids["result"]]["matched"]
    assert (await search(client, "vitest config timeout", match="all"))["hits"] == []


async def test_did_you_mean_for_a_typo_and_not_for_a_real_word(start, history):
    proj, ids, _ = history
    client = await start([str(proj)])
    res = await search(client, "websocket reconect")
    assert res["didYouMean"] == {"query": "websocket reconnect", "corrections": [
        {"word": "reconect", "suggestion": "reconnect"}]}
    assert res["hits"][0]["missing"] == [] and ids["socket"] in by_entry(res)
    assert (await search(client, "websocket reconnect"))["didYouMean"] is None
    # a word only another project holds is neither corrected to nor kept from correction
    assert (await search(client, "hiddenwords"))["didYouMean"] is None
    # match "all" suggests, but searches the words as typed
    exact = await search(client, "websocket reconect", match="all")
    assert exact["didYouMean"]["corrections"][0]["suggestion"] == "reconnect"
    assert exact["hits"] == []


async def test_search_as_you_type_corrects_a_last_word_that_begins_no_word(start, history,
                                                                         pi_home, tmp_path):
    proj, ids, _ = history
    # `reconnectx`: a word only another project holds, one edit from a visible word
    other = SessionBuilder(pi_home.sessions, str(tmp_path / "elsewhere2"))
    ids["hiddenx"] = other.user("the reconnectx flag from another project")
    client = await start([str(proj)])
    res = await search(client, "websocket reconect", prefixLast=True)
    assert res["didYouMean"] == {"query": "websocket reconnect", "corrections": [
        {"word": "reconect", "suggestion": "reconnect"}]}
    assert ids["socket"] in by_entry(res) and res["hits"][0]["missing"] == []
    # the corrected word stays a prefix: `overnigt` -> overnight, which begins `overnight`
    fixed = await search(client, "reconnect overnigt", prefixLast=True)
    assert fixed["didYouMean"]["query"] == "reconnect overnight"
    assert fixed["hits"][0]["entryId"] == ids["both"]
    # a prefix that begins a visible word is what the user is still typing: never corrected
    for typing in ("websocket reco", "websocket reconnec", "websocket Reconn"):
        assert (await search(client, typing, prefixLast=True))["didYouMean"] is None, typing
    # a prefix only another project's words begin is corrected as if they were absent (never
    # kept as typed, which would tell that they exist), and to no word of that project
    hidden = await search(client, "websocket reconnectx", prefixLast=True)
    assert hidden["didYouMean"] == {"query": "websocket reconnect", "corrections": [
        {"word": "reconnectx", "suggestion": "reconnect"}]}
    assert ids["hiddenx"] not in by_entry(hidden)
    assert (await search(client, "websocket hiddenwor", prefixLast=True))["didYouMean"] is None


async def test_filters_apply_to_every_part(start, history):
    proj, ids, _ = history
    client = await start([str(proj)])
    res = await search(client, "vitest config timeout websocket",
                       filters={"kind": ["user.text"]})
    assert res["hits"] and all(h["kind"] == "user.text" for h in res["hits"])
    assert ids["call"] not in by_entry(res) and ids["result"] not in by_entry(res)
    errors = await search(client, "websocket timeout exceeded", filters={"errors": True})
    assert [h["entryId"] for h in errors["hits"]] == [ids["result"]]
    assert errors["hits"][0]["missing"] == ["websocket"]


async def test_groups_count_and_show_partial_hits(start, history):
    proj, ids, sb = history
    client = await start([str(proj)])
    res = await request(client, "piEvents/search", {"query": "widget zanzibar",
                                                    "groupBy": "session"})
    assert [g["sessionId"] for g in res["sessions"]] == [sb.session_id]
    assert res["sessions"][0]["matches"] == 8 and res["sessions"][0]["top"]["missing"] == []
