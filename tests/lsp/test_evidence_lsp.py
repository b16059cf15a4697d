"""The one order of hits, by evidence, through the real server over stdio (docs/protocol.md, "The
order of hits"): a long tool result holding every word below a short event holding the informative
ones; a copied phrase's event first; a synonym that floods nothing; words spread over an event's
text and its tool call; `match: "all"` per event; pages that never repeat; the best hits read again
for their meaning (a query in other words than its event's finds it among events sharing more of its
words; turned off, the words' order; a prefix being typed, the words' order; status says which)."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from builder import SessionBuilder
from support import PiHome

MEMORY = "git commit was refused"  # typed from memory: the event says "commit got rejected"
DEPLOY = "deploy got stuck halfway"  # the event says "deploy froze in the middle"
# English prose of the kind a fetched page or a read-back doc holds: nearly every common word.
PAGE = ("The guide explains how the team can put the pieces back together, what did change in the "
        "release, why the cache was slow and how the build can be fixed in the next version. ")


async def search(client: Any, query: str, **params: Any) -> Any:
    return await client.protocol.send_request_async(
        "piEvents/search", {"query": query, "limit": 200, **params})


def project(pi_home: PiHome, tmp_path: Path) -> tuple[Path, SessionBuilder]:
    """A workspace folder and a session being written in it."""
    proj = tmp_path / "proj"
    proj.mkdir()
    return proj, SessionBuilder(pi_home.sessions, str(proj))


def entries(res: Any) -> list[str]:
    return [h["entryId"] for h in res["hits"]]


@pytest.fixture
def history(pi_home: PiHome, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    proj, sb = project(pi_home, tmp_path)
    ids: dict[str, str] = {}
    ids["fix"] = sb.user("the pnpm lockfile broke after the fastify bump")
    ids["page_call"] = sb.assistant(tool_calls=[("w1", "fetch", {"url": "https://example.org/guide"})])
    # 30 K characters holding every word of the query below, and all the common ones
    ids["page"] = sb.tool_result("w1", "fetch", (PAGE * 200) + " pnpm lockfile fastify put back")
    for n in range(40):  # many events that say "error": the synonym of "bug"
        ids[f"error{n}"] = sb.user(f"error number {n} in the worker log")
    for n in range(6):
        ids[f"zebra{n}"] = sb.user(f"zebrafish tank {n} readings uploaded")
    ids["zebra_bug"] = sb.user("zebrafish importer has a bug with tank ids")
    ids["copied"] = sb.assistant("retryCount is never reset after the socket closes")
    ids["scattered"] = sb.assistant("retryCount counts up on every close")
    ids["reset_elsewhere"] = sb.user("reset the socket never again")
    ids["split"] = sb.assistant("Running the migration for the kangaroo table now.",
                                tool_calls=[("c2", "bash", {"command": "alembic upgrade head"})])
    # Events holding more of a from-memory query's words (MEMORY) than the one it remembers.
    for n, what in enumerate(["update the readme", "bump the version", "fix a typo in docs",
                              "add the changelog entry", "rename the config key",
                              "tidy imports", "format with prettier", "regenerate the lockfile"]):
        ids[f"git{n}"] = sb.assistant(f"I ran git commit -m '{what}' and it was recorded as "
                                      f"commit {n}a1b2c3 on main.")
    ids["blocked"] = sb.user("My commit got rejected: the hook blocked it.")
    # Events the words barely tell apart (each holds "deploy" once, alike in length); the oldest
    # is the one a query in other words (DEPLOY) remembers.
    ids["froze"] = sb.user("deploy froze in the middle and never returned")
    for n in range(6):
        ids[f"deploy{n}"] = sb.user(f"deploy of service-{n} finished in {n + 3} minutes")
    return proj, ids


async def test_a_long_result_holding_every_word_ranks_below_a_short_event(start, history):
    proj, ids = history
    client = await start([str(proj)])
    res = await search(client, "pnpm lockfile put back after fastify bump")
    order = entries(res)
    assert order[0] == ids["fix"]  # holds the informative words, short
    assert order.index(ids["page"]) > order.index(ids["fix"])
    assert res["hits"][0]["missing"] == ["put", "back"]  # said, though it comes first


async def test_a_copied_phrase_is_first(start, history):
    proj, ids = history
    client = await start([str(proj)])
    order = entries(await search(client, "retryCount is never reset"))
    assert order[0] == ids["copied"]
    assert {ids["scattered"], ids["reset_elsewhere"]} <= set(order[1:])


async def test_a_synonym_floods_nothing(start, history):
    proj, ids = history
    client = await start([str(proj)])
    res = await search(client, "zebrafish bug")
    order = entries(res)
    # the one event saying both words, then the zebrafish events; "error" (a synonym of "bug")
    # only after every event holding the rarer word
    assert order[0] == ids["zebra_bug"]
    zebra = {ids[f"zebra{n}"] for n in range(6)}
    assert set(order[1:7]) == zebra
    error_ids = {ids[f"error{n}"] for n in range(40)}
    errors = [h for h in res["hits"] if h["entryId"] in error_ids]
    assert errors and order.index(errors[0]["entryId"]) > 6
    assert all(h["matched"] == ["bug"] and h["missing"] == ["zebrafish"] for h in errors)


async def test_words_over_an_events_text_and_tool_call_and_match_all_per_event(start, history):
    proj, ids = history
    client = await start([str(proj)])
    res = await search(client, "kangaroo alembic")
    assert entries(res)[0] == ids["split"] and res["hits"][0]["missing"] == []
    exact = await search(client, "kangaroo alembic", match="all")
    assert entries(exact) == [ids["split"]]
    assert entries(await search(client, "kangaroo alembic zanzibar", match="all")) == []


async def test_an_event_holding_two_common_words_of_four_is_a_candidate_by_score(
        start, pi_home, tmp_path, monkeypatch):
    """Typed from memory, the query's two rarer words are not in its event, and the two it holds
    are common (each in more than 500 fragments: they choose no candidate alone). The event is
    chosen as one of the best by bm25 holding two of the terms, not the newest: 40 later events
    hold both words too, in long texts."""
    proj, sb = project(pi_home, tmp_path)
    gold = sb.user("the build failed: its json body could not be parsed")
    for n in range(520):
        sb.user(f"build step {n} done")
        sb.user(f"json file {n} written")
    for n in range(3):
        sb.user(f"subagent {n} spawned for the docs")
        sb.user(f"edit {n} rejected by the hook")
    sb.assistant("noted")  # the later events answer no question that would lend them its words
    later = [sb.assistant(f"build log {n}: " + " ".join(f"compiled module{n}x{k} into object{k * 7}"
                                                          for k in range(60))
                          + " json manifest updated") for n in range(40)]
    monkeypatch.setenv("PI_EVENT_SEARCH_MEANING", "off")  # the words' candidates, as they are
    client = await start([str(proj)])
    order = entries(await search(client, "build subagent json rejected"))
    assert gold in order, "not a candidate"
    assert all(order.index(gold) < order.index(e) for e in later if e in order)


async def test_pages_never_repeat(start, history):
    proj, ids = history
    client = await start([str(proj)])
    seen: list[str] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"query": "error worker zebrafish", "limit": 7}
        if cursor:
            params["cursor"] = cursor
        page = await client.protocol.send_request_async("piEvents/search", params)
        seen += entries(page)
        cursor = page["nextCursor"]
        if cursor is None:
            break
    assert len(seen) == len(set(seen))
    assert {ids[f"error{n}"] for n in range(40)} | {ids[f"zebra{n}"] for n in range(6)} <= set(seen)
    whole = entries(await search(client, "error worker zebrafish"))
    assert seen == whole


# The best hits read again for their meaning (query/meaning.py).

def rank(res: Any, entry: str) -> int:
    order = [h["entryId"] for h in res["hits"]]
    return order.index(entry) + 1 if entry in order else 10_000


async def test_a_query_in_other_words_finds_its_event(start, history, monkeypatch):
    proj, ids = history
    client = await start([str(proj)])
    by_meaning = rank(await search(client, MEMORY), ids["blocked"])
    status = await client.protocol.send_request_async("piEvents/status", {})
    assert status["order"].startswith("words and meaning (all-MiniLM-L6-v2")

    monkeypatch.setenv("PI_EVENT_SEARCH_MEANING", "off")
    words_only = await start([str(proj)])
    by_words = rank(await search(words_only, MEMORY), ids["blocked"])
    status = await words_only.protocol.send_request_async("piEvents/status", {})
    assert status["order"] == "words only: turned off (PI_EVENT_SEARCH_MEANING=off)"
    # eight events hold "git commit" side by side, far ahead by words; the one that says what
    # happened holds "commit" alone: by meaning it rises above some of them, not above all
    assert by_words > 8
    assert by_meaning < by_words, (by_meaning, by_words)


async def test_among_events_words_barely_tell_apart_meaning_decides(start, history, monkeypatch):
    proj, ids = history
    client = await start([str(proj)])
    assert rank(await search(client, DEPLOY), ids["froze"]) == 1
    monkeypatch.setenv("PI_EVENT_SEARCH_MEANING", "off")
    words_only = await start([str(proj)])
    assert rank(await search(words_only, DEPLOY), ids["froze"]) >= 7  # the oldest of seven


async def test_pages_of_the_order_by_meaning_never_repeat(start, history):
    proj, _ids = history
    client = await start([str(proj)])
    whole = [h["entryId"] for h in (await search(client, MEMORY))["hits"]]
    paged: list[str] = []
    cursor = None
    while True:
        res = await search(client, MEMORY, limit=3, **({"cursor": cursor} if cursor else {}))
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


async def test_a_typed_query_that_paused_is_read_for_its_meaning(start, history):
    """`settled` with prefixLast: the last word is still a prefix (`halfw` finds nothing as a
    word) and the best hits are read again for their meaning, as a finished query's are; pages of
    one never mix with the other's."""
    proj, ids = history
    client = await start([str(proj)])
    typing = await search(client, "deploy got stuck halfw", prefixLast=True)
    paused = await search(client, "deploy got stuck halfw", prefixLast=True, settled=True)
    assert rank(typing, ids["froze"]) >= 7  # by words: the oldest of seven alike
    assert rank(paused, ids["froze"]) == 1
    assert set(entries(typing)) == set(entries(paused))  # the same events, ordered again
    first = await search(client, "deploy got stuck halfw", prefixLast=True, settled=True, limit=2)
    with pytest.raises(Exception, match="query or filters"):
        await search(client, "deploy got stuck halfw", prefixLast=True, limit=2,
                     cursor=first["nextCursor"])
    # a finished query (a space after its last word) needs no `settled`
    assert rank(await search(client, "deploy got stuck halfway ", prefixLast=True),
                ids["froze"]) == 1


async def test_the_writer_reads_its_events_ahead(start, history, pi_home):
    """After a while the writer has read its events for their meaning (status `readAhead`), kept
    beside the index; the order is the one a server that reads nothing ahead gives."""
    proj, ids = history
    client = await start([str(proj)])
    read = 0
    for _ in range(600):  # READ_AHEAD_IDLE (10 s), then a quarter of a core
        status = await client.protocol.send_request_async("piEvents/status", {})
        read = status["server"]["readAhead"]
        if read >= len(ids) and status["server"]["role"] == "writer":
            break
        await asyncio.sleep(0.2)
    assert read >= len(ids), read
    stored = sqlite3.connect(pi_home.index.with_name("meaning-v1.sqlite3"))
    assert stored.execute("SELECT count(*) FROM vectors").fetchone()[0] >= len(ids) - 8  # copies
    ahead = [h["entryId"] for h in (await search(client, MEMORY))["hits"]]

    # A second process, the vectors file gone: it reads the best 30 itself, and reads nothing
    # ahead (the first holds the writer lease)
    stored.close()
    pi_home.index.with_name("meaning-v1.sqlite3").unlink()
    cold = await start([str(proj)])
    assert [h["entryId"] for h in (await search(cold, MEMORY))["hits"]] == ahead
    status = await cold.protocol.send_request_async("piEvents/status", {})
    assert (status["server"]["role"], status["server"]["readAhead"]) == ("reader", 0)


async def test_an_event_the_words_place_past_the_best_joins_them_by_meaning(
        start, pi_home, tmp_path, monkeypatch):
    """A query from memory shares one word with its event, which 40 events holding two of its
    words ("deploy got") place far down: past the best 30, glanced at, it joins them as the one
    meaning the query (query/meaning.py `joining`); without the events after the best, it stays
    there."""
    proj, sb = project(pi_home, tmp_path)
    froze = sb.user("deploy froze in the middle and never returned")
    for n in range(40):
        sb.user(f"the deploy got through: service-{n} is live after {n + 3} minutes")
    query = DEPLOY
    client = await start([str(proj)])
    joined = rank(await search(client, query), froze)
    monkeypatch.setenv("PI_EVENT_SEARCH_MEANING", "off")
    by_words = rank(await search(await start([str(proj)]), query), froze)
    monkeypatch.setenv("PI_EVENT_SEARCH_MEANING", "on")
    only_best = tmp_path / "only-best.json"
    only_best.write_text('{"meaning_further": 0}')
    monkeypatch.setenv("PI_EVENT_SEARCH_EVIDENCE", str(only_best))
    unread = rank(await search(await start([str(proj)]), query), froze)
    assert by_words > 30 and unread > 30, (by_words, unread)
    assert joined <= 3, joined


async def test_a_word_typed_as_one_finds_it_written_apart(start, pi_home, tmp_path):
    """`typecheck`, which the history never holds, finds "type check" as a camelCase word finds
    its parts; a word the history holds is never split (query/expansions.py `written_apart`)."""
    proj, sb = project(pi_home, tmp_path)
    checked = sb.assistant("Ran the type check after the charts swap: 0 errors.")
    for n in range(6):
        sb.user(f"the charts of panel {n} moved to the new series api after the swap")
    sb.user("check the type of every chart series")  # both parts, not side by side
    client = await start([str(proj)])
    res = await search(client, "typecheck after charts swap")
    assert entries(res)[0] == checked
    assert res["hits"][0]["missing"] == []  # typecheck is matched, written apart
    assert all("typecheck" in h["missing"] for h in res["hits"][1:])

    # Once a session holds the word as one, it is no longer read as two.
    SessionBuilder(pi_home.sessions, str(proj)).user("npm run typecheck passed")
    again = await start([str(proj)])
    held = await search(again, "typecheck")
    assert [h["snippet"] for h in held["hits"]] == ["npm run typecheck passed"]


async def test_the_same_file_read_again_takes_one_place_on_the_first_page(
        start, pi_home, tmp_path, monkeypatch):
    """A long file read three times in one session, its text nearly the same each time, leads
    the words' order; read again for their meaning, the second and third reads wait after the
    other events (query/meaning.py `unlike`). The same file read in another session keeps its
    place: another moment a person may mean. (Short texts alike but for a number keep theirs:
    `test_a_synonym_floods_nothing`'s six zebrafish tanks.)"""
    proj, sb = project(pi_home, tmp_path)
    page = ("{% extends 'base.html' %} {% block content %} <ul class='tree'> {% for folder in "
            "tree %} <li class='folder'>{{ folder.name }} reading list, {{ folder.count }} notes"
            "</li> {% endfor %} </ul> {% endblock %} ")
    reads = []
    for n in range(3):
        sb.assistant(tool_calls=[(f"r{n}", "read", {"path": "templates/folder_tree.html"})])
        reads.append(sb.tool_result(f"r{n}", "read", f"templates/folder_tree.html ({61 + n} "
                                    f"lines)\n" + page * 8 + "<!-- edited -->" * n))
    others = [sb.user(text) for text in (
        "the folder view was slow on big vaults",
        "EISDIR: illegal operation on a directory, read of the tree",
        "notes went missing from the list")]
    elsewhere = SessionBuilder(pi_home.sessions, str(proj))
    elsewhere.assistant(tool_calls=[("x", "read", {"path": "templates/folder_tree.html"})])
    other_read = elsewhere.tool_result("x", "read", "templates/folder_tree.html (70 lines)\n"
                                       + page * 8 + "<!-- moved -->")
    query = "folder tree reading list notes"
    order = entries(await search(await start([str(proj)]), query))
    alike_off = tmp_path / "alike-off.json"
    alike_off.write_text('{"meaning_alike": 1.01}')
    monkeypatch.setenv("PI_EVENT_SEARCH_EVIDENCE", str(alike_off))
    before = entries(await search(await start([str(proj)]), query))

    assert max(before.index(r) for r in reads) < min(before.index(o) for o in others), before
    first = min(order.index(r) for r in reads)
    again = sorted(order.index(r) for r in reads if order.index(r) != first)
    assert max(order.index(o) for o in others) < again[0], order
    assert order.index(other_read) < again[0], order
