"""Issue 18 through the real server: piEvents/fileHistory and piEvents/lineOrigin on sessions
written by Pi's own SessionManager (tests/piwriter/write-file-history.mjs, Pi's real edit and
write argument shapes), and on the scenario sessions of tests/piwriter/write-sessions.mjs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as t
from pygls.exceptions import JsonRpcException

from builder import SessionBuilder
from piwriter import by_scenario, piwriter_unavailable, run_piwriter, write_pi_sessions
from support import PiHome

FINAL = [
    'import { backoff } from "./backoff";',  # 0: A's write
    "",  # 1: blank
    "export function reconnect(attempt = 0) {",  # 2: B's edit (edits array)
    "  const delay = backoff(attempt) + jitter();",  # 3: C (legacy shape), before it B
    "  setTimeout(open, delay);",  # 4: A's write (C only carried it as context)
    "  return delay; // milliseconds",  # 5: H (edits as a JSON string)
    "}",  # 6: a lone brace
    "// written by hand, never by Pi",  # 7: nobody
]


@pytest.fixture
def world(pi_home: PiHome, tmp_path: Path) -> dict[str, Any]:
    reason = piwriter_unavailable()
    if reason is not None:
        pytest.skip(reason)
    proj, other, outside = tmp_path / "proj", tmp_path / "proj-copy", tmp_path / "elsewhere"
    for d in (proj / "src", other / "src", outside):
        d.mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(proj)
    (proj / "src" / "ws.ts").write_text("\n".join(FINAL) + "\n")
    (other / "src" / "ws.ts").write_text("\n".join(FINAL) + "\n")
    out = tmp_path / "file-history.json"
    run_piwriter("write-file-history.mjs", str(pi_home.sessions), str(proj), str(other),
                 str(outside), str(link), str(out))
    oracle: dict[str, Any] = json.loads(out.read_text())
    return {"tmp": tmp_path, "proj": proj, "other": other, "file": proj / "src" / "ws.ts",
            **oracle}


async def request(client: Any, method: str, params: dict[str, Any]) -> Any:
    return await client.protocol.send_request_async(method, params)


def ref(world: dict[str, Any], mark: str) -> str:
    return f"pi-event:{world['sessions'][mark[0]]}/{world['marks'][mark]}"


async def origin(client: Any, path: Path, line: int) -> dict[str, Any]:
    result: dict[str, Any] = await request(client, "piEvents/lineOrigin",
                                           {"uri": path.as_uri(), "line": line})
    return result


async def test_history_order_and_relations(start, world):
    client = await start([str(world["proj"])])
    res = await request(client, "piEvents/fileHistory", {"uri": world["file"].as_uri()})
    got = [(h["ref"], h["relation"], h["label"]) for h in res["hits"]]
    assert got == [
        (ref(world, "H_edit"), "file-changed", "derived"),
        (ref(world, "D_failed"), "file-changed", "derived"),
        (ref(world, "C_edit"), "file-changed", "derived"),
        (ref(world, "B_compaction"), "file-changed", "recorded"),
        (ref(world, "B_edit"), "file-changed", "derived"),
        (ref(world, "A_write"), "file-changed", "derived"),
        (ref(world, "G_read"), "file-read", "derived"),  # recorded under a symlink to proj
        (ref(world, "A_read"), "file-read", "derived"),
    ]
    assert res["counts"] == {"changed": 6, "read": 2} and res["nextCursor"] is None
    by_ref = {h["ref"]: h for h in res["hits"]}
    c_edit = by_ref[ref(world, "C_edit")]
    assert c_edit["fragmentId"] == "tool.call:0" and c_edit["kind"] == "tool.call"
    start_, end = c_edit["matches"][0]
    assert c_edit["snippet"][start_:end] == "./src/ws.ts"
    assert by_ref[ref(world, "B_compaction")]["kind"] == "summary.compaction"
    assert c_edit["source"]["path"].endswith(f"{world['sessions']['C']}.jsonl")
    # pages: the same order, a cursor that continues it
    page1 = await request(client, "piEvents/fileHistory", {"uri": world["file"].as_uri(),
                                                            "limit": 5})
    page2 = await request(client, "piEvents/fileHistory", {"uri": world["file"].as_uri(),
                                                            "limit": 5,
                                                            "cursor": page1["nextCursor"]})
    assert [h["ref"] for h in page1["hits"] + page2["hits"]] == [r for r, _, _ in got]
    assert page2["nextCursor"] is None
    # a file Pi never touched: nothing, and no error
    (world["proj"] / "README.md").write_text("hello\n")
    empty = await request(client, "piEvents/fileHistory",
                          {"uri": (world["proj"] / "README.md").as_uri()})
    assert empty == {"hits": [], "nextCursor": None, "counts": {"changed": 0, "read": 0}}


async def test_authorization_and_other_checkouts(start, world):
    client = await start([str(world["proj"])])
    res = await request(client, "piEvents/fileHistory", {"uri": world["file"].as_uri()})
    sessions = {h["sessionId"] for h in res["hits"]}
    assert world["sessions"]["F"] not in sessions  # outside the root
    assert world["sessions"]["E"] not in sessions  # another checkout
    other = await request(client, "piEvents/fileHistory",
                          {"uri": (world["other"] / "src" / "ws.ts").as_uri()})
    assert other["hits"] == [] and other["counts"] == {"changed": 0, "read": 0}
    line3 = await origin(client, world["file"], 3)
    assert line3["hit"]["ref"] == ref(world, "C_edit")
    # Everything visible: the outside session wrote the line last (by absolute path); the other
    # checkout is still a different file.
    wide = await start([str(world["tmp"])])
    everything = await request(wide, "piEvents/fileHistory", {"uri": world["file"].as_uri()})
    assert {h["sessionId"] for h in everything["hits"]} == set(world["sessions"].values()) - {
        world["sessions"]["E"], world["sessions"]["I"]}
    line3 = await origin(wide, world["file"], 3)
    assert line3["hit"]["ref"] == ref(world, "F_edit")
    assert [c["ref"] for c in line3["candidates"]] == [ref(world, "C_edit"), ref(world, "B_edit")]
    copy = await origin(wide, world["other"] / "src" / "ws.ts", 3)
    assert copy["hit"]["ref"] == ref(world, "E_edit") and copy["candidates"] == []


async def test_line_origin(start, world):
    client = await start([str(world["proj"])])
    f = world["file"]
    write = await origin(client, f, 0)  # written by a `write`
    assert write["hit"]["ref"] == ref(world, "A_write") and write["candidates"] == []
    assert write["hit"]["fragmentId"] == "tool.call:1"
    assert write["hit"]["relation"] == "file-changed"
    s, e = write["hit"]["matches"][0]
    assert write["hit"]["snippet"][s:e] == FINAL[0]
    edit = await origin(client, f, 2)  # an `edit` with an edits array
    assert edit["hit"]["ref"] == ref(world, "B_edit") and edit["candidates"] == []
    twice = await origin(client, f, 3)  # newer wins, the older is a candidate; D failed
    assert twice["hit"]["ref"] == ref(world, "C_edit")
    assert [c["ref"] for c in twice["candidates"]] == [ref(world, "B_edit")]
    context = await origin(client, f, 4)  # C carried this line as context: A wrote it
    assert context["hit"]["ref"] == ref(world, "A_write")
    string_shape = await origin(client, f, 5)
    assert string_shape["hit"]["ref"] == ref(world, "H_edit")
    for line in (1, 6):
        assert await origin(client, f, line) == {"hit": None, "candidates": [],
                                                 "reason": "trivial"}
    assert await origin(client, f, 7) == {"hit": None, "candidates": [], "reason": "unknown"}
    # a write longer than the index keeps: the middle line is found in the session file
    big = world["proj"] / "src" / "big.ts"
    big.write_text("".join(f'export const filler{i} = "{"x" * 20}";\n' for i in range(3000)))
    middle = await origin(client, big, 1500)
    assert middle["hit"]["ref"] == ref(world, "I_write")
    # the editor's unsaved text is what counts
    client.text_document_did_open(t.DidOpenTextDocumentParams(t.TextDocumentItem(
        uri=f.as_uri(), language_id="typescript", version=1,
        text="export function reconnect(attempt = 0) {\n")))
    opened = await origin(client, f, 0)
    assert opened["hit"]["ref"] == ref(world, "B_edit")


async def test_renamed_and_missing_files(start, world):
    client = await start([str(world["proj"])])
    moved = world["proj"] / "src" / "socket.ts"
    world["file"].rename(moved)
    # history is by path: the new name has none, the old one keeps its events
    res = await request(client, "piEvents/fileHistory", {"uri": moved.as_uri()})
    assert res["hits"] == []
    old = await request(client, "piEvents/fileHistory", {"uri": world["file"].as_uri()})
    assert len(old["hits"]) == 8
    assert (await origin(client, moved, 3)) == {"hit": None, "candidates": [],
                                               "reason": "unknown"}
    with pytest.raises(JsonRpcException) as info:
        await origin(client, world["file"], 3)
    assert info.value.code == -32602 and "cannot read" in info.value.message
    with pytest.raises(JsonRpcException) as info:
        await origin(client, moved, 99)
    assert info.value.code == -32602 and "past the end" in info.value.message
    for bad in ({"uri": "untitled:1", "line": 0}, {"uri": moved.as_uri()},
                {"uri": moved.as_uri(), "line": -1}, {"line": 0}):
        with pytest.raises(JsonRpcException) as info:
            await request(client, "piEvents/lineOrigin", bad)
        assert info.value.code == -32602
    with pytest.raises(JsonRpcException) as info:
        await request(client, "piEvents/fileHistory", {"uri": moved.as_uri(), "cursor": "x"})
    assert info.value.code == -32002


async def test_pi_scenario_shapes(start, pi_home, tmp_path):
    """Pi's own a-linear scenario: an edit with two replacements and a write, in a project that
    exists only in the editor (open documents)."""
    oracle = write_pi_sessions(pi_home.sessions)
    rec = by_scenario(oracle, "a-linear")
    client = await start(["/home/dev/proj"])
    a2 = f"pi-event:{rec['sessionId']}/{rec['marks']['a2']}"
    a1 = f"pi-event:{rec['sessionId']}/{rec['marks']['a1']}"
    ws = "file:///home/dev/proj/src/ws.ts"
    hist = await request(client, "piEvents/fileHistory", {"uri": ws})
    assert [(h["ref"], h["relation"]) for h in hist["hits"]] == [(a2, "file-changed"),
                                                                (a1, "file-read")]
    for uri, text in ((ws, "export function reconnect(attempt = 0) {\n"
                           "  setTimeout(open, backoff(attempt));\n}\n"),
                      ("file:///home/dev/proj/src/backoff.ts",
                       "export const backoff = (n: number) => Math.min(30000, 250 * 2 ** n);\n")):
        client.text_document_did_open(t.DidOpenTextDocumentParams(t.TextDocumentItem(
            uri=uri, language_id="typescript", version=1, text=text)))
    for uri, line, frag in ((ws, 0, "tool.call:1"), (ws, 1, "tool.call:1"),
                            ("file:///home/dev/proj/src/backoff.ts", 0, "tool.call:2")):
        res = await request(client, "piEvents/lineOrigin", {"uri": uri, "line": line})
        assert res["hit"]["ref"] == a2 and res["hit"]["fragmentId"] == frag, (uri, line)


async def test_fork_copies_count_once(start, pi_home, tmp_path):
    """A fork copies the edit with its entry id and timestamp: history lists both sessions'
    events, the line's origin is the original, and the copy is no older candidate."""
    proj = tmp_path / "proj"
    (proj / "src").mkdir(parents=True)
    f = proj / "src" / "ws.ts"
    f.write_text("  const delay = backoff(attempt);\n")
    parent = SessionBuilder(pi_home.sessions, str(proj))
    parent.user("use backoff")
    edit = parent.assistant(tool_calls=[("e1", "edit", {"path": "src/ws.ts", "edits": [
        {"oldText": "  const delay = 1000;", "newText": "  const delay = backoff(attempt);"}]})])
    parent.tool_result("e1", "edit", "ok")
    child = parent.fork(pi_home.sessions)
    child.user("and now jitter")
    client = await start([str(proj)])
    hist = await request(client, "piEvents/fileHistory", {"uri": f.as_uri()})
    assert {(h["sessionId"], h["entryId"]) for h in hist["hits"]} == {
        (parent.session_id, edit), (child.session_id, edit)}
    res = await origin(client, f, 0)
    assert res["hit"]["ref"] == f"pi-event:{parent.session_id}/{edit}" and res["candidates"] == []
