"""`filters.excludeTool`: calls and results of these tools never match; the other fragments of the
same event still do (the Pi extension leaves out its own tools, whose answers repeat old hits)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from builder import SessionBuilder
from lsp.conftest import Start
from support import PiHome

WORD = "okapi"


async def _hits(client: Any, **filters: Any) -> dict[str, str]:
    res = await client.protocol.send_request_async(
        "piEvents/search", {"query": WORD, "filters": filters})
    return {h["entryId"]: h["fragmentId"] for h in res["hits"]}


async def test_excluded_tools_never_match(start: Start, pi_home: PiHome, tmp_path: Path) -> None:
    sb = SessionBuilder(pi_home.sessions, str(tmp_path))
    sb.user("where is the zoo")
    calls = sb.assistant(None, tool_calls=[("c1", "event_search", {"query": WORD}),
                                           ("c2", "bash", {"command": f"grep -r {WORD} ."})])
    echo = sb.tool_result("c1", "event_search", f"1 hit for {WORD}: an old {WORD} snippet")
    failed = sb.tool_result("c1", "event_search", f"no index for {WORD}", is_error=True)
    grep = sb.tool_result("c2", "bash", f"zoo.txt: {WORD}")
    client = await start([str(tmp_path)])
    everything = await _hits(client)
    assert set(everything) == {calls, echo, failed, grep}
    ours = ["event_search", "event_read", "event_trace"]
    assert await _hits(client, excludeTool=ours) == {calls: "tool.call:1", grep: "tool.result:0"}
    assert await _hits(client, excludeTool="bash") == {calls: "tool.call:0", echo: "tool.result:0",
                                                       failed: "tool.result:0"}
    # The empty query lists the newest events: the same rule picks their evidence.
    res = await client.protocol.send_request_async(
        "piEvents/search", {"query": "", "filters": {"excludeTool": ours, "kind": ["tool.result"]}})
    assert [h["entryId"] for h in res["hits"]] == [grep]
