"""The best hits read again for their meaning, through the real server over stdio (docs/
protocol.md, "The order of hits"): a query typed from memory, in other words than the event's,
finds it among events that share more of its words; turned off, the order is the words' alone;
pages never repeat; status says what orders the hits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from builder import SessionBuilder
from support import PiHome

QUERY = "git commit was refused"


async def search(client: Any, query: str, **params: Any) -> Any:
    return await client.protocol.send_request_async(
        "piEvents/search", {"query": query, "limit": 50, **params})


@pytest.fixture
def history(pi_home: PiHome, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    proj = tmp_path / "proj"
    proj.mkdir()
    sb = SessionBuilder(pi_home.sessions, str(proj))
    ids: dict[str, str] = {}
    # Events holding more of the query's words than the one it remembers, saying other things.
    for n, what in enumerate(["update the readme", "bump the version", "fix a typo in docs",
                              "add the changelog entry", "rename the config key",
                              "tidy imports", "format with prettier", "regenerate the lockfile"]):
        ids[f"git{n}"] = sb.assistant(f"I ran git commit -m '{what}' and it was recorded as "
                                      f"commit {n}a1b2c3 on main.")
    ids["blocked"] = sb.user("The commit hook blocked my change: rejected, tests must pass "
                             "before anything lands.")
    for n in range(5):
        ids[f"other{n}"] = sb.user(f"the zebrafish tank {n} readings were uploaded")
    return proj, ids


def rank(res: Any, entry: str) -> int:
    order = [h["entryId"] for h in res["hits"]]
    return order.index(entry) + 1 if entry in order else 10_000


async def test_a_query_in_other_words_finds_its_event(start, history, monkeypatch):
    proj, ids = history
    client = await start([str(proj)])
    by_meaning = rank(await search(client, QUERY), ids["blocked"])
    status = await client.protocol.send_request_async("piEvents/status", {})
    assert status["order"].startswith("words and meaning (all-MiniLM-L6-v2")

    monkeypatch.setenv("PI_EVENT_SEARCH_MEANING", "off")
    words_only = await start([str(proj)])
    by_words = rank(await search(words_only, QUERY), ids["blocked"])
    status = await words_only.protocol.send_request_async("piEvents/status", {})
    assert status["order"] == "words only: turned off (PI_EVENT_SEARCH_MEANING=off)"
    # eight events hold "git commit"; the one that says what happened holds "commit" alone: by
    # words it comes after them, by meaning before some (the two orders fused: 1/(10 + rank))
    assert by_words > 8
    assert by_meaning <= by_words - 2, (by_meaning, by_words)


async def test_pages_of_the_order_by_meaning_never_repeat(start, history):
    proj, _ids = history
    client = await start([str(proj)])
    whole = [h["entryId"] for h in (await search(client, QUERY))["hits"]]
    paged: list[str] = []
    cursor = None
    while True:
        res = await search(client, QUERY, limit=3, **({"cursor": cursor} if cursor else {}))
        paged += [h["entryId"] for h in res["hits"]]
        cursor = res.get("nextCursor")
        if not cursor:
            break
    assert paged == whole and len(set(paged)) == len(paged)


async def test_a_prefix_being_typed_is_ordered_by_words(start, history):
    proj, ids = history
    client = await start([str(proj)])
    typed = await search(client, "git commit was refus", prefixLast=True)
    # the last word is still being typed: the words' order, answered without the model
    assert rank(typed, ids["blocked"]) > 8
