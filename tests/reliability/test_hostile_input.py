"""Hostile input: 50 MB single lines, deep nesting, NUL and invalid UTF-8, lone surrogates, huge
numbers, many tiny sessions, JSON-mode streams, and wrong types in every field of every entry type
(hypothesis). Never a crash; problems are reported per session (status badLines / stale /
skipped) and every other session is indexed."""

from __future__ import annotations

import contextlib
import copy
import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from builder import SessionBuilder, sample_session
from engine_support import ALL, hits
from pi_event_search.core.errors import EngineError
from pi_event_search.query.search import Filters
from reliability.relsupport import (
    FIGURES,
    connect_ro,
    guard_cmd,
    guard_env,
    integrity,
    open_engine,
    orphans,
    size,
    timeout,
    violations,
)
from support import PiHome, tree_digest

MB = 1 << 20
HUGE = size(50, 50) * MB
TINY = size(20_000, 100_000)
EXAMPLES = size(60, 600)


def _header(sid: str, cwd: str = "/home/dev/hostile", version: int = 3) -> dict[str, Any]:
    return {"type": "session", "version": version, "id": sid, "timestamp": "2026-05-01T10:00:00.000Z",
            "cwd": cwd}


def _entry(i: int, parent: str | None, **body: Any) -> dict[str, Any]:
    return {"id": f"e{i:07x}", "parentId": parent, "timestamp": f"2026-05-01T10:00:{i % 60:02d}.000Z",
            **body}


def _user(i: int, parent: str | None, text: Any) -> dict[str, Any]:
    return _entry(i, parent, type="message", message={"role": "user", "content": text})


def _write(path: Path, lines: list[bytes], tail: bytes = b"") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        for line in lines:
            fh.write(line + b"\n")
        fh.write(tail)


def _dump(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")


def _controls(home: PiHome, n: int = 3) -> list[SessionBuilder]:
    return [sample_session(home.sessions, f"/home/dev/control{i}") for i in range(n)]


def _check_controls(e: Any, controls: list[SessionBuilder]) -> None:
    found = {h["sessionId"] for h in hits(e, "websocket reconnect")}
    assert {c.session_id for c in controls} <= found, "every well-formed session is indexed"


def _consistent(e: Any) -> None:
    integrity(e.conn)
    assert not orphans(e.conn)


def _read_all(e: Any, session_id: str) -> int:
    """read and trace every event of a session: answers or clean engine errors, never a crash."""
    n = 0
    for (entry_id,) in e.conn.execute(
            "SELECT e.entry_id FROM events e JOIN sessions s ON s.sid = e.sid WHERE s.session_id = ?",
            (session_id,)).fetchall():
        for call in (lambda r: e.read(r, ALL, before=2, after=2, order="branch"),
                     lambda r: e.trace(r, ALL)):
            with contextlib.suppress(EngineError):
                call(f"pi-event:{session_id}/{entry_id}")
        n += 1
    return n


@pytest.mark.timeout(timeout(300, 900))
def test_50_mb_single_lines(pi_home: PiHome) -> None:
    controls = _controls(pi_home)
    d = pi_home.sessions / "--home-dev-hostile--"
    body = "needle-head " + "x" * (HUGE - 100) + " needle-tail"
    big = d / "big-valid.jsonl"
    _write(big, [_dump(_header("big-valid")), _dump(_user(1, None, body)),
                 _dump(_user(2, "e0000001", "after the huge line"))])
    garbage = d / "big-garbage.jsonl"
    _write(garbage, [_dump(_header("big-garbage")), b"{" + b"\xff\x00garbage" * (HUGE // 10),
                     _dump(_user(2, None, "survivor after garbage"))])
    torn = d / "big-torn.jsonl"
    _write(torn, [_dump(_header("big-torn")), _dump(_user(1, None, "before the torn giant"))],
           tail=b'{"type":"message","message":{"role":"user","content":"' + b"y" * HUGE)
    header_only_giant = d / "big-header.jsonl"
    _write(header_only_giant, [b'{"type":"session","id":"' + b"z" * HUGE + b'"}'])
    before = tree_digest(pi_home.agent)
    e = open_engine(pi_home.sessions, pi_home.index)
    started = time.monotonic()
    e.refresh()
    elapsed = time.monotonic() - started
    _check_controls(e, controls)
    _consistent(e)
    assert hits(e, "needle-tail") and hits(e, "needle-head"), "head and tail of a huge text stay"
    longest = e.conn.execute("SELECT max(length(fragment_text(text))) FROM fragments").fetchone()[0]
    assert longest < 60_000, "fragments are bounded"
    assert hits(e, "survivor after garbage") and hits(e, "before the torn giant")
    status = e.status(None)
    bad = {b["sessionId"]: b for b in status["badLines"]}
    assert bad["big-garbage"]["badLines"] == 1
    indexed = {r[0][:40] for r in e.conn.execute("SELECT session_id FROM sessions")}
    assert {"big-valid", "big-garbage", "big-torn"} <= indexed
    skipped = {Path(s["path"]).name: s["reason"] for s in status["skipped"]}
    assert "not an id" in skipped["big-header.jsonl"], "a 50 MB session id is refused, with a reason"
    huge_ref = hits(e, "needle-head")[0]["ref"]
    read = e.read(huge_ref, ALL)
    assert sum(len(f["text"]) for f in read["fragments"]) <= 4000 + 100
    assert tree_digest(pi_home.agent) == before
    FIGURES.add("hostile input", "50 MB lines", 4)
    FIGURES.set("hostile input", "50 MB lines index s", round(elapsed, 1))


def _nested(depth: int, leaf: Any = "deep") -> Any:
    value: Any = leaf
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


def _nested_text(depth: int) -> bytes:
    return b'{"k":' * depth + b'"deep"' + b"}" * depth


def test_deep_nesting(pi_home: PiHome) -> None:
    controls = _controls(pi_home)
    d = pi_home.sessions / "--home-dev-hostile--"
    sessions = 0
    for depth in (100, 254, 255, 300, 1000, 1023, 1024, 1025, 5000, 100_000):
        lines = [_dump(_header(f"deep-{depth}"))]
        deep = _nested_text(depth)
        for i, shape in enumerate((
                b'{"type":"message","id":"a1","parentId":null,"message":{"role":"user","content":%s}}',
                b'{"type":"message","id":"a2","parentId":"a1","message":{"role":"assistant","content":'
                b'[{"type":"toolCall","id":"c","name":"edit","arguments":{"path":%s}}]}}',
                b'{"type":"message","id":"a3","parentId":"a2","message":{"role":"toolResult",'
                b'"toolCallId":"c","toolName":"edit","content":[],"details":%s}}',
                b'{"type":"compaction","id":"a4","parentId":"a3","summary":"s","firstKeptEntryId":"a1",'
                b'"details":%s}',
                b'{"type":"custom","id":"a5","parentId":"a4","customType":"x","data":%s}',
                b'{"type":"label","id":"a6","parentId":"a5","targetId":%s}',
                b'{"type":"message","id":"a7","parentId":"a6","message":{"role":"user","content":'
                b'"marker deep %d"}}')):
            lines.append(shape % (deep if i < 6 else depth))
        _write(d / f"deep-{depth}.jsonl", lines)
        sessions += 1
    e = open_engine(pi_home.sessions, pi_home.index)
    e.refresh()
    _check_controls(e, controls)
    _consistent(e)
    for depth in (100, 1000, 100_000):
        assert hits(e, f"marker deep {depth}"), f"the session nested {depth} deep is still indexed"
    for depth in (100, 300, 1000, 1024):
        _read_all(e, f"deep-{depth}")
    FIGURES.add("hostile input", "deep-nesting sessions", sessions)


def test_nul_invalid_utf8_surrogates_and_odd_numbers(pi_home: PiHome) -> None:
    controls = _controls(pi_home)
    d = pi_home.sessions / "--home-dev-hostile--"
    odd: list[bytes] = [
        b'{"type":"message","id":"n1","parentId":null,"message":{"role":"user","content":"nul \\u0000 '
        b'escaped"}}',
        b'{"type":"message","id":"n2","parentId":"n1","message":{"role":"user","content":"raw \x00 nul"}}',
        b'{"type":"message","id":"n3","parentId":"n2","message":{"role":"user","content":"bad \xff\xfe '
        b'utf8 \xc3\x28 seq"}}',
        b'{"type":"message","id":"n4","parentId":"n3","message":{"role":"user","content":"lone \\ud800 '
        b'surrogate"}}',
        b'{"type":"message","id":"n5","parentId":"n4","message":{"role":"user","content":"low \\udfff '
        b'then \\ud83d\\ude00 pair"}}',
        b'{"type":"compaction","id":"n6","parentId":"n5","summary":"big numbers","firstKeptEntryIndex":'
        b'123456789012345678901234567890,"tokensBefore":1e999}',
        b'{"type":"message","id":"n7","parentId":"n6","timestamp":"\\ud800","message":{"role":'
        b'"bashExecution","command":"echo \\ud800","output":"x","exitCode":99999999999999999999999}}',
        b'{"type":"message","id":"n8","parentId":"n7","message":{"role":"user","content":NaN}}',
        b'{"type":"label","id":"\\ud800","parentId":"n8","targetId":"n1","label":"\\udc00"}',
        b"\x00\x00\x00\x00",
        b"\xef\xbb\xbf" + b'{"type":"message","id":"n9","parentId":"n8","message":{"role":"user",'
        b'"content":"after a BOM"}}',
        b'{"type":"message","id":"n10","parentId":"n9","message":{"role":"user","content":"final '
        b'marker odd"}}',
    ]
    _write(d / "odd.jsonl", [_dump(_header("odd-bytes"))] + odd)
    _write(d / "nul-header.jsonl", [b'{"type":"session","id":"nul\x00id","cwd":"/p"}',
                                    _dump(_user(1, None, "x"))])
    _write(d / "surrogate-header.jsonl", [b'{"type":"session","version":3,"id":"sur\\ud800",'
                                          b'"cwd":"/home/dev/\\udc00"}', _dump(_user(1, None, "sur"))])
    _write(d / "bom-header.jsonl", [b"\xef\xbb\xbf" + _dump(_header("bom-header")),
                                    _dump(_user(1, None, "bom"))])
    _write(d / "latin1.jsonl", [_dump(_header("latin1")),
                                '{"type":"message","id":"l1","parentId":null,"message":{"role":"user",'
                                '"content":"caf\xe9 cr\xe8me latin one"}}'.encode("latin-1")])
    e = open_engine(pi_home.sessions, pi_home.index)
    e.refresh()
    _check_controls(e, controls)
    _consistent(e)
    assert hits(e, "final marker odd"), "a session with odd bytes keeps its good entries"
    assert hits(e, "latin one")
    _read_all(e, "odd-bytes")
    status = e.status(None)
    bad = {b["sessionId"]: b for b in status["badLines"]}
    assert bad["odd-bytes"]["badLines"] >= 3 and bad["odd-bytes"]["detail"], "odd lines are counted"
    skipped = {Path(s["path"]).name: s["reason"] for s in status["skipped"]}
    for name in ("nul-header.jsonl", "surrogate-header.jsonl", "bom-header.jsonl"):
        assert skipped.get(name), f"{name} is skipped with a reason"
    for q in ("nul", "surrogate", "utf8", "café", "\ud800", "\x00"):
        hits(e, q)
    FIGURES.add("hostile input", "odd-byte lines", len(odd) + 5)


def test_json_mode_streams_are_skipped_with_a_reason(pi_home: PiHome) -> None:
    controls = _controls(pi_home)
    d = pi_home.sessions / "--home-dev-hostile--"
    events = ["agent_start", "turn_start", "message_start", "message_update", "message_end",
              "tool_execution_start", "tool_execution_end", "turn_end", "agent_end"]
    for i, _first in enumerate(events):
        lines = [_dump(_header(f"stream-{i}"))]
        for ev in events[i:] + events[:i]:
            lines.append(_dump({"type": ev, "message": {"role": "assistant", "content": "streamed"}}))
        _write(d / f"stream-{i}.jsonl", lines)
    spaced = json.dumps(_header("stream-spaced")) + "\n" + json.dumps({"type": "agent_start"}) + "\n"
    (d / "stream-spaced.jsonl").write_text(spaced)
    e = open_engine(pi_home.sessions, pi_home.index)
    e.refresh()
    _check_controls(e, controls)
    skipped = {Path(s["path"]).name: s["reason"] for s in e.status(None)["skipped"]}
    for i in range(len(events)):
        assert "json" in skipped[f"stream-{i}.jsonl"].lower()
    assert "json" in skipped["stream-spaced.jsonl"].lower()
    assert not hits(e, "streamed")
    FIGURES.add("hostile input", "JSON-mode streams", len(events) + 1)


@pytest.mark.timeout(timeout(240, 1800))
def test_many_tiny_sessions(pi_home: PiHome) -> None:
    per_dir = 500
    header = ('{"type":"session","version":3,"id":"%s","timestamp":"2026-05-01T10:00:00.000Z",'
              '"cwd":"/home/dev/tiny%d"}\n')
    entry = ('{"type":"message","id":"t0000001","parentId":null,"timestamp":"2026-05-01T10:00:01.000Z",'
             '"message":{"role":"user","content":"tiny session number %d"}}\n')
    started = time.monotonic()
    for i in range(TINY):
        folder = pi_home.sessions / f"--home-dev-tiny{i // per_dir}--"
        if i % per_dir == 0:
            folder.mkdir()
        sid = f"019f0000-0000-7000-8000-{i:012d}"
        data = (header % (sid, i // per_dir) + entry % i).encode()
        fd = os.open(folder / f"2026-05-01T10-00-00-000Z_{sid}.jsonl", os.O_WRONLY | os.O_CREAT, 0o644)
        os.write(fd, data)
        os.close(fd)
    generated = time.monotonic() - started
    log = pi_home.root / "guard.log"
    env = guard_env(pi_home.env(), [pi_home.agent], log)
    started = time.monotonic()
    subprocess.run(guard_cmd("index"), env=env, check=True, capture_output=True, timeout=1800)
    cold = time.monotonic() - started
    started = time.monotonic()
    subprocess.run(guard_cmd("index"), env=env, check=True, capture_output=True, timeout=1800)
    warm = time.monotonic() - started
    assert not violations(log), violations(log)
    conn = connect_ro(pi_home.index)
    assert conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == TINY
    assert conn.execute("SELECT count(*) FROM events").fetchone()[0] == TINY
    e = open_engine(pi_home.sessions, pi_home.index)
    integrity(e.conn)
    assert hits(e, f"tiny session number {TINY - 1}")
    FIGURES.set("hostile input", "tiny sessions", TINY)
    FIGURES.set("hostile input", "tiny sessions cold index s", round(cold, 1))
    FIGURES.set("hostile input", "tiny sessions unchanged re-index s", round(warm, 1))
    FIGURES.set("hostile input", "tiny sessions generate s", round(generated, 1))


# -- wrong types everywhere (hypothesis) ---------------------------------------------------------
WRONG = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=2**64, max_value=2**80),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=20),
    st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
    st.just({"type": "text", "text": 5}), st.just([{"type": None}]), st.just([[[]]]),
    st.just({"role": 1}), st.just(""), st.just("../../../etc/passwd"), st.just("~"),
)


def _templates() -> list[dict[str, Any]]:
    """One well-formed example of every entry type and message role (reference §5, §6)."""
    usage = {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 3,
             "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}
    msgs = [
        {"role": "user", "content": [{"type": "text", "text": "hello"},
                                     {"type": "image", "data": "aGk=", "mimeType": "image/png"}],
         "timestamp": 1},
        {"role": "user", "content": "plain string content", "timestamp": 1},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "t", "thinkingSignature": "sig"},
            {"type": "text", "text": "answer", "textSignature": "s"},
            {"type": "toolCall", "id": "c1", "name": "edit",
             "arguments": {"path": "src/a.ts", "edits": [{"oldText": "a", "newText": "b"}]},
             "partialJson": "{}"}],
         "api": "anthropic-messages", "provider": "anthropic", "model": "m", "usage": usage,
         "stopReason": "toolUse", "errorMessage": "boom", "timestamp": 2},
        {"role": "toolResult", "toolCallId": "c1", "toolName": "read",
         "content": [{"type": "text", "text": "file body"}], "details": {"diff": "-a\n+b"},
         "isError": False, "timestamp": 3},
        {"role": "bashExecution", "command": "ls", "output": "a b", "exitCode": 0, "cancelled": False,
         "truncated": False, "fullOutputPath": "/tmp/x", "excludeFromContext": False, "timestamp": 4},
        {"role": "custom", "customType": "ext", "content": "custom text", "display": True,
         "details": {"a": 1}, "timestamp": 5},
        {"role": "hookMessage", "customType": "hook", "content": [{"type": "text", "text": "h"}],
         "display": True, "timestamp": 6},
        {"role": "branchSummary", "summary": "bs", "fromId": "x", "timestamp": 7},
        {"role": "compactionSummary", "summary": "cs", "tokensBefore": 1, "timestamp": 8},
    ]
    entries: list[dict[str, Any]] = [{"type": "message", "message": m} for m in msgs]
    entries += [
        {"type": "compaction", "summary": "summary text", "firstKeptEntryId": "e0000001",
         "tokensBefore": 10, "details": {"readFiles": ["a"], "modifiedFiles": ["b"]}, "fromHook": False},
        {"type": "compaction", "summary": "v1 style", "firstKeptEntryIndex": 1, "tokensBefore": 10},
        {"type": "branch_summary", "fromId": "e0000001", "summary": "branch text",
         "details": {"readFiles": ["c"], "modifiedFiles": ["d"]}, "fromHook": True},
        {"type": "label", "targetId": "e0000001", "label": "important"},
        {"type": "session_info", "name": "a name"},
        {"type": "model_change", "provider": "anthropic", "modelId": "claude"},
        {"type": "thinking_level_change", "thinkingLevel": "high"},
        {"type": "custom", "customType": "ext-state", "data": {"k": [1, 2]}},
        {"type": "custom_message", "customType": "note", "content": [{"type": "text", "text": "cm"}],
         "display": False, "details": {"x": 1}},
    ]
    return entries


TEMPLATES = _templates()


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _paths(v, (*prefix, i))
    return out


def _set(obj: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    obj[path[0]] = _set(obj[path[0]], path[1:], value)
    return obj


@st.composite
def hostile_entry(draw: st.DrawFn, i: int) -> dict[str, Any]:
    base = json.loads(json.dumps(draw(st.sampled_from(TEMPLATES))))
    entry: dict[str, Any] = {"type": base.pop("type"), "id": f"e{i:07x}",
                             "parentId": f"e{i - 1:07x}" if i else None,
                             "timestamp": "2026-05-01T10:00:00.000Z", **base}
    paths = _paths(entry)[1:]
    for path in draw(st.lists(st.sampled_from(paths), min_size=1, max_size=4, unique=True)):
        value = copy.deepcopy(draw(WRONG))  # st.just() values are shared: no cycles
        with contextlib.suppress(KeyError, IndexError, TypeError):  # container already replaced
            _set(entry, path, value)
    return entry


@st.composite
def hostile_session(draw: st.DrawFn) -> list[Any]:
    header: Any = _header("placeholder")
    if draw(st.integers(0, 9)) == 0:  # a header with a wrong type somewhere
        key = draw(st.sampled_from(["version", "cwd", "timestamp", "parentSession", "type"]))
        header[key] = draw(WRONG)
    n = draw(st.integers(1, 6))
    return [header, *(draw(hostile_entry(i)) for i in range(n))]


_COUNTER = iter(range(10**9))


@pytest.mark.timeout(timeout(300, 3600))
def test_wrong_types_in_every_field(pi_home: PiHome) -> None:
    controls = _controls(pi_home, 2)
    d = pi_home.sessions / "--home-dev-typed--"
    e = open_engine(pi_home.sessions, pi_home.index)
    e.refresh()
    stats = {"sessions": 0, "entries": 0}

    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                     HealthCheck.data_too_large])
    @given(hostile_session())
    # found by a draw: a block whose type is a list (unhashable) stopped the session's indexing
    @example([_header("placeholder"), {
        "type": "message", "id": "e0000000", "parentId": None,
        "timestamp": "2026-05-01T10:00:00.000Z",
        "message": {"role": "assistant", "stopReason": "toolUse", "timestamp": 2, "content": [
            {"type": [], "text": "answer"},
            {"type": "toolCall", "id": "c1", "name": "edit", "arguments": {"path": "a.ts"}}]}}])
    def run(session: list[Any]) -> None:
        n = next(_COUNTER)
        sid = f"typed-{n}"
        session[0]["id"] = sid
        _write(d / f"typed-{n}.jsonl", [_dump(x) for x in session])
        e.refresh()  # must not raise
        stats["sessions"] += 1
        stats["entries"] += len(session) - 1
        row = e.conn.execute("SELECT count(*) FROM sessions WHERE session_id = ?", (sid,)).fetchone()
        if session[0].get("type") == "session":
            assert row[0] == 1, "a session with a valid header is indexed whatever its entries hold"
            _read_all(e, sid)
        e.search("answer hello", Filters(), ALL)
        e.status(None)

    run()
    _check_controls(e, controls)
    _consistent(e)
    fresh = open_engine(pi_home.sessions, pi_home.root / "fresh.sqlite3")
    fresh.refresh()
    from engine_support import snapshot

    assert snapshot(e) == snapshot(fresh)
    FIGURES.add("hostile input", "hypothesis sessions (wrong types)", stats["sessions"])
    FIGURES.add("hostile input", "hypothesis entries (wrong types)", stats["entries"])
