"""piEvents/eventAt through the real server: the event at a line of a session file, named as the
index names it (the clients no longer parse JSONL)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from builder import SessionBuilder, sample_session


async def event_at(client: Any, **params: Any) -> Any:
    return await client.protocol.send_request_async("piEvents/eventAt", params)


def entry_lines(path: Path) -> list[int]:
    """0-based lines of the file that hold an entry (JSON objects after the header)."""
    out = []
    for n, raw in enumerate(path.read_text().splitlines()):
        try:
            obj = json.loads(raw)
        except ValueError:
            continue
        if n > 0 and isinstance(obj, dict):
            out.append(n)
    return out


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    p = tmp_path / "proj"
    p.mkdir()
    return p


async def test_every_line_of_a_session(start, pi_home, proj):
    sb = sample_session(pi_home.sessions, str(proj))
    client = await start([str(proj)], {"watch": False})
    assert await event_at(client, uri=sb.path.as_uri(), line=0) == {"ref": None}  # the header
    lines = entry_lines(sb.path)
    assert len(lines) == len(sb.ids)
    for line, entry_id in zip(lines, sb.ids, strict=True):
        got = await event_at(client, uri=sb.path.as_uri(), line=line)
        assert got["ref"] == f"pi-event:{sb.session_id}/{entry_id}", line
        assert got["sessionId"] == sb.session_id and got["entryId"] == entry_id
        assert got["source"]["line"] == line + 1 and got["source"]["path"] == str(sb.path)
    assert await event_at(client, path=str(sb.path), line=lines[2]) == \
        await event_at(client, uri=sb.path.as_uri(), line=lines[2])
    assert await event_at(client, path=str(sb.path), line=len(lines) + 5) == {"ref": None}


async def test_names_are_the_index_names(start, pi_home, proj):
    """v1 ordinals skip a broken line, and a repeated id gets its `~<n>`: a client deriving either
    from line numbers or from the line's own id got both wrong."""
    v1 = SessionBuilder(pi_home.sessions, str(proj), version=None)
    v1.user("first question")
    v1.write_raw(b'{"type":"message", broken\n')
    v1.user("second question")
    v3 = SessionBuilder(pi_home.sessions, str(proj))
    first = v3.user("hello")
    v3.write_raw(SessionBuilder.dumps({"type": "message", "id": first, "parentId": first,
                                       "timestamp": v3.tick(), "message": {
                                           "role": "user", "content": "again", "timestamp": 1}})
                 + b"\n")
    client = await start([str(proj)], {"watch": False})
    got = [(await event_at(client, path=str(v1.path), line=n))["ref"] for n in (1, 2, 3)]
    assert got == [f"pi-event:{v1.session_id}/v1~1", None, f"pi-event:{v1.session_id}/v1~2"]
    again = (await event_at(client, path=str(v3.path), line=2))["entryId"]
    assert again.startswith(f"{first}~") and again != first
    read = await client.protocol.send_request_async("piEvents/read", {
        "ref": f"pi-event:{v3.session_id}/{again}", "before": 0, "after": 0})
    assert read["source"]["line"] == 3 and "again" in read["fragments"][0]["text"]


async def test_authorization_links_and_changes(start, pi_home, proj, tmp_path):
    inside = sample_session(pi_home.sessions, str(proj))
    outside = sample_session(pi_home.sessions, str(tmp_path / "elsewhere"))
    mine = sample_session(pi_home.sessions, str(proj))
    client = await start([str(proj)], {"watch": False, "currentSession": {
        "sessionId": mine.session_id, "cutoff": mine.ids[4]}})
    line = entry_lines(inside.path)[3]
    want = f"pi-event:{inside.session_id}/{inside.ids[3]}"
    assert (await event_at(client, path=str(inside.path), line=line))["ref"] == want
    # not visible: the same answer as no event at all
    assert await event_at(client, path=str(outside.path), line=line) == {"ref": None}
    mine_lines = entry_lines(mine.path)
    assert (await event_at(client, path=str(mine.path), line=mine_lines[3]))["ref"]
    assert await event_at(client, path=str(mine.path), line=mine_lines[4]) == {"ref": None}
    # the same file through a linked directory
    link = tmp_path / "linked"
    os.symlink(inside.path.parent, link)
    via = link / inside.path.name
    assert (await event_at(client, uri=via.as_uri(), line=line))["ref"] == want
    # documents that are no session file, or no file at all
    assert await event_at(client, path=str(tmp_path / "nope.jsonl"), line=1) == {"ref": None}
    assert await event_at(client, uri="untitled:Untitled-1", line=1) == {"ref": None}
    # a file rewritten since it was indexed answers nothing for the changed line
    raw = inside.path.read_text().splitlines(keepends=True)
    raw[line] = raw[line].replace('"timestamp"', '"timestamp" ', 1)
    inside.path.write_text("".join(raw))
    assert await event_at(client, path=str(inside.path), line=line) == {"ref": None}


BAD = [
    ({"line": 1}, "give uri or path"),
    ({"uri": "file:///a.jsonl", "path": "/a.jsonl", "line": 1}, "give uri or path"),
    ({"path": "/a.jsonl"}, "line is required"),
    ({"path": "/a.jsonl", "line": -1}, "line must be"),
    ({"path": "/a.jsonl", "line": "3"}, "line must be"),
    ({"path": "relative.jsonl", "line": 1}, "path must be absolute"),
    ({"path": "/a\u0000b", "line": 1}, "path must be absolute"),
    ({"uri": 7, "line": 1}, "uri must be a string"),
]


async def test_bad_params(start, proj):
    client = await start([str(proj)], wait_indexed=False)
    for params, message in BAD:
        with pytest.raises(JsonRpcException) as err:
            await event_at(client, **params)
        assert err.value.code == -32602 and message in err.value.message, params
