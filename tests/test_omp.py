"""Oh My Pi as a second source: sessions Oh My Pi's own SessionManager wrote (tests/ompwriter.py)
found in its default directories, read past the title record, their new entry types and roles
projected, subagent transcripts indexed with their parent, states equal to Oh My Pi's
getBranch()/buildSessionContext(), and status counting sessions per source. Shapes Oh My Pi's
writer does not produce here (an id as parentSession, a title rewritten in place, older entry
types) come from tests/builder.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from builder import SessionBuilder
from engine_support import ALL, cli, cli_json, engine, hits
from ompwriter import by_scenario, write_omp_sessions
from pi_event_search.core import locations
from pi_event_search.core.filters import Filters
from pi_event_search.source import tree

PIN_HASH = "9f2c4e7a1b3d5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8"


@pytest.fixture(scope="module")
def omp(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    home = tmp_path_factory.mktemp("omp-home")
    return home, write_omp_sessions(home)


@pytest.fixture
def omp_env(omp: tuple[Path, dict[str, Any]], monkeypatch: pytest.MonkeyPatch,
            tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """A user who runs Oh My Pi only: HOME holds ~/.omp, Pi's variables are unset."""
    home, oracle = omp
    for key in ("PI_CODING_AGENT_DIR", "PI_CONFIG_DIR", "XDG_DATA_HOME"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PI_EVENT_SEARCH_INDEX", str(tmp_path / "index.sqlite3"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return home, oracle


def test_the_writer_wrote_what_the_tests_rely_on(omp: tuple[Path, dict[str, Any]]) -> None:
    home, oracle = omp
    assert oracle["omp_version"] == "18.2.3"
    main, sub = by_scenario(oracle, "main"), by_scenario(oracle, "subagent")
    sessions = home / ".omp" / "agent" / "sessions" / "-proj"
    assert Path(main["path"]).parent == sessions
    assert sub["path"] == main["path"][: -len(".jsonl")] + "/Scout.jsonl"
    assert sub["parentSession"] == main["path"]
    with open(main["path"], "rb") as fh:
        first = fh.readline()
    assert len(first) == 256 and json.loads(first)["type"] == "title"
    assert main["title"] == "Flaky websocket reconnect"
    types = set(main["types"].values())
    assert {"service_tier_change", "mode_change", "ttsr_injection", "credential_pin",
            "model_usage", "reset_boundary", "title_change"} <= types
    # Oh My Pi's own context: only what follows the /clear.
    m = main["marks"]
    assert main["context"] == [m["afterReset"], m["erroredKept"], m["interrupted"], m["bareCall"],
                               m["bareResult"], m["neverMind"], m["failedFirst"], m["note"],
                               m["afterResetAnswer"]]


def test_found_in_oh_my_pis_directories(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("PI_CODING_AGENT_DIR", "PI_CONFIG_DIR", "XDG_DATA_HOME"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert locations.omp_sessions_dirs() == []  # only those that exist
    made = [tmp_path / ".omp/agent/sessions", tmp_path / ".omp/profiles/work/agent/sessions",
            tmp_path / "xdg/omp/sessions", tmp_path / ".ompx/agent/sessions"]
    for d in made:
        d.mkdir(parents=True)
    assert locations.omp_sessions_dirs() == made[:2]
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert locations.omp_sessions_dirs() == made[:3]
    monkeypatch.setenv("PI_CONFIG_DIR", ".ompx")
    assert locations.omp_sessions_dirs() == [made[3], made[2]]
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    (tmp_path / "agent/sessions").mkdir(parents=True)
    assert locations.omp_sessions_dirs() == [tmp_path / "agent/sessions"]


def test_states_equal_oh_my_pis(omp_env: tuple[Path, dict[str, Any]]) -> None:
    """For every entry: selected iff on Oh My Pi's getBranch(), in context (`direct`) iff
    buildSessionContext() made a message of it; before the /clear, `cleared`; failed answers
    left out, `dropped`."""
    _, oracle = omp_env
    e = engine(None)  # type: ignore[arg-type]
    e.refresh()
    conn = e.reader()
    differences = []
    for rec in oracle["sessions"]:
        rows = {r["entry_id"]: r for r in conn.execute(
            "SELECT e.entry_id, e.branch_state, e.selection_state FROM events e "
            "JOIN sessions s ON s.sid = e.sid WHERE s.session_id = ?", (rec["sessionId"],))}
        assert list(rows) == rec["entries"] or sorted(rows) == sorted(rec["entries"])
        for eid in rec["entries"]:
            branch = tree.SELECTED if eid in rec["selected"] else tree.ALTERNATE
            in_context = eid in rec["context"]
            got = rows[eid]
            if got["branch_state"] != branch or (got["selection_state"] == tree.DIRECT) != in_context:
                differences.append((rec["scenario"], rec["types"][eid], eid, dict(got)))
    assert differences == []
    main = by_scenario(oracle, "main")
    states = {r["entry_id"]: r["selection_state"] for r in conn.execute(
        "SELECT entry_id, selection_state FROM events")}
    m = main["marks"]
    assert states[m["prompt"]] == states[m["compaction"]] == states[m["postAnswer"]] == tree.CLEARED
    assert states[m["alternate"]] == tree.NOT_SELECTED
    assert states[m["reset"]] == tree.NOT_APPLICABLE
    assert [states[m[k]] for k in ("aborted", "abortedResult", "emptyError", "superseded",
                                   "danglingBare", "abortedSecond", "abortedSecondResult")] == \
        [tree.DROPPED] * 7
    assert states[m["failedFirst"]] == tree.DIRECT  # the note follows it once the rest is gone
    assert states[m["erroredKept"]] == states[m["interrupted"]] == states[m["bareCall"]] == \
        states[m["bareResult"]] == tree.DIRECT
    assert states[m["danglingResult"]] == tree.NOT_SELECTED
    e.close()


def test_searched_read_and_traced(omp_env: tuple[Path, dict[str, Any]]) -> None:
    _, oracle = omp_env
    main, sub = by_scenario(oracle, "main"), by_scenario(oracle, "subagent")
    m = main["marks"]
    e = engine(None)  # type: ignore[arg-type]
    e.refresh()
    found = {(h["entryId"], h["kind"]) for h in hits(e, "jitter")}
    assert (m["fix"], "user.text") in found and (m["mention"], "file.mention") in found
    assert {(h["entryId"], h["kind"]) for h in hits(e, "print sum range")} == \
        {(m["python"], "python.code")}
    assert [(h["entryId"], h["kind"]) for h in hits(e, "no-sleep-in-tests")] == \
        [(m["ttsr"], "ttsr.rules")]
    assert [h["entryId"] for h in hits(e, "scheduleReconnect", kinds=["session.task"])] == \
        [sub["marks"]["init"]]
    assert hits(e, PIN_HASH) == [] and hits(e, "9f2c4e7a1b3d5f60") == []
    # The title (the record on line 1, and its title_change entry) names the session.
    titled = hits(e, "Flaky websocket reconnect", kinds=["session.name"])
    assert [h["entryId"] for h in titled] == [
        i for i, t in main["types"].items() if t == "title_change"]
    assert titled[0]["sessionName"] == "Flaky websocket reconnect"

    read = e.read(f"pi-event:{main['sessionId']}/{m['prompt']}", ALL)
    assert read["source"]["line"] == main["entries"].index(m["prompt"]) + 3  # title, header
    assert {(o["field"], o["reason"]) for o in read["omitted"]} == \
        {("message.content[1]", "image (in Oh My Pi's blob store)")}
    pin = e.read(f"pi-event:{main['sessionId']}/{m['pin']}", ALL)
    assert pin["event"]["entryType"] == "credential_pin" and pin["fragments"] == []
    assert PIN_HASH not in json.dumps(pin)
    usage = e.read(f"pi-event:{main['sessionId']}/{m['usage']}", ALL)
    assert usage["event"]["entryType"] == "model_usage"
    assert usage["event"]["metadata"] == {"purpose": "title", "role": "smol",
                                          "provider": "anthropic", "model": "claude-haiku-4-5",
                                          "stopReason": "stop", "totalTokens": 160}
    smol = e.read(f"pi-event:{main['sessionId']}/{m['smol']}", ALL)["event"]
    assert smol["metadata"] == {"model": "anthropic/claude-haiku-4-5", "role": "smol"}
    assert e.read(f"pi-event:{main['sessionId']}/{m['pin']}", ALL)["event"]["metadata"] == \
        {"provider": "anthropic"}
    assert e.read(f"pi-event:{main['sessionId']}/{m['plan']}", ALL)["event"]["metadata"] == \
        {"mode": "plan"}
    init = e.read(f"pi-event:{sub['sessionId']}/{sub['marks']['init']}", ALL)["event"]
    assert init["metadata"]["agent"] == "scout" and init["metadata"]["tools"] == ["read", "grep"]

    trace = e.trace(f"pi-event:{sub['sessionId']}/{sub['marks']['report']}", ALL)
    parent = [x for x in trace["lineage"] if x["relation"] == "session-parent"]
    assert [(x.get("sessionId"), x.get("path")) for x in parent] == \
        [(main["sessionId"], main["path"])]
    back = e.trace(f"pi-event:{main['sessionId']}/{m['fix']}", ALL)
    assert [(x["relation"], x.get("sessionId")) for x in back["lineage"]] == \
        [("session-child", sub["sessionId"])]

    status = e.status(None)
    assert status["sessions"] == 2 and status["sessionsBySource"] == {"omp": 2}
    assert [(d["path"].endswith("/.omp/agent/sessions"), d["layout"], d["sessions"])
            for d in status["directories"] if d["origin"] == "Oh My Pi"] == \
        [(True, "per-project", 2)]
    e.close()


def test_status_counts_each_source(omp_env: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    home, _ = omp_env
    pi = tmp_path / "pi-agent"
    SessionBuilder(pi / "sessions", cwd=str(home / "proj")).user("a Pi session")
    assert cli("index", "--sessions-dir", str(pi / "sessions"))[0] == 0
    got = cli_json("status", "--all", "--sessions-dir", str(pi / "sessions"))
    assert got["sessionsBySource"] == {"omp": 2, "pi": 1}
    rc, out, _ = cli("status", "--all", "--sessions-dir", str(pi / "sessions"))
    assert rc == 0 and "sessions   3 (Oh My Pi 2, Pi 1)" in out


def test_shapes_the_writer_does_not_make(pi_home: Any) -> None:
    """A fork that records its parent by id, a title rewritten in place (same size: the file is
    read again, and the session renamed), the older entry types, and an unknown one."""
    folder = pi_home.sessions / "-proj"
    parent = SessionBuilder(folder, cwd="/work/proj", flat=True, omp_title="first title")
    p1 = parent.user("the original question about caching")
    child = SessionBuilder(folder, cwd="/work/proj", flat=True, omp_title="the fork",
                           header_extra={"parentSession": parent.session_id,
                                         "additionalDirectories": ["/work/lib"]})
    older = SessionBuilder(folder, cwd="/work/proj", flat=True,
                           header_extra={"title": "  an older   Oh My Pi file "})
    older.user("before the title record existed")
    child.append("archive", {"reason": "done"})
    child.append("mcp_tool_selection", {"tools": ["github"]})
    child.append("some_future_type", {"text": "must not be searchable"})
    last = child.user("a follow-up about caching")
    # Oh My Pi cuts a string over 500,000 characters and says so at its end.
    cut = child.tool_result("call_9", "bash", "x" * 499_955 +
                            "\n\n[Session persistence truncated large content]")
    child.branch(last)
    e = engine(pi_home.index)
    e.refresh()
    assert hits(e, "must not be searchable") == []
    read = e.read(f"pi-event:{child.session_id}/{cut}", ALL)
    assert ("message.content[0]", "truncated by Oh My Pi") in \
        {(o["field"], o["reason"]) for o in read["omitted"]}
    types = {r["entry_type"] for r in e.reader().execute("SELECT entry_type FROM events")}
    assert {"archive", "mcp_tool_selection", "some_future_type"} <= types
    trace = e.trace(f"pi-event:{child.session_id}/{last}", ALL)
    assert [(x["relation"], x.get("sessionId")) for x in trace["lineage"]] == \
        [("session-parent", parent.session_id)]
    back = e.trace(f"pi-event:{parent.session_id}/{p1}", ALL)
    assert [(x["relation"], x.get("sessionId")) for x in back["lineage"]] == \
        [("session-child", child.session_id)]
    assert e.status(None)["sessionsBySource"] == {"omp": 3}
    listed = {x["sessionId"]: x for x in e.sessions(Filters(), ALL)["sessions"]}
    assert listed[child.session_id]["parentSession"] == str(parent.path)

    def names() -> dict[str, str]:
        return {r["session_id"]: r["name"] for r in e.reader().execute(
            "SELECT session_id, name FROM sessions")}

    assert names() == {parent.session_id: "first title", child.session_id: "the fork",
                       older.session_id: "an older Oh My Pi file"}
    size = parent.path.stat().st_size
    parent.retitle("caching, renamed")
    assert parent.path.stat().st_size == size
    e.refresh()
    assert names()[parent.session_id] == "caching, renamed"
    key = "sk-proj-" + "a1B2" * 12  # a title is a name: masked like every name
    parent.retitle(f"rotate {key}")
    e.refresh()
    assert names()[parent.session_id] == "rotate [redacted: openai-key]"
    rc, out, _ = cli("sessions", "--all", "--index", str(pi_home.index))
    assert rc == 0 and "rotate [redacted: openai-key]" in out and key not in out
    assert [h["entryId"] for h in hits(e, "original question")] == [p1]
    e.close()


def test_failed_answers_as_each_agent_replays_them(pi_home: Any) -> None:
    """The same turns, appended to an indexed session one by one: Oh My Pi leaves the aborted
    answer and its call's result out of the model context (`dropped`), Pi's buildSessionContext
    keeps them (`direct`); the states after each append equal a fresh index's."""
    def turns(b: SessionBuilder) -> list[str]:
        return [b.assistant(tool_calls=[("call_1", "read", {"path": "config.ts"})],
                            stop_reason="aborted"),
                b.tool_result("call_1", "read", "Tool execution was aborted", is_error=True),
                b.assistant("Renamed loadConfig to readConfig.")]

    omp = SessionBuilder(pi_home.sessions, cwd="/work/proj", omp_title="rename")
    pi = SessionBuilder(pi_home.sessions, cwd="/work/proj")
    omp_ids, pi_ids = [omp.user("rename the config loader")], [pi.user("rename it")]
    e = engine(pi_home.index)
    e.refresh()
    omp_ids += turns(omp)  # continuing the selected path: the append's short cut must not apply
    pi_ids += turns(pi)
    e.refresh()

    def states() -> dict[str, str]:
        return {r["entry_id"]: r["selection_state"] for r in e.reader().execute(
            "SELECT entry_id, selection_state FROM events")}

    got = states()
    assert [got[i] for i in omp_ids] == ["direct", "dropped", "dropped", "direct"]
    assert [got[i] for i in pi_ids] == ["direct"] * 4
    facts = {r["entry_id"]: r["facts"] or "" for r in e.reader().execute(
        "SELECT entry_id, facts FROM events")}
    assert '"callId"' in facts[omp_ids[2]] and not any(
        k in facts[i] for i in pi_ids for k in tree.REPLAY_FACTS)  # Pi's store none
    e.close()
    fresh = engine(pi_home.index.with_name("fresh.sqlite3"))
    fresh.refresh()
    assert {r["entry_id"]: r["selection_state"] for r in fresh.reader().execute(
        "SELECT entry_id, selection_state FROM events")} == got
    fresh.close()


def test_subagents_of_subagents(pi_home: Any) -> None:
    """A subagent's own subagents nest one folder deeper (`<session>/<Agent>/<Agent>.<Child>.jsonl`);
    each is a session whose parent is the file beside its folder, also when its header names
    none. Other files in those folders (artifacts) are not sessions."""
    folder = pi_home.sessions / "-proj"
    top = SessionBuilder(folder, cwd="/work/proj", flat=True, omp_title="top")
    top.user("plan the migration")
    inner = top.path.with_suffix("")
    scout = SessionBuilder(inner, cwd="/work/proj", flat=True, omp_title="")
    scout.user("list the tables")
    helper = SessionBuilder(inner / scout.path.stem, cwd="/work/proj", flat=True, omp_title="")
    helper.user("count the rows of each table")
    (inner / "0.bash.log").write_text("artifact")
    (inner / scout.path.stem / "notes.md").write_text("artifact")
    e = engine(pi_home.index)
    e.refresh()
    parents = {r["session_id"]: r["parent_path"] for r in e.reader().execute(
        "SELECT session_id, parent_path FROM sessions")}
    assert parents == {top.session_id: None, scout.session_id: str(top.path),
                       helper.session_id: str(scout.path)}
    trace = e.trace(f"pi-event:{helper.session_id}/{helper.ids[-1]}", ALL)
    assert [(x["relation"], x.get("sessionId")) for x in trace["lineage"]] == \
        [("session-parent", scout.session_id)]
    assert e.status(None)["skipped"] == []
    e.close()


def test_live_appends_keep_oh_my_pis_states(pi_home: Any, tmp_path: Path) -> None:
    """A live Oh My Pi session indexed after every append (an answer's calls, then their results,
    failed answers, the interrupted note, a branch, a /clear): each time, the states equal those
    of an index made from scratch (tree.compute, checked against Oh My Pi above)."""
    b = SessionBuilder(pi_home.sessions, cwd="/work/live", omp_title="live")
    e = engine(pi_home.index)

    def call(n: int) -> tuple[str, str, dict[str, Any]]:
        return (f"c{n}", "bash", {"command": f"step {n}"})

    steps: list[Any] = [
        lambda: b.user("start"),
        lambda: b.assistant(tool_calls=[call(1)]),            # bare, waiting for its result
        lambda: b.tool_result("c1", "bash", "one"),           # ...which brings it back
        lambda: (b.assistant(tool_calls=[call(2)]), b.tool_result("c2", "bash", "two")),
        lambda: b.assistant("thinking aloud", tool_calls=[call(3)]),  # not bare: stays
        lambda: b.tool_result("c3", "bash", "three"),
        lambda: b.assistant(tool_calls=[call(4)], stop_reason="aborted"),
        lambda: b.tool_result("c4", "bash", "aborted", is_error=True),  # a failed answer's
        lambda: b.assistant("half an answer", error="overloaded"),
        lambda: b.assistant(tool_calls=[call(5)]),            # bare between the failed and...
        lambda: b.custom_message("interrupted-thinking", "cut off", display=False),
        lambda: b.tool_result("c5", "bash", "five"),          # ...back: the failed one goes
        lambda: b.user("again"),
        lambda: b.branch(b.ids[-3]),
        lambda: b.assistant(tool_calls=[call(6)]),
        lambda: b.append("reset_boundary", {}),
        lambda: b.assistant(tool_calls=[call(7)]),
        lambda: b.tool_result("c7", "bash", "seven"),
        lambda: b.assistant("done"),
    ]

    def states(x: Any) -> dict[str, tuple[str, str]]:
        return {r["entry_id"]: (r["branch_state"], r["selection_state"]) for r in
                x.reader().execute("SELECT entry_id, branch_state, selection_state FROM events")}

    seen: set[str] = set()
    for n, step in enumerate(steps):
        step()
        e.refresh()
        fresh = engine(tmp_path / f"fresh-{n}.sqlite3")
        fresh.refresh()
        want = states(fresh)
        fresh.close()
        assert states(e) == want, f"after step {n}"
        seen |= {s for _, s in want.values()}
    assert {"direct", "dropped", "cleared", "not-selected"} <= seen
    e.close()


def test_a_title_record_alone_is_not_a_session_yet(pi_home: Any) -> None:
    """Oh My Pi writes the title record and the header together, but a reader can come between:
    the file waits, with its reason, and is a session once the header is complete."""
    folder = pi_home.sessions / "-proj"
    folder.mkdir(parents=True)
    path = folder / "2026-09-20T10-00-00-000Z_01a2436e-0000-7000-8000-000000000001.jsonl"
    slot = SessionBuilder.title_slot("half written", "2026-09-20T10:00:00.000Z")
    header = SessionBuilder.dumps({"type": "session", "version": 3,
                                   "id": "01a2436e-0000-7000-8000-000000000001",
                                   "timestamp": "2026-09-20T10:00:00.000Z", "cwd": "/work/proj"})
    path.write_bytes(slot + header[:40])
    e = engine(pi_home.index)
    e.refresh()
    skipped = e.status(None)["skipped"]
    assert [(s["path"], s["reason"]) for s in skipped] == \
        [(str(path), "header line after the title record not complete yet")]
    path.write_bytes(slot + header + b"\n")
    e.refresh()
    status = e.status(None)
    assert status["skipped"] == [] and status["sessionsBySource"] == {"omp": 1}
    e.close()
