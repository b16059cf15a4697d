"""Oh My Pi sessions through the real server over stdio, as VS Code and as Neovim: files its own
SessionManager wrote (title record, its entry types and roles, a subagent transcript nested
beside its session) are searched, read and traced, with Oh My Pi's states, and status counts
them apart from Pi's."""

from __future__ import annotations

from typing import Any

from builder import SessionBuilder
from ompwriter import by_scenario, write_omp_sessions

PIN_HASH = "9f2c4e7a1b3d5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8"


async def _ask(client: Any, method: str, params: Any) -> Any:
    return await client.protocol.send_request_async(method, params)


async def test_oh_my_pi_sessions(start, pi_home, tmp_path):
    home = tmp_path / "home"
    # Oh My Pi honours PI_CODING_AGENT_DIR as Pi does: both write into the one agent directory.
    oracle = write_omp_sessions(home, agent_dir=pi_home.agent)
    main, sub = by_scenario(oracle, "main"), by_scenario(oracle, "subagent")
    m = main["marks"]
    pi = SessionBuilder(pi_home.sessions, cwd=main["cwd"])
    pi.user("a Pi session about the reconnect backoff")
    client = await start([main["cwd"]])

    found = await _ask(client, "piEvents/search", {"query": "reconnect backoff", "limit": 50})
    by_id = {(h["sessionId"], h["entryId"]): h for h in found["hits"]}
    fix = by_id[(main["sessionId"], m["fix"])]
    assert (fix["kind"], fix["branchState"], fix["selectionState"]) == \
        ("user.text", "selected", "cleared")
    assert fix["sessionName"] == "Flaky websocket reconnect"
    changelog = await _ask(client, "piEvents/search", {"query": "changelog reconnect fix",
                                                         "match": "all"})
    assert [(h["entryId"], h["selectionState"]) for h in changelog["hits"]
            if h["sessionId"] == main["sessionId"]][:1] == [(m["afterReset"], "direct")]
    abandoned = await _ask(client, "piEvents/search", {"query": "pinning the port",
                                                         "match": "all"})
    assert [(h["entryId"], h["branchState"], h["selectionState"]) for h in abandoned["hits"]] == \
        [(m["alternate"], "alternate", "not-selected")]
    python = await _ask(client, "piEvents/search", {"query": "print sum range",
                                                       "match": "all"})
    assert [(h["entryId"], h["kind"], h["toolName"]) for h in python["hits"]] == \
        [(m["python"], "python.code", "python")]
    assert (await _ask(client, "piEvents/search", {"query": PIN_HASH, "match": "any"}))["hits"] == []

    read = await _ask(client, "piEvents/read", {"ref": f"pi-event:{main['sessionId']}/{m['prompt']}",
                                                "order": "branch", "after": 2})
    assert read["source"]["line"] == main["entries"].index(m["prompt"]) + 3
    assert [f["text"] for f in read["fragments"]] == [
        "Why does the websocket reconnect test flake on CI?"]
    assert [o["reason"] for o in read["omitted"]] == ["image (in Oh My Pi's blob store)"]
    assert [n["entryId"] for n in read["neighbours"]["after"]] == [m["call"], m["result"]]

    task = await _ask(client, "piEvents/search", {"query": "callers scheduleReconnect",
                                                     "match": "all"})
    assert {(h["sessionId"], h["kind"]) for h in task["hits"]} >= {
        (sub["sessionId"], "session.task"), (sub["sessionId"], "user.text")}
    trace = await _ask(client, "piEvents/trace",
                       {"ref": f"pi-event:{sub['sessionId']}/{sub['marks']['report']}"})
    assert [(x["relation"], x.get("sessionId")) for x in trace["lineage"]] == \
        [("session-parent", main["sessionId"])]

    status = await _ask(client, "piEvents/status", {})
    assert status["sessions"] == 3 and status["sessionsBySource"] == {"omp": 2, "pi": 1}
