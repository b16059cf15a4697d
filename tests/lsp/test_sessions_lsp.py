"""Issue 32 through the real server over stdio: piEvents/search with `groupBy: "session"` is the
event-level answer regrouped, page after page; piEvents/sessions lists the visible sessions as
their files say; bad params are InvalidParams; names and first prompts are masked unless the
editor's revealSecrets setting is on."""

from __future__ import annotations

import random
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from builder import SessionBuilder
from secretcorpus import planted
from sessioncorpus import build, expected
from test_secrets import leaked

SEED = random.randrange(1 << 30)


async def _ask(client: Any, method: str, params: Any) -> Any:
    return await client.protocol.send_request_async(method, params)


async def _all(client: Any, method: str, params: dict[str, Any], key: str
               ) -> tuple[list[dict[str, Any]], int]:
    out: list[dict[str, Any]] = []
    cursor = None
    n = 0
    while True:
        page = await _ask(client, method, {**params, "cursor": cursor})
        assert len(page[key]) <= params["limit"] and (page[key] or cursor is None)
        out += page[key]
        n += 1
        cursor = page["nextCursor"]
        if cursor is None:
            return out, n


async def test_grouped_search_and_the_sessions_list(start, pi_home, tmp_path):
    c = build(pi_home.sessions, str(tmp_path / "w"), random.Random(SEED), 50)
    client = await start([c.root])
    mid = sorted(expected(s.path).updated for s in c.visible())[len(c.visible()) // 2]
    for query, filters in (("error", {}), ("socket retry", {"kind": ["tool.result"]}),
                           ("", {"cwd": f"{c.root}/api"}), ("failing", {"since": mid}),
                           ("parser", {"tool": "bash", "errors": True})):
        ask = {"query": query, "filters": filters}
        hits, _ = await _all(client, "piEvents/search", {**ask, "limit": 200}, "hits")
        want: dict[str, list[Any]] = {}
        for h in hits:
            want.setdefault(h["sessionId"], [h, 0])[1] += 1
        for size in (5, 50):
            got, n = await _all(client, "piEvents/search",
                                {**ask, "limit": size, "groupBy": "session"}, "sessions")
            assert [(g["sessionId"], g["top"], g["matches"]) for g in got] == \
                [(s, top, m) for s, (top, m) in want.items()], f"{ask} by {size} (seed {SEED})"
            assert n == max(1, -(-len(want) // size))
    one = await _ask(client, "piEvents/search", {"query": "error", "groupBy": "session", "limit": 1})
    assert set(one) == {"sessions", "nextCursor", "didYouMean", "indexing"} and one["indexing"] is None
    assert set(one["sessions"][0]) == {"sessionId", "path", "uri", "cwd", "name", "firstPrompt",
                                       "started", "updated", "events", "matches", "top",
                                       "parentSession"}
    plain = await _ask(client, "piEvents/search", {"query": "error", "groupBy": None})
    assert "hits" in plain and "sessions" not in plain

    listed, n = await _all(client, "piEvents/sessions", {"limit": 7}, "sessions")
    assert [s["sessionId"] for s in listed] == [
        s["sessionId"] for s in (await _ask(client, "piEvents/sessions", {"limit": 200}))["sessions"]]
    assert {s["sessionId"] for s in listed} == {s.session_id for s in c.visible()}
    assert [s["updated"] for s in listed] == sorted((s["updated"] for s in listed), reverse=True)
    paths = {s.session_id: s.path for s in c.sessions}
    for item in listed:
        w = expected(paths[item["sessionId"]])
        assert (item["name"], item["firstPrompt"], item["started"], item["updated"],
                item["events"], item["first"]["entryId"]) == \
            (w.name, w.first_prompt, w.started, w.updated, w.events, w.first_entry)
        assert item["kinds"].get("user.text", 0) == w.user_texts
        read = await _ask(client, "piEvents/read", {"ref": item["first"]["ref"], "order": "branch"})
        assert read["event"]["ref"] == item["first"]["ref"]
    api = await _ask(client, "piEvents/sessions", {"filters": {"cwd": f"{c.root}/api"}})
    assert {s["sessionId"] for s in api["sessions"]} == \
        {s.session_id for s in c.under(f"{c.root}/api")}
    assert (await _ask(client, "piEvents/sessions", {}))["nextCursor"] is None  # default 50


async def test_bad_params(start, pi_home, tmp_path):
    sb = SessionBuilder(pi_home.sessions, str(tmp_path))
    sb.user("the error again")
    client = await start([str(tmp_path)])
    for method, params in (("piEvents/search", {"query": "error", "groupBy": "cwd"}),
                           ("piEvents/search", {"query": "error", "groupBy": 1}),
                           ("piEvents/search", {"query": "x", "groupBy": "session", "limit": 0}),
                           ("piEvents/sessions", {"limit": 500}),
                           ("piEvents/sessions", {"filters": "kind"}),
                           ("piEvents/sessions", {"filters": {"since": "not a time"}}),
                           ("piEvents/sessions", {"currentSession": {"sessionId": sb.session_id}})):
        with pytest.raises(JsonRpcException) as err:
            await _ask(client, method, params)
        assert err.value.code == -32602, (method, params)
    assert "groupBy" in str((await _raised(client, "piEvents/search",
                                           {"query": "e", "groupBy": "cwd"})).message)
    for method, params in (("piEvents/search", {"query": "error", "groupBy": "session"}),
                           ("piEvents/sessions", {})):
        exc = await _raised(client, method, {**params, "cursor": "not-a-cursor"})
        assert exc.code == -32002, method


async def _raised(client: Any, method: str, params: Any) -> JsonRpcException:
    with pytest.raises(JsonRpcException) as err:
        await _ask(client, method, params)
    return err.value


async def test_names_and_prompts_masked_unless_the_editor_reveals(start, pi_home, tmp_path):
    proj = tmp_path / "proj"
    key = next(p for p in planted(random.Random(SEED)) if p.kind == "openai-key")
    sb = SessionBuilder(pi_home.sessions, str(proj))
    sb.user(f"{key.text}\x1b[2J")
    sb.session_info(f"rotate {key.value}\x07")
    masked = await start([str(proj)])
    for method, params in (("piEvents/sessions", {}),
                           ("piEvents/search", {"query": "rotate", "groupBy": "session"})):
        got = (await _ask(masked, method, params))["sessions"][0]
        assert not leaked(key.value, repr(got)) and "[redacted: openai-key]" in got["firstPrompt"]
        assert "\x1b" not in got["firstPrompt"] and "\x07" not in got["name"]
    shown = await start([str(proj)], options={"piEvents": {"revealSecrets": True}})
    for method, params in (("piEvents/sessions", {}),
                           ("piEvents/search", {"query": "rotate", "groupBy": "session"})):
        got = (await _ask(shown, method, params))["sessions"][0]
        assert (got["name"], got["firstPrompt"]) == (f"rotate {key.value}", key.text)
