"""`pi-event-search mcp` driven by the MCP SDK's own stdio client: the real server process, a real
index, real-shaped Pi sessions (tests/builder.py). Tools, their answers, roots and a roots change,
errors, Pi's own session left out, and no planted credential in any answer (issue 47: its six
shapes neither, and a `file` argument of a credential's shape answers alike for any value of it)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import re
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

mcp = pytest.importorskip("mcp")

import mcp_types as types  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402

from builder import SessionBuilder  # noqa: E402
from secretcorpus import (  # noqa: E402
    issue47_six,
    oracle_other,
    oracle_token,
    write_file_session,
    write_session,
)
from support import PiHome  # noqa: E402
from test_secrets import leaked  # noqa: E402

REF = re.compile(r"pi-event:[A-Za-z0-9._-]+/[A-Za-z0-9._~-]+")


def _project(tmp: Path, name: str) -> Path:
    path = tmp / name
    path.mkdir()
    return path.resolve()


@asynccontextmanager
async def connect(home: PiHome, cwd: Path, *, roots: list[Path] | None = None,
                  client: str = "test-agent", args: tuple[str, ...] = (),
                  env: dict[str, str] | None = None) -> AsyncIterator[tuple[Client, list[Path]]]:
    """The SDK client on the server's stdio. `roots` (a list the test may change) are declared
    with the roots capability; None: the client declares none."""
    declared = roots

    async def list_roots(_ctx: Any) -> types.ListRootsResult:
        assert declared is not None
        return types.ListRootsResult(roots=[types.Root(uri=p.as_uri(), name=p.name)
                                            for p in declared])

    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "pi_event_search", "mcp", *args],
                                   env={**home.env(), **(env or {})}, cwd=str(cwd))
    async with Client(params, mode="legacy", list_roots_callback=list_roots if roots is not None
                      else None, client_info=types.Implementation(name=client, version="1")) as c:
        yield c, (declared if declared is not None else [])


def text(result: types.CallToolResult) -> str:
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


async def ok(c: Client, tool: str, args: dict[str, Any]) -> str:
    result = await c.call_tool(tool, args)
    body = text(result)
    assert not result.is_error, body
    assert body.startswith("[pi-event-search: recorded history") and \
        re.search(r"\n\[end of recorded history [0-9a-f]{16}\]$", body), body
    return body


async def failed(c: Client, tool: str, args: dict[str, Any]) -> str:
    result = await c.call_tool(tool, args)
    assert result.is_error, text(result)
    return text(result)


def _two_projects(home: PiHome, tmp: Path) -> tuple[Path, Path, SessionBuilder, SessionBuilder]:
    mine, other = _project(tmp, "mine"), _project(tmp, "other")
    a = SessionBuilder(home.sessions, str(mine))
    a.session_info("websocket reconnect work")
    a.user("the websocket reconnect test is flaky")
    a.assistant(tool_calls=[("c1", "bash", {"command": "npm test -- ws"})])
    a.tool_result("c1", "bash", "FAIL ws.test.ts: ECONNRESET while reconnecting", is_error=True)
    a.assistant("fixed: reconnect waits for the close event before dialing again")
    b = SessionBuilder(home.sessions, str(other))
    b.user("the websocket reconnect in the other project")
    b.assistant("other project answer about reconnect")
    return mine, other, a, b


async def test_tools_listed_read_only(pi_home, tmp_path):
    mine = _project(tmp_path, "mine")
    async with connect(pi_home, mine) as (c, _):
        listed = await c.list_tools()
    names = {t.name for t in listed.tools}
    assert names == {"event_search", "event_read", "event_trace", "event_sessions"}
    for tool in listed.tools:
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
        assert tool.annotations.destructive_hint is False
        assert tool.input_schema["type"] == "object" and tool.description
        # No argument reveals a credential, and none names a root: the roots are the client's.
        props = set(tool.input_schema["properties"])
        assert not props & {"revealSecrets", "reveal", "roots", "root", "all", "cwd"}
    search = next(t for t in listed.tools if t.name == "event_search")
    assert search.input_schema["required"] == ["query"]
    assert search.input_schema["properties"]["groupBy"]["enum"] == ["session"]


async def test_search_read_trace_sessions(pi_home, tmp_path):
    mine, _other, a, b = _two_projects(pi_home, tmp_path)
    async with connect(pi_home, mine) as (c, _):  # no roots declared: the working directory
        found = await ok(c, "event_search", {"query": "reconnect"})
        assert f"sessions of {mine}, current session excluded" in found
        assert "«reconnect" in found or "«reconnecting" in found
        refs = REF.findall(found)
        assert refs and all(a.session_id in r for r in refs)
        assert b.session_id not in found and "other project" not in found

        errors = await ok(c, "event_search", {"query": "ECONNRESET", "errors": True,
                                              "kinds": ["tool.result"], "tool": "bash"})
        hit = REF.findall(errors)[0]
        assert "tool.result bash error" in errors

        grouped = await ok(c, "event_search", {"query": "reconnect", "groupBy": "session"})
        assert grouped.count("\n[1] ") == 1 and "[2] " not in grouped
        assert '"websocket reconnect work"' in grouped and "events match" in grouped

        read = await ok(c, "event_read", {"ref": hit, "before": 2, "after": 1})
        assert "FAIL ws.test.ts: ECONNRESET while reconnecting" in read
        assert "before (append order):" in read and f"{a.path}" in read
        # The ref as a model quotes it: in backticks, with a fragment.
        quoted = await ok(c, "event_read", {"ref": f"`{hit}#tool.result:0`"})
        assert "[tool.result:0] characters 0-" in quoted

        traced = await ok(c, "event_trace", {"ref": hit})
        assert traced.splitlines()[1].startswith(f"trace {hit}")
        assert "parent: pi-event:" in traced and "toward leaf:" in traced

        # "flaky" is only in the first prompt; the other events are partial hits, said as such
        partial = await ok(c, "event_search", {"query": "reconnect ECONNRESET flaky"})
        assert "(partial: matched 2 of 3 words; missing: flaky)" in partial, partial
        assert "No events match" in await ok(c, "event_search", {"query": "reconnect ECONNRESET flaky",
                                                                  "exact": True})

        listed = await ok(c, "event_sessions", {})
        assert "1 session (" in listed and a.session_id in listed and b.session_id not in listed
        first = REF.findall(listed)[0]
        opened = await ok(c, "event_read", {"ref": first, "order": "branch", "after": 20})
        assert "the websocket reconnect test is flaky" in opened


async def test_cursor_pages(pi_home, tmp_path):
    mine = _project(tmp_path, "mine")
    sb = SessionBuilder(pi_home.sessions, str(mine))
    for n in range(7):
        sb.user(f"paging marker quokka number {n}")
    async with connect(pi_home, mine) as (c, _):
        first = await ok(c, "event_search", {"query": "quokka", "limit": 4})
        cursor = re.search(r'with cursor "([^"]+)"', first)
        assert cursor, first
        second = await ok(c, "event_search", {"query": "quokka", "limit": 4,
                                              "cursor": cursor[1]})
        page1, page2 = set(REF.findall(first)), set(REF.findall(second))
        assert len(page1) == 4 and len(page2) == 3 and not page1 & page2
        assert "with cursor" not in second


async def test_roots_and_a_roots_change(pi_home, tmp_path):
    mine, other, a, b = _two_projects(pi_home, tmp_path)
    elsewhere = _project(tmp_path, "elsewhere")
    # The server runs elsewhere: only the declared roots count.
    async with connect(pi_home, elsewhere, roots=[mine]) as (c, roots):
        seen = await ok(c, "event_search", {"query": "reconnect"})
        assert a.session_id in seen and b.session_id not in seen
        other_ref = f"pi-event:{b.session_id}/{b.ids[0]}"
        assert "not visible from this project" in await failed(c, "event_read", {"ref": other_ref})
        roots[:] = [other]
        with pytest.warns(Warning):  # the SDK marks roots deprecated for protocol 2026-07-28
            await c.send_roots_list_changed()
        with pytest.warns(Warning):  # ping too: requests are answered in order after it
            await c.send_ping()
        seen = await ok(c, "event_search", {"query": "reconnect"})
        assert b.session_id in seen and a.session_id not in seen
        assert f"sessions of {other}" in seen
        assert "other project answer" in await ok(c, "event_read", {"ref": other_ref})
        gone = f"pi-event:{a.session_id}/{a.ids[1]}"
        assert "not found" in (await failed(c, "event_trace", {"ref": gone})).lower()


async def test_fixed_root_ignores_the_client(pi_home, tmp_path):
    mine, other, a, b = _two_projects(pi_home, tmp_path)
    async with connect(pi_home, mine, roots=[other], args=("--root", str(mine))) as (c, _):
        seen = await ok(c, "event_search", {"query": "reconnect", "sessionId": b.session_id})
        assert "No events match" in seen
        assert "not visible" in await failed(
            c, "event_read", {"ref": f"pi-event:{b.session_id}/{b.ids[0]}"})
        assert a.session_id in await ok(c, "event_search", {"query": "reconnect"})


async def test_bad_arguments_are_clear_tool_errors(pi_home, tmp_path):
    mine, _other, a, _b = _two_projects(pi_home, tmp_path)
    async with connect(pi_home, mine) as (c, _):
        cases: list[tuple[str, dict[str, Any], str]] = [
            ("event_search", {"query": "x", "limit": 500}, "limit must be an integer in 1..50"),
            ("event_search", {"query": "x", "since": "last tuesday"},
             "Invalid arguments: since: not an ISO date or time"),
            ("event_search", {"query": "x", "until": 5}, "until must be a string"),
            ("event_search", {"query": 5}, "query must be a string"),
            ("event_search", {"query": "x" * 5000}, "Query too long"),
            ("event_search", {"query": " ".join(["word"] * 65)},
             "Query too long: 65 words or quoted phrases (at most 64)"),
            ("event_search", {"query": "x", "groupBy": "day"}, "groupBy"),
            ("event_search", {"query": "x", "exact": "yes"}, "exact must be true or false"),
            ("event_search", {"query": "x", "kinds": ["nonsense"]}, "kinds must be a list of"),
            ("event_search", {"query": "x", "roots": ["/"]}, "unknown argument roots"),
            ("event_search", {}, "query is required"),
            ("event_search", {"query": "x", "cursor": "garbage"}, "Search again without cursor"),
            ("event_unknown", {}, "Unknown tool 'event_unknown'"),
            ("event_read", {"ref": "not a ref"}, "not an event reference"),
            ("event_read", {"ref": f"pi-event:{a.session_id}/{a.ids[0]}", "before": 99},
             "before must be an integer in 0..20"),
            ("event_trace", {"ref": 7}, "ref is required"),
            ("event_sessions", {"limit": 0}, "limit must be an integer in 1..50"),
        ]
        for tool, args, said in cases:
            message = await failed(c, tool, args)
            assert said in message, (tool, args, message)
            assert "Traceback" not in message
        missing = await failed(c, "event_read", {"ref": f"pi-event:{a.session_id}/nosuchentry"})
        assert "not visible from this project" in missing
        # Still serving after every one of them.
        assert a.session_id in await ok(c, "event_search", {"query": "reconnect"})


def _pi_session(home: PiHome, cwd: Path) -> tuple[SessionBuilder, str, dict[str, Any]]:
    """A Pi session in progress: its last assistant entry calls this server's event_search."""
    sb = SessionBuilder(home.sessions, str(cwd))
    sb.user("find where we fixed the wombat migration")
    sb.assistant("wombat migration notes written before the call")
    args = {"query": "wombat"}
    call = sb.assistant(tool_calls=[("mcp1", "mcp__pi_events__event_search", args)])
    return sb, call, args


async def test_pi_current_session_left_out(pi_home, tmp_path):
    mine = _project(tmp_path, "mine")
    old = SessionBuilder(pi_home.sessions, str(mine))
    old.user("the wombat migration from last week")
    async with connect(pi_home, mine, roots=[mine], client="pi") as (c, _):
        cur, call, args = _pi_session(pi_home, mine)
        seen = await ok(c, "event_search", args)
        assert old.session_id in seen and cur.session_id not in seen
        # Named, it is searched before the call only (the entry holding the call is the cutoff).
        own = await ok(c, "event_search", {"query": "wombat", "sessionId": cur.session_id})
        assert "the current session, before this call" in own
        assert "notes written before the call" in own
        after = f"pi-event:{cur.session_id}/{call}"
        assert "not visible" in await failed(c, "event_read", {"ref": after})
        listed = await ok(c, "event_sessions", {})
        assert old.session_id in listed and cur.session_id not in listed
    # Another agent's client is not Pi: nothing of Pi's is its own session.
    async with connect(pi_home, mine, roots=[mine]) as (c, _):
        assert cur.session_id in await ok(c, "event_search", {"query": "wombat"})


async def test_no_planted_credential_reaches_the_client(pi_home, tmp_path):
    proj = _project(tmp_path, "proj")
    _sb, items, _ = write_session(pi_home.sessions, str(proj), random.Random(os.urandom(8)))
    answers: list[str] = []
    async with connect(pi_home, proj, roots=[proj]) as (c, _):
        refs: set[str] = set()
        for query in ("", "key", "token", "redacted", "zephyrine", "password", "bearer", "env"):
            found = await ok(c, "event_search", {"query": query, "limit": 50})
            answers += [found, await ok(c, "event_search", {"query": query, "groupBy": "session"})]
            refs.update(REF.findall(found))
        answers.append(await ok(c, "event_search", {"query": "", "limit": 50,
                                                    "kinds": ["tool.result"]}))
        assert len(refs) > 20
        for ref in sorted(refs):
            answers.append(await ok(c, "event_read", {"ref": ref, "before": 3, "after": 3,
                                                      "length": 100000}))
            answers.append(await ok(c, "event_trace", {"ref": ref}))
        answers.append(await ok(c, "event_sessions", {}))
    body = "\n".join(answers)
    for p in items:
        assert not leaked(p.value, body), p.kind
    assert "[redacted: private-key]" in body and "[redacted: jwt]" in body
    assert "\x1b" not in body and "\x07" not in body


BOUNDARY = re.compile(r"\b[0-9a-f]{16}\b")  # the frame's boundary, drawn for each answer


async def test_issue47_shapes_and_the_path_oracle(pi_home, tmp_path):
    rng = random.Random(os.urandom(8))
    proj = _project(tmp_path, "proj")
    _sb, items, _ = write_session(pi_home.sessions, str(proj), rng)
    six = issue47_six(items)
    assert len(six) == 6
    token = oracle_token(rng)
    other = oracle_other(token)
    write_file_session(pi_home.sessions, proj, token)
    answers: list[str] = []
    async with connect(pi_home, proj, roots=[proj]) as (c, _):
        alike: list[list[str]] = []
        for name in (token, other):
            asked = []
            for file in (f"keys/{name}.txt", f"{proj}/keys/{name}.txt"):
                asked += [await ok(c, "event_search", {"query": "", "file": file}),
                          await ok(c, "event_search", {"query": "quillwort", "file": file}),
                          await ok(c, "event_sessions", {"file": file})]
            body = "\n".join(asked)
            assert token not in body and other not in body, body
            alike.append([BOUNDARY.sub("-", a) for a in asked])
        assert alike[0] == alike[1]
        assert len(REF.findall(alike[0][0])) == 1 and "quillwort" in alike[0][2], alike[0]
        refs: set[str] = set()
        for query in ("", "redis", "cache", "DB_PASS", "SMTP_PASS", "SECRET_KEY_BASE", "rails",
                      "curl", "user app", "Authorization Basic", "redacted password"):
            found = await ok(c, "event_search", {"query": query, "limit": 50})
            answers.append(found)
            refs.update(REF.findall(found))
        for ref in sorted(refs):
            answers.append(await ok(c, "event_read", {"ref": ref, "before": 3, "after": 3,
                                                      "length": 100000}))
            answers.append(await ok(c, "event_trace", {"ref": ref}))
    body = "\n".join(answers)
    for p in six:
        assert not leaked(p.value, body), p.text
        assert p.text.split(p.value)[0] + "[redacted: " in body, p.text  # each was shown


def test_without_the_extra_says_how_to_get_it(tmp_path):
    """The SDK missing (an editor's install): one line naming the extra, exit status 2."""
    blocker = tmp_path / "block"
    blocker.mkdir()
    (blocker / "mcp.py").write_text("raise ImportError('blocked', name='mcp')\n")
    env = {**os.environ, "PYTHONPATH": str(blocker)}
    out = subprocess.run([sys.executable, "-m", "pi_event_search", "mcp"], env=env,
                         capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    # The one command that adds it: this environment's own pip, given the extra's requirement.
    assert f'"{sys.executable}" -m pip install "mcp<2.4,>=2.3"' in out.stderr, out.stderr




def test_pi_session_found_by_its_call(pi_home, tmp_path):
    """The call's own entry is the cutoff; an answered call with the same arguments is not; with
    the call not on disk yet, the newest session file of the roots and its last entry."""
    from pi_event_search.mcp import caller
    from pi_event_search.source.discovery import SessionDir

    mine, elsewhere = _project(tmp_path, "mine"), _project(tmp_path, "elsewhere")
    dirs = [SessionDir(str(pi_home.sessions), True)]
    start = time.time_ns()
    cur, call, args = _pi_session(pi_home, mine)
    noise = SessionBuilder(pi_home.sessions, str(elsewhere))  # newer, not under the roots
    noise.assistant(tool_calls=[("x", "mcp__pi_events__event_search", args)])
    found = caller.current_session(dirs, [str(mine)], start, "event_search", args)
    assert found == caller.Current(cur.session_id, call, str(cur.path), "mcp__pi_events__")
    assert caller.current_session(dirs, [str(mine)], start, "event_read", args).cutoff == call
    cur.tool_result("mcp1", "mcp__pi_events__event_search", "answered")
    last = cur.ids[-1]
    again = caller.current_session(dirs, [str(mine)], start, "event_search", args)
    assert again is not None and (again.session_id, again.cutoff, again.prefix) == \
        (cur.session_id, last, "")
    assert caller.current_session(dirs, [str(mine)], time.time_ns() + 10**12, "event_search",
                                  args) is None


async def test_concurrent_calls_each_get_their_answer(pi_home, tmp_path):
    """The SDK runs calls concurrently; the engine's reads run one at a time, each answered."""
    mine = _project(tmp_path, "mine")
    sb = SessionBuilder(pi_home.sessions, str(mine))
    words = [f"marker{n}word" for n in range(12)]
    for word in words:
        sb.user(f"a note about {word}")
    async with connect(pi_home, mine) as (c, _):
        answers = await asyncio.gather(*(ok(c, "event_search", {"query": w}) for w in words),
                                       ok(c, "event_sessions", {}),
                                       ok(c, "event_read", {"ref": f"pi-event:{sb.session_id}/"
                                                                   f"{sb.ids[0]}"}))
    for word, body in zip(words, answers, strict=False):
        assert f"1 hit for {json.dumps(word)}" in body and f"«{word}»" in body
    assert sb.session_id in answers[-2] and "a note about marker0word" in answers[-1]


async def test_two_servers_share_one_index(pi_home, tmp_path):
    """Two agents' servers on one index: one writes (indexes, watches), the other reads what it
    commits; a session Pi appends to later reaches both."""
    mine = _project(tmp_path, "mine")
    sb = SessionBuilder(pi_home.sessions, str(mine))
    sb.user("first note about the platypus")
    async with connect(pi_home, mine) as (one, _), connect(pi_home, mine) as (two, _):
        for c in (one, two):
            assert "platypus" in await ok(c, "event_search", {"query": "platypus"})
        sb.user("a later note about the echidna")
        loop = asyncio.get_running_loop()
        for c in (one, two):
            end = loop.time() + 60
            while "1 hit" not in (seen := await ok(c, "event_search", {"query": "echidna"})):
                assert loop.time() < end, seen
                await asyncio.sleep(0.2)
    assert [p.name for p in pi_home.index.parent.glob("*.sqlite3")
            if p.name != "meaning-v1.sqlite3"] == [pi_home.index.name]


async def test_the_writer_reads_its_events_ahead(pi_home, tmp_path):
    """The server that writes the index also reads its newest events ahead for their meaning
    (after 10 s, gently), keeping their vectors beside the index for every process: an agent's
    first search of two words then costs what the words' order does."""
    mine = _project(tmp_path, "mine")
    sb = SessionBuilder(pi_home.sessions, str(mine))
    for n in range(12):
        sb.user(f"note {n} about the platypus enclosure and its keeper")
    stored = pi_home.index.with_name("meaning-v1.sqlite3")
    async with connect(pi_home, mine) as (c, _):
        assert "platypus" in await ok(c, "event_search", {"query": "platypus"})  # one word: read by words
        loop = asyncio.get_running_loop()
        end = loop.time() + 120
        count = 0
        while count < 12:
            assert loop.time() < end, count
            await asyncio.sleep(0.5)
            if stored.exists():
                with (contextlib.closing(sqlite3.connect(stored)) as db,
                      contextlib.suppress(sqlite3.OperationalError)):  # being created
                    count = db.execute("SELECT count(*) FROM vectors").fetchone()[0]


async def test_an_unusable_index_is_a_clear_tool_error(pi_home, tmp_path):
    mine = _project(tmp_path, "mine")
    occupied = tmp_path / "a-directory.sqlite3"
    occupied.mkdir()
    async with connect(pi_home, mine, args=("--index", str(occupied))) as (c, _):
        assert len((await c.list_tools()).tools) == 4
        for _ in range(2):  # said again, and the server still serves
            message = await failed(c, "event_search", {"query": "x"})
            assert message.startswith("pi-event-search cannot use its index: ")
            assert str(occupied) in message and "Retrying will not help" in message
