"""The sessions list (issue 32) over a corpus of many sessions: every visible session once,
newest first, each item what its file says when read on its own (v3, v2, v1 and legacy shapes),
its kinds what the event-level search counts, its `first` the root event in branch order; pages
by cursor; the filters; authorization; names and first prompts masked unless revealed."""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from builder import SessionBuilder, iso
from pi_event_search.core.authz import Scope
from pi_event_search.core.timestamps import parse_time
from pi_event_search.query.search import Filters, StaleCursor
from pi_event_search.service.engine import Engine
from pi_event_search.source.discovery import SessionDir
from secretcorpus import ESCAPES, planted
from sessioncorpus import Corpus, build, expected
from test_secrets import leaked

SEED = random.randrange(1 << 30)  # printed on failure: the corpus is drawn anew each run
KINDS = ["user.text", "assistant.text", "tool.call", "tool.result", "bash.command", "bash.output",
         "custom.message", "session.name"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Engine, Corpus]]:
    root = tmp_path_factory.mktemp("sessionlist")
    c = build(root / "sessions", str(root / "w"), random.Random(SEED), 150)
    e = Engine(root / "index.sqlite3", [SessionDir(str(root / "sessions"), live=True)])
    e.refresh()
    yield e, c
    e.close()


def listed(e: Engine, f: Filters, scope: Scope, size: int, **kw: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = e.sessions(f, scope, limit=size, cursor=cursor, **kw)
        assert len(page["sessions"]) <= size
        assert page["sessions"] or cursor is None
        out += page["sessions"]
        cursor = page["nextCursor"]
        if cursor is None:
            ids = [s["sessionId"] for s in out]
            assert len(ids) == len(set(ids)), f"a session twice (seed {SEED}, page {size})"
            return out


def event_sessions(e: Engine, f: Filters, scope: Scope) -> Counter[str]:
    """How many events of each session the event-level search lists for these filters."""
    counts: Counter[str] = Counter()
    cursor = None
    while True:
        page = e.search("", f, scope, limit=200, cursor=cursor)
        counts.update(h["sessionId"] for h in page.hits)
        cursor = page.next_cursor
        if cursor is None:
            return counts


def test_every_visible_session_as_its_file_says(corpus):
    e, c = corpus
    scope = Scope.of([c.root])
    got = listed(e, Filters(), scope, 200)
    assert [s["sessionId"] for s in got] == [s["sessionId"] for s in listed(e, Filters(), scope, 7)]
    assert {s["sessionId"] for s in got} == {s.session_id for s in c.visible()}
    assert [s["updated"] for s in got] == sorted((s["updated"] for s in got), reverse=True)
    builders = {s.session_id: s for s in c.sessions}
    visible = {s.session_id for s in c.visible()}
    paths = {str(s.path): s.session_id for s in c.sessions}
    for item in got:
        sb = builders[item["sessionId"]]
        want = expected(sb.path)
        assert (item["path"], item["uri"], item["cwd"]) == (str(sb.path), sb.path.as_uri(), sb.cwd)
        assert (item["name"], item["firstPrompt"]) == (want.name, want.first_prompt), sb.path
        assert (item["started"], item["updated"], item["events"]) == \
            (want.started, want.updated, want.events)
        assert item["parentSession"] == (
            want.parent if paths.get(want.parent or "") in visible else None)
        first = item["first"]
        assert (first["sessionId"], first["entryId"]) == (sb.session_id, want.first_entry), sb.path
        assert first["ref"] == f"pi-event:{sb.session_id}/{want.first_entry}"
        assert first["source"]["line"] == 2  # the line after the header
        opened = e.read(first["ref"], scope, before=0, after=2, order="branch")
        assert opened["event"]["entryId"] == want.first_entry
        assert sum(item["kinds"].values()) >= want.user_texts
    shapes = {(s.version, s.header.get("branchedFrom") is not None) for s in c.visible()}
    assert {(3, False), (2, False), (None, False), (None, True)} <= shapes, f"seed {SEED}"


def test_kinds_are_what_the_event_level_search_counts(corpus):
    e, c = corpus
    scope = Scope.of([c.root])
    got = {s["sessionId"]: s["kinds"] for s in listed(e, Filters(), scope, 200)}
    by_kind = {k: event_sessions(e, Filters(kinds=[k]), scope) for k in KINDS}
    for sid, kinds in got.items():
        want = {k: n[sid] for k, n in by_kind.items() if n[sid]}
        assert kinds == want, f"{sid} (seed {SEED})"
        assert list(kinds.values()) == sorted(kinds.values(), reverse=True)
        assert kinds.get("user.text", 0) == expected(Path(next(
            s.path for s in c.sessions if s.session_id == sid))).user_texts


def test_filters(corpus):
    e, c = corpus
    scope = Scope.of([c.root])
    every = {s.session_id: expected(s.path) for s in c.visible()}
    api = f"{c.root}/api"
    assert {s["sessionId"] for s in listed(e, Filters(cwd=api), scope, 9)} == \
        {s.session_id for s in c.under(api)} != set()
    times = sorted(w.updated for w in every.values())
    since, until = times[len(times) // 3], times[2 * len(times) // 3]
    window = Filters(since_ms=parse_time(since, "since"), until_ms=parse_time(until, "until"))
    first_ms = {s.session_id: min(json.loads(line)["timestamp"] for line in
                                  s.path.read_text().splitlines()[1:]) for s in c.visible()}
    want = {sid for sid, w in every.items() if w.updated >= since and first_ms[sid] < until}
    assert {s["sessionId"] for s in listed(e, window, scope, 9)} == want != set()
    for f in (Filters(kinds=["bash.command"]), Filters(errors=True), Filters(tools=["edit"]),
              Filters(roles=["user"], kinds=["user.text"]), Filters(cwd=api, errors=True),
              Filters(exclude_tools=["read", "edit", "bash"], kinds=["tool.call"])):
        held = set(event_sessions(e, f, scope))
        got = listed(e, f, scope, 9)
        assert {s["sessionId"] for s in got} == held, f"{f} (seed {SEED})"
        assert all(s["kinds"] for s in got)  # the counts stay the session's own
    one = next(iter(every))
    assert [s["sessionId"] for s in listed(e, Filters(session_id=one), scope, 5)] == [one]


def test_a_cursor_is_a_place_in_the_order(tmp_path):
    """Pages by cursor: a session that moves to the top meanwhile is not shown again below."""
    c = build(tmp_path / "sessions", str(tmp_path / "w"), random.Random(SEED), 40)
    e = Engine(tmp_path / "index.sqlite3", [SessionDir(str(tmp_path / "sessions"), live=True)])
    e.refresh()
    scope = Scope.of([c.root])
    everything = listed(e, Filters(), scope, 200)
    first = e.sessions(Filters(), scope, limit=3)
    assert [s["sessionId"] for s in first["sessions"]] == [s["sessionId"] for s in everything[:3]]
    moved = next(s for s in c.visible() if s.session_id == everything[-1]["sessionId"])
    moved.clock = max(sb.clock for sb in c.sessions)
    moved.user("a late prompt")
    e.refresh()
    rest: list[dict[str, Any]] = []
    cursor = first["nextCursor"]
    while cursor:
        page = e.sessions(Filters(), scope, limit=4, cursor=cursor)
        rest += page["sessions"]
        cursor = page["nextCursor"]
    assert [s["sessionId"] for s in rest] == [s["sessionId"] for s in everything[3:-1]]
    assert listed(e, Filters(), scope, 5)[0]["sessionId"] == moved.session_id
    with pytest.raises(StaleCursor):
        e.sessions(Filters(errors=True), scope, limit=3, cursor=first["nextCursor"])
    e.close()


def test_only_visible_sessions_and_the_callers_own_up_to_its_cutoff(corpus):
    e, c = corpus
    api = f"{c.root}/api"
    assert {s["sessionId"] for s in listed(e, Filters(), Scope.of([api]), 50)} == \
        {s.session_id for s in c.under(api)}
    assert listed(e, Filters(), Scope.of([f"{c.base}/nowhere"]), 50) == []
    assert listed(e, Filters(session_id=c.sessions[0].session_id),
                  Scope.of([f"{c.base}/nowhere"]), 50) == []
    assert len(listed(e, Filters(), Scope.of(None), 200)) == len(c.sessions)
    outside = [s for s in c.sessions if s not in c.under(c.base + "/alpha")]
    assert outside, f"seed {SEED}"
    own = next(s for s in c.visible() if s.version == 3 and len(s.ids) > 6)
    cutoff = own.ids[4]
    scope = Scope.of([c.root], own.session_id, cutoff)
    assert own.session_id not in {s["sessionId"] for s in listed(e, Filters(), scope, 200)}
    mine = listed(e, Filters(session_id=own.session_id), scope, 5)
    assert [s["sessionId"] for s in mine] == [own.session_id]
    assert mine[0]["events"] == 4 and sum(mine[0]["kinds"].values()) <= 8


def test_names_and_first_prompts_are_masked_unless_revealed(tmp_path):
    proj = tmp_path / "proj"
    items = {p.kind: p for p in planted(random.Random(SEED))}
    key, url = items["openai-key"], items["connection-string"]
    sb = SessionBuilder(tmp_path / "sessions", str(proj))
    sb.user(f"deploy\x1b[2J with {key.text}{ESCAPES}")
    sb.assistant("on it")
    sb.session_info(f"db {url.text}\x07\x1b]0;title\x07")
    e = Engine(tmp_path / "index.sqlite3", [SessionDir(str(tmp_path / "sessions"), live=True)])
    e.refresh()
    scope = Scope.of([str(proj)])
    masked = e.sessions(Filters(), scope)["sessions"][0]
    group = e.search_groups("deploy", Filters(), scope).groups[0]
    for shown in (masked, group):
        text = json.dumps([shown["name"], shown["firstPrompt"]])
        assert not leaked(key.value, text) and not leaked(url.value, text)
        assert "[redacted: openai-key]" in shown["firstPrompt"]
        assert "[redacted: connection-string]" in shown["name"]
    revealed = e.sessions(Filters(), scope, reveal_secrets=True)["sessions"][0]
    group = e.search_groups("deploy", Filters(), scope, reveal_secrets=True).groups[0]
    for shown in (revealed, group):
        assert key.value in shown["firstPrompt"] and url.value in shown["name"]
    for shown in (masked, revealed, group):
        for text in (shown["name"], shown["firstPrompt"]):
            assert not any(ord(ch) < 32 or ch == "\x7f" for ch in text), repr(text)
    e.close()


def test_times_of_a_session_without_times(tmp_path):
    """A v1 file whose header has no timestamp: started is its first entry's."""
    proj = tmp_path / "proj"
    sb = SessionBuilder(tmp_path / "sessions", str(proj), version=None)
    sb.header.pop("timestamp")
    sb.path.write_bytes(sb.dumps(sb.header) + b"\n")
    sb.user("hello there")
    sb.assistant("hi")
    e = Engine(tmp_path / "index.sqlite3", [SessionDir(str(tmp_path / "sessions"), live=True)])
    e.refresh()
    item = e.sessions(Filters(), Scope.of([str(proj)]))["sessions"][0]
    lines = [json.loads(x) for x in sb.path.read_text().splitlines()]
    assert (item["started"], item["updated"]) == (lines[1]["timestamp"], lines[2]["timestamp"])
    assert item["first"]["entryId"] == "v1~1" and item["firstPrompt"] == "hello there"
    assert iso(sb.clock) == item["updated"]
    e.close()


def test_the_callers_own_session_as_of_its_cutoff(tmp_path):
    """Name, first prompt, counts and times of the caller's own session are those before the
    cutoff, in the list and in a group."""
    proj = tmp_path / "proj"
    sb = SessionBuilder(tmp_path / "sessions", str(proj))
    sb.session_info("the old name")
    sb.user("first question about sockets")
    before = sb.assistant("an answer about sockets")
    cutoff = sb.assistant(tool_calls=[("c1", "event_search", {"query": "sockets"})])
    sb.tool_result("c1", "event_search", "sockets found")
    sb.session_info("the new name")
    e = Engine(tmp_path / "index.sqlite3", [SessionDir(str(tmp_path / "sessions"), live=True)])
    e.refresh()
    scope = Scope.of([str(proj)], sb.session_id, cutoff)
    mine = Filters(session_id=sb.session_id)
    item = e.sessions(mine, scope)["sessions"][0]
    group = e.search_groups("sockets", mine, scope).groups[0]
    lines = [json.loads(x) for x in sb.path.read_text().splitlines()]
    for shown in (item, group):
        assert (shown["name"], shown["firstPrompt"], shown["events"]) == \
            ("the old name", "first question about sockets", 3)
        assert shown["updated"] == lines[3]["timestamp"]
    assert group["matches"] == 2 and group["top"]["entryId"] in (before, lines[2]["id"])
    assert item["kinds"] == {"assistant.text": 1, "session.name": 1, "user.text": 1}
    unscoped = e.sessions(Filters(), Scope.of([str(proj)]))["sessions"][0]
    assert (unscoped["name"], unscoped["events"]) == ("the new name", 6)
    e.close()


def test_sessions_pi_itself_wrote(tmp_path):
    """Files written by Pi's own SessionManager (tests/piwriter.py): every one listed, its name
    Pi's getSessionName(), its first event Pi's first tree root, its parent Pi's parentSession."""
    from piwriter import write_pi_sessions

    oracle = write_pi_sessions(tmp_path / "sessions")
    e = Engine(tmp_path / "index.sqlite3", [SessionDir(str(tmp_path / "sessions"), live=True)])
    e.refresh()
    got = {s["sessionId"]: s for s in listed(e, Filters(), Scope.of(None), 4)}
    assert set(got) == {r["sessionId"] for r in oracle["sessions"]}
    for r in oracle["sessions"]:
        item, want = got[r["sessionId"]], expected(Path(r["path"]))
        pi_name = " ".join(r["name"].split()) if r["name"] else None
        assert (item["name"], item["first"]["entryId"], item["parentSession"], item["events"]) == \
            (pi_name, r["roots"][0], r.get("parentSession"), len(r["entries"])), r["scenario"]
        assert (item["firstPrompt"], item["started"], item["updated"]) == \
            (want.first_prompt, want.started, want.updated), r["scenario"]
    e.close()


def test_sessions_updated_at_the_same_time_across_pages(tmp_path):
    """Ties in the order (same newest time, or no time at all) split by pages: each once."""
    proj = tmp_path / "proj"
    made = []
    for n in range(5):
        sb = SessionBuilder(tmp_path / "sessions", str(proj))
        sb.user(f"prompt {n}")
        made.append(sb.session_id)
    for n in range(3):  # v1 entries without timestamps
        sb = SessionBuilder(tmp_path / "sessions", str(proj), version=None)
        sb.write_raw(sb.dumps({"type": "message", "message": {"role": "user",
                                                              "content": f"untimed {n}"}}) + b"\n")
        made.append(sb.session_id)
    e = Engine(tmp_path / "index.sqlite3", [SessionDir(str(tmp_path / "sessions"), live=True)])
    e.refresh()
    scope = Scope.of([str(proj)])
    for size in (1, 2, 3):
        got = listed(e, Filters(), scope, size)
        assert sorted(s["sessionId"] for s in got) == sorted(made)
        assert [s["updated"] for s in got[5:]] == [None] * 3
    e.close()
