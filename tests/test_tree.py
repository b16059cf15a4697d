"""Tree semantics, relationships, exact reads and traces (issue: tree/read/trace)."""

from __future__ import annotations

import pytest

from builder import SessionBuilder
from engine_support import ALL, engine, hits
from pi_event_search.core.errors import EngineError, NotFound


def states(e, session_id):
    return {r[0]: (r[1], r[2]) for r in e.conn.execute(
        "SELECT e.entry_id, e.branch_state, e.selection_state FROM events e JOIN sessions s "
        "ON s.sid = e.sid WHERE s.session_id = ?", (session_id,))}


def test_differential_against_pi(pi_home):
    """Our `selected` equals Pi's getBranch(); `direct`/`summarized` equal buildSessionContext()."""
    from piwriter import write_pi_sessions

    oracle = write_pi_sessions(pi_home.sessions)
    e = engine(pi_home.index)
    e.refresh()
    for rec in oracle["sessions"]:
        got = states(e, rec["sessionId"])
        selected = [i for i in rec["entries"] if got[i][0] == "selected"]
        assert selected == rec["selected"], rec["scenario"]
        direct = {i for i, (_, s) in got.items() if s == "direct"}
        assert direct == set(rec["context"]), rec["scenario"]
        summarized = {i for i, (_, s) in got.items() if s == "summarized"}
        compacted = [i for i in rec["context"] if i in got and
                     e.conn.execute("SELECT entry_type FROM events WHERE entry_id = ?",
                                    (i,)).fetchone()[0] == "compaction"]
        if not compacted:
            assert not summarized, rec["scenario"]
        else:
            assert summarized.isdisjoint(rec["context"])
            assert summarized <= set(rec["selected"])


@pytest.fixture
def example(pi_home):
    """core-concepts: A -> B -> C -> D, then E -> F under B; append order A..F."""
    sb = SessionBuilder(pi_home.sessions, "/p")
    a = sb.user("A first question")
    b = sb.assistant("B first answer")
    c = sb.user("C old branch question")
    d = sb.assistant("D old branch answer")
    sb.branch(b)
    e_ = sb.user("E new branch question")
    f = sb.assistant("F new branch answer")
    eng = engine(pi_home.index)
    eng.refresh()
    return eng, sb, dict(A=a, B=b, C=c, D=d, E=e_, F=f)


def ref(sb, entry):
    return f"{sb.session_id}/{entry}"


def test_core_concepts_example(example):
    e, sb, m = example
    ids = {v: k for k, v in m.items()}
    t = e.trace(ref(sb, m["E"]), ALL)
    assert ids[t["parent"]["entryId"]] == "B"
    assert [ids[c["entryId"]] for c in t["children"]] == ["F"]
    assert [ids[s["entryId"]] for s in t["siblings"]] == ["C"]
    sib = [r for r in t["relations"] if r["type"] == "sibling"]
    assert sib and all(r["label"] == "derived" for r in sib)
    t = e.trace(ref(sb, m["B"]), ALL)
    assert sorted(ids[c["entryId"]] for c in t["children"]) == ["C", "E"]
    r = e.read(ref(sb, m["C"]), ALL, order="branch", before=1, after=1)
    assert [ids[n["entryId"]] for n in r["neighbours"]["after"]] == ["D"]
    r = e.read(ref(sb, m["B"]), ALL, order="branch", after=2)
    assert [ids[n["entryId"]] for n in r["neighbours"]["after"]] == ["E", "F"]
    assert [ids[n["entryId"]] for n in r["neighbours"]["alternatives"]] == ["C"]
    r = e.read(ref(sb, m["E"]), ALL, order="append", before=1)
    assert ids[r["neighbours"]["before"][0]["entryId"]] == "D"
    r = e.read(ref(sb, m["E"]), ALL, order="branch", before=1)
    assert ids[r["neighbours"]["before"][0]["entryId"]] == "B"
    assert (e.trace(ref(sb, m["C"]), ALL)["towardLeaf"], e.trace(ref(sb, m["B"]), ALL)["towardLeaf"],
            e.trace(ref(sb, m["F"]), ALL)["towardLeaf"]) == ("parent", "child", "self")
    assert e.trace(ref(sb, m["B"]), ALL)["towardLeafRef"].endswith(m["E"])
    got = states(e, sb.session_id)
    assert {k for k, v in m.items() if got[v][0] == "selected"} == {"A", "B", "E", "F"}
    assert {k for k, v in m.items() if got[v][1] == "not-selected"} == {"C", "D"}


def test_unresolved_fork_stops_and_lists_candidates(pi_home):
    sb = SessionBuilder(pi_home.sessions, "/p")
    a = sb.user("root")
    b = sb.assistant("fork point")
    c1 = sb.user("first alternative")
    sb.branch(b)
    c2 = sb.user("second alternative")
    sb.branch(a)
    sb.assistant("the materialized branch")
    e = engine(pi_home.index)
    e.refresh()
    r = e.read(f"{sb.session_id}/{b}", ALL, order="branch", after=3)
    assert r["neighbours"]["after"] == [] and r["neighbours"]["stoppedAtFork"]
    assert {n["entryId"] for n in r["neighbours"]["alternatives"]} == {c1, c2}


def test_compaction_rewind_branch_summary_labels(pi_home):
    sb = SessionBuilder(pi_home.sessions, "/home/dev/proj")
    u1 = sb.user("old question about parsing")
    a1 = sb.assistant("old answer", tool_calls=[("r1", "read", {"path": "src/parse.ts"})])
    sb.tool_result("r1", "read", "parser source")
    u2 = sb.user("kept question")
    a2 = sb.assistant("kept answer")
    comp = sb.compaction("we fixed the parser", u2, details={"readFiles": ["src/parse.ts"],
                                                            "modifiedFiles": ["src/lex.ts"]})
    u3 = sb.user("after compaction")
    lab = sb.label(u1, "start")
    e = engine(pi_home.index)
    e.refresh()
    got = states(e, sb.session_id)
    assert got[u1][1] == got[a1][1] == "summarized"
    assert got[u2][1] == got[a2][1] == got[comp][1] == got[u3][1] == "direct"
    assert got[lab] == ("selected", "not-applicable")
    t = e.trace(f"{sb.session_id}/{u1}", ALL)
    assert t["labels"] == ["start"]
    assert any(r["type"] == "labels" and r["direction"] == "in" for r in t["relations"])
    t = e.trace(f"{sb.session_id}/{comp}", ALL)
    assert any(r["type"] == "compacts" and r["node"]["entryId"] == u2 for r in t["relations"])
    assert {(f["op"], f["path"]) for f in t["files"]} == {
        ("read", "/home/dev/proj/src/parse.ts"), ("changed", "/home/dev/proj/src/lex.ts")}
    t = e.trace(f"{sb.session_id}/{a1}", ALL)
    assert any(r["type"] == "tool-result-for" and r["direction"] == "in" for r in t["relations"])
    # rewind to the root (a second root), then a branch summary: the leaf moves, states follow
    sb.branch(None)
    root2 = sb.user("a second root")
    e.refresh()
    got = states(e, sb.session_id)
    assert got[root2] == ("selected", "direct") and got[u3] == ("alternate", "not-selected")
    bs = sb.branch_summary(a2, "Abandoned: tried a second root")
    e.refresh()
    got = states(e, sb.session_id)
    assert got[bs] == ("selected", "direct") and got[root2][0] == "alternate"
    assert got[comp][1] == "not-selected" and got[u1][1] == "direct"
    t = e.trace(f"{sb.session_id}/{bs}", ALL)
    assert any(r["type"] == "branch-summary-from" and r["node"]["entryId"] == a2
               for r in t["relations"])
    assert hits(e, "", branch_states=["alternate"])
    assert all(h["selectionState"] == "summarized" for h in
               hits(e, "", selection_states=["summarized"]))


def test_v1_file_has_synthetic_ids_and_chain_states(pi_home):
    sb = SessionBuilder(pi_home.sessions, "/p", version=None,
                        header_extra={"provider": "anthropic", "modelId": "claude"})
    sb.user("a v1 question")
    sb.assistant("a v1 answer")
    sb.append("compaction", {"summary": "v1 summary", "firstKeptEntryIndex": 1,
                             "tokensBefore": 3})
    sb.message({"role": "hookMessage", "customType": "hook", "content": "hook text"})
    e = engine(pi_home.index)
    e.refresh()
    got = states(e, sb.session_id)
    assert sorted(got) == ["v1~1", "v1~2", "v1~3", "v1~4"]
    # Pi migrates v1 into a chain; the compaction keeps from entry 1, so all stay in context
    assert set(got.values()) == {("selected", "direct")}
    assert hits(e, "hook text")[0]["kind"] == "custom.message"
    t = e.trace(f"{sb.session_id}/v1~2", ALL)
    assert t["parent"]["entryId"] == "v1~1"


def test_fork_keeps_both_sessions_and_reports_anchor(pi_home):
    parent = SessionBuilder(pi_home.sessions, "/p")
    parent.user("shared beginning")
    anchor = parent.assistant("shared answer")
    parent.user("only in the parent")
    child = parent.fork(pi_home.sessions, upto=anchor)
    child.user("only in the fork")
    e = engine(pi_home.index)
    e.refresh()
    shared = hits(e, "shared beginning")
    assert {h["sessionId"] for h in shared} == {parent.session_id, child.session_id}
    t = e.trace(f"{child.session_id}/{anchor}", ALL)
    lineage = t["lineage"][0]
    assert lineage["sessionId"] == parent.session_id
    assert lineage["forkAnchor"]["entryId"] == anchor
    assert lineage["forkAnchor"]["sessionId"] == parent.session_id
    t = e.trace(f"{parent.session_id}/{anchor}", ALL)
    assert t["lineage"][0]["relation"] == "session-child"


def test_read_after_file_changed_and_big_result(pi_home):
    sb = SessionBuilder(pi_home.sessions, "/p")
    sb.assistant(tool_calls=[("b", "bash", {"command": "cat big.log"})])
    big = sb.tool_result("b", "bash", "start " + "y" * 5_000_000 + " end",
                         images=[("image/png", b"\x89PNG" * 100)])
    e = engine(pi_home.index)
    e.refresh()
    r = e.read(f"{sb.session_id}/{big}", ALL, length=1000)
    frag = r["fragments"][0]
    assert frag["length"] == 1000 and frag["totalLength"] == 5_000_010 and frag["truncated"]
    reasons = {o["reason"] for o in r["omitted"]}
    assert {"image", "window"} <= reasons
    assert r["source"]["line"] == 3
    # the file is rewritten between search and read: the read notices and refreshes
    text = sb.path.read_text().replace('"id":"' + big, '"id":"0badc0de')
    sb.path.write_text(text)
    with pytest.raises((NotFound, EngineError)):
        e.read(f"{sb.session_id}/{big}", ALL)
    assert e.read(f"{sb.session_id}/0badc0de", ALL, length=10)["fragments"][0]["text"] == \
        "start yyyy"


def test_incremental_states_equal_a_fresh_index(pi_home):
    """Appends that extend the path (fast path), move the leaf, or compact (full recompute) all
    end where a fresh index of the same file ends."""
    from engine_support import snapshot

    sb = SessionBuilder(pi_home.sessions, "/p")
    e = engine(pi_home.index)
    first = sb.user("one")
    steps = [
        lambda: sb.assistant("two"),
        lambda: sb.label(first, "mark"),
        lambda: sb.compaction("summary of one", first),
        lambda: sb.user("after the compaction"),
        lambda: (sb.branch(first), sb.user("a new branch"))[1],
        lambda: sb.assistant("continues the new branch"),
        lambda: sb.branch_summary(None, "back to the root"),
        lambda: sb.user("and on"),
    ]
    for step in steps:
        step()
        e.refresh()
        fresh = engine(pi_home.root / f"fresh-{len(sb.ids)}.sqlite3")
        fresh.refresh()
        assert snapshot(e) == snapshot(fresh), f"after {len(sb.ids)} entries"
