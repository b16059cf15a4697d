"""Tree states of the caller's own session as of its cutoff, through the real server.

The session: a -> b -> c -> d(cutoff, holds the tool call), then, after the cutoff, a rewind to b
and a new branch b -> e -> f. The whole file selects a, b, e, f (c and d are `alternate`); as of the
cutoff, the conversation that led to the call is a, b, c, and c is its leaf.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from builder import SessionBuilder
from lsp.conftest import Start
from support import PiHome

WORD = "quokka"


def _session(home: PiHome, cwd: str) -> tuple[SessionBuilder, dict[str, str]]:
    sb = SessionBuilder(home.sessions, cwd)
    ids: dict[str, str] = {}
    ids["a"] = sb.user(f"{WORD} alpha")
    ids["b"] = sb.assistant(f"{WORD} bravo")
    ids["c"] = sb.user(f"{WORD} charlie")
    ids["d"] = sb.assistant(f"{WORD} delta", tool_calls=[("t1", "event_search", {"query": WORD})])
    sb.branch(ids["b"])
    ids["e"] = sb.user(f"{WORD} echo")
    ids["f"] = sb.assistant(f"{WORD} foxtrot")
    return sb, ids


async def _search(client: Any, sb: SessionBuilder, cutoff: str | None,
                  **filters: Any) -> dict[str, tuple[str, str]]:
    params: dict[str, Any] = {"query": WORD, "limit": 50,
                              "filters": {"sessionId": sb.session_id, **filters}}
    if cutoff is not None:
        params["currentSession"] = {"sessionId": sb.session_id, "cutoff": cutoff}
    res = await client.protocol.send_request_async("piEvents/search", params)
    return {h["entryId"]: (h["branchState"], h["selectionState"]) for h in res["hits"]}


async def test_search_states_and_filters_as_of_the_cutoff(start: Start, pi_home: PiHome,
                                                          tmp_path: Path) -> None:
    sb, ids = _session(pi_home, str(tmp_path))
    client = await start([str(tmp_path)])
    whole = await _search(client, sb, None)
    assert whole[ids["c"]] == ("alternate", "not-selected")  # the file as a whole
    own = await _search(client, sb, ids["d"])
    assert set(own) == {ids["a"], ids["b"], ids["c"]}
    assert all(state == ("selected", "direct") for state in own.values()), own
    assert await _search(client, sb, ids["d"], branchState=["alternate"]) == {}
    assert set(await _search(client, sb, ids["d"], branchState=["selected"],
                             selectionState=["direct"])) == {ids["a"], ids["b"], ids["c"]}
    assert set(await _search(client, sb, None, branchState=["alternate"])) == {ids["c"], ids["d"]}
    # A cutoff not indexed (yet): every indexed entry precedes it, the last one is the leaf.
    unknown = await _search(client, sb, "0badc0de")
    assert unknown[ids["c"]] == ("alternate", "not-selected") and len(unknown) == 6


async def test_read_and_trace_states_as_of_the_cutoff(start: Start, pi_home: PiHome,
                                                      tmp_path: Path) -> None:
    sb, ids = _session(pi_home, str(tmp_path))
    client = await start([str(tmp_path)])
    me = {"currentSession": {"sessionId": sb.session_id, "cutoff": ids["d"]}}

    async def call(method: str, entry: str, own: bool, **extra: Any) -> Any:
        params = {"ref": f"pi-event:{sb.session_id}/{entry}", **extra, **(me if own else {})}
        return await client.protocol.send_request_async(method, params)

    read = await call("piEvents/read", ids["c"], True)
    assert (read["event"]["branchState"], read["event"]["selectionState"]) == ("selected", "direct")
    assert (await call("piEvents/read", ids["c"], False))["event"]["branchState"] == "alternate"

    # Branch order from b follows the path of the cutoff's conversation, to c, with no fork.
    nb = (await call("piEvents/read", ids["b"], True, order="branch", after=5))["neighbours"]
    assert [(n["entryId"], n["branchState"]) for n in nb["after"]] == [(ids["c"], "selected")]
    assert nb["alternatives"] == [] and nb["stoppedAtFork"] is False
    whole = (await call("piEvents/read", ids["b"], False, order="branch", after=5))["neighbours"]
    assert [n["entryId"] for n in whole["after"]] == [ids["e"], ids["f"]]

    traced = await call("piEvents/trace", ids["c"], True)
    assert traced["event"]["branchState"] == "selected"
    assert (traced["towardLeaf"], traced["towardLeafRef"]) == (
        "self", f"pi-event:{sb.session_id}/{ids['c']}")
    assert (await call("piEvents/trace", ids["c"], False))["towardLeaf"] == "parent"
    up = await call("piEvents/trace", ids["b"], True)
    assert [c["entryId"] for c in up["children"]] == [ids["c"]]
    assert up["towardLeafRef"] == f"pi-event:{sb.session_id}/{ids['c']}"
