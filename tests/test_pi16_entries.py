"""What Pi 1.6 writes, read back from files Pi 1.6 itself wrote (tests/piwriter.py): a context
edit's target says which edit decides its part of the model context, branch by branch and as of a
caller's cutoff; context edits are traced both ways; system messages, usage entries and an
answer's thinking level are typed events with their metadata; system prompts are searched only
when asked for. (The states themselves: tests/test_piwriter_oracle.py.)"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from builder import SessionBuilder
from engine_support import ALL, cli, engine, hits
from pi_event_search.core.authz import Scope
from pi_event_search.service.engine import Engine
from piwriter import by_scenario, write_pi_sessions
from support import PiHome


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Engine, dict[str, Any]]]:
    tmp = tmp_path_factory.mktemp("pi16")
    home = PiHome(tmp, tmp / "agent", tmp / "agent" / "sessions", tmp / "index.sqlite3")
    oracle = write_pi_sessions(home.sessions, pi="1.6")
    with pytest.MonkeyPatch.context() as mp:  # the CLI finds them as Pi's own sessions
        for key in ("PI_CODING_AGENT_DIR", "PI_EVENT_SEARCH_INDEX", "XDG_CACHE_HOME",
                    "XDG_CONFIG_HOME"):
            mp.setenv(key, home.env()[key])
        e = engine(home.index)
        e.refresh()
        yield e, oracle


def ref(rec: dict[str, Any], mark: str) -> str:
    return f"pi-event:{rec['sessionId']}/{rec['marks'][mark]}"


def edit_of(e: Engine, rec: dict[str, Any], mark: str, scope: Scope = ALL) -> Any:
    event = e.read(ref(rec, mark), scope)["event"]
    return event["selectionState"], event.get("contextEdit")


def test_the_latest_edit_on_the_active_branch_decides(world: tuple[Engine, dict[str, Any]]
                                                      ) -> None:
    e, oracle = world
    on_a = by_scenario(oracle, "h1-context-edits-leaf-a")
    on_b = by_scenario(oracle, "h1-context-edits-leaf-b")
    removed = lambda rec, m: {"ref": ref(rec, m), "replacement": "removed"}  # noqa: E731
    replaced = lambda rec, m: {"ref": ref(rec, m), "replacement": "replaced"}  # noqa: E731
    # Leaf on branch a: a's edits count, b's do not.
    assert edit_of(e, on_a, "R1") == ("edited-out", removed(on_a, "a_E1"))
    assert edit_of(e, on_a, "A1") == ("direct", replaced(on_a, "a_E2"))
    assert edit_of(e, on_a, "U1") == ("direct", replaced(on_a, "a_E3"))
    assert edit_of(e, on_a, "CM") == ("direct", replaced(on_a, "a_E5"))  # null, then replaced
    assert edit_of(e, on_a, "A2") == ("edited-out", removed(on_a, "a_E7"))  # replaced, then null
    assert edit_of(e, on_a, "U2") == ("direct", None)  # b took it out, on b only
    # The same fork with the leaf on branch b.
    assert edit_of(e, on_b, "R1") == ("direct", replaced(on_b, "b_E1"))
    assert edit_of(e, on_b, "U2") == ("edited-out", removed(on_b, "b_E2"))
    assert edit_of(e, on_b, "A2") == ("direct", replaced(on_b, "b_E3"))
    assert edit_of(e, on_b, "U1") == ("direct", None)
    # A read shows the original content, whatever replaced it.
    r = e.read(ref(on_a, "A1"), ALL)
    assert [f["text"] for f in r["fragments"] if f["kind"] == "assistant.text"] == [
        "Running the tests."]


def test_edits_around_compactions(world: tuple[Engine, dict[str, Any]]) -> None:
    e, oracle = world
    rec = by_scenario(oracle, "h2-edits-after-compaction")
    assert edit_of(e, rec, "t3a") == ("direct", {"ref": ref(rec, "E_kept"),
                                                 "replacement": "replaced"})
    assert edit_of(e, rec, "t4a")[0] == "edited-out"
    assert edit_of(e, rec, "t1u") == ("summarized", None)  # edited, but summarized away
    assert edit_of(e, rec, "S1") == ("summarized", None)  # the checkpoint stands for it
    none = by_scenario(oracle, "h3-retain-none-compaction")
    assert edit_of(e, none, "t1a") == ("summarized", None)
    assert edit_of(e, none, "t3a")[0] == "edited-out"


def test_a_callers_own_session_sees_edits_made_before_its_cutoff_only(
        world: tuple[Engine, dict[str, Any]]) -> None:
    e, oracle = world
    rec = by_scenario(oracle, "h1-context-edits-leaf-a")
    m = rec["marks"]
    before = Scope.of(None, current_session=rec["sessionId"], cutoff=m["a_E2"])
    assert edit_of(e, rec, "R1", before)[0] == "edited-out"  # a_E1 precedes the cutoff
    assert edit_of(e, rec, "A1", before) == ("direct", None)  # a_E2 is the cutoff itself
    early = Scope.of(None, current_session=rec["sessionId"], cutoff=m["a_E1"])
    assert edit_of(e, rec, "R1", early) == ("direct", None)
    states = {h["entryId"]: h["selectionState"] for h in hits(
        e, "OVERFLOW_NOISE_MARKER", early, session_id=rec["sessionId"])}
    assert states == {m["R1"]: "direct"}


def test_context_edits_are_traced_both_ways(world: tuple[Engine, dict[str, Any]]) -> None:
    e, oracle = world
    rec = by_scenario(oracle, "h1-context-edits-leaf-a")
    m = rec["marks"]
    edits_out = [(r["direction"], r["node"]["entryId"]) for r in e.trace(ref(rec, "a_E1"), ALL)[
        "relations"] if r["type"] == "edits"]
    assert edits_out == [("out", m["R1"])]
    edits_in = sorted((r["direction"], r["node"]["entryId"]) for r in e.trace(
        ref(rec, "R1"), ALL)["relations"] if r["type"] == "edits")
    assert edits_in == sorted([("in", m["a_E1"]), ("in", m["b_E1"])])
    code, out, _ = cli("trace", "--all", ref(rec, "a_E1"))
    assert code == 0, out
    assert f"edits                out recorded pi-event:{rec['sessionId']}/{m['R1']}" in out


def test_typed_events_and_their_metadata(world: tuple[Engine, dict[str, Any]]) -> None:
    e, oracle = world
    rec = by_scenario(oracle, "h1-context-edits-leaf-a")
    system = e.read(ref(rec, "S0"), ALL)
    assert system["event"]["role"] == "system" and system["event"]["contextRole"] == "control"
    assert system["event"]["metadata"]["toolsAdded"] == ["read", "bash", "edit", "write"]
    assert {f["kind"] for f in system["fragments"]} == {"system.prompt"}
    patch = e.read(ref(rec, "a_S1"), ALL)["event"]["metadata"]
    assert patch["toolsRemoved"] == ["write"] and patch["sectionsRemoved"] == ["cwd"]
    usage = e.read(ref(rec, "usage"), ALL)["event"]
    assert usage["entryType"] == "usage" and usage["selectionState"] == "not-applicable"
    assert usage["metadata"]["kind"] == "cache_warm"
    assert usage["metadata"]["totalTokens"] == 165
    answer = e.read(ref(rec, "A1"), ALL)["event"]
    assert answer["metadata"] == {"thinkingLevel": "high"}
    edit = e.read(ref(rec, "a_E2"), ALL)
    assert edit["event"]["metadata"] == {"targetId": rec["marks"]["A1"], "replacement": "replaced"}
    assert [f["text"] for f in edit["fragments"]] == ["Ran the tests (output trimmed)."]
    assert edit["event"]["contextRole"] == "control"
    code, out, _ = cli("read", "--all", ref(rec, "R1"))
    assert code == 0, out
    assert f"context edit: removed from the model context by {ref(rec, 'a_E1')}" in out


def test_system_prompts_match_only_when_asked_for(world: tuple[Engine, dict[str, Any]]) -> None:
    e, oracle = world
    assert hits(e, "SYSTEM_PREAMBLE_MARKER") == []
    found = hits(e, "SYSTEM_PREAMBLE_MARKER", kinds=["system.prompt"])
    prompts = {r["marks"][k] for r in oracle["sessions"] for k in ("S0", "S0b")
               if k in r["marks"]}
    assert {h["entryId"] for h in found} == prompts and all(
        h["kind"] == "system.prompt" for h in found)
    # A replacement is what the model read from then on: searchable.
    rec = by_scenario(oracle, "h1-context-edits-leaf-a")
    shortened = hits(e, "shortened", session_id=rec["sessionId"])
    assert [(h["entryId"], h["kind"]) for h in shortened] == [
        (rec["marks"]["b_E1"], "context.edit")]


def test_custom_session_id(world: tuple[Engine, dict[str, Any]], tmp_path: Path) -> None:
    e, oracle = world
    rec = by_scenario(oracle, "h5-custom-id")
    assert rec["sessionId"] == "my.refactor_2026"
    r = e.read(ref(rec, "u1"), ALL)
    assert r["event"]["sessionId"] == "my.refactor_2026"
    assert r["event"]["sessionName"] == "config refactor"


def test_an_appended_context_edit_changes_its_targets_state(pi_home: PiHome) -> None:
    """The incremental path: an edit appended to an indexed session recomputes the states of the
    entries before it; a later edit of the same target undoes it; a system message appended after
    a compaction is in the context, one in its kept range is not."""
    sb = SessionBuilder(pi_home.sessions, "/p")
    sb.system({"preamble": "You are a wombat assistant."}, added=["bash"])
    u = sb.user("run the wombat tests")
    a = sb.assistant("wombat tests: 3 failed")
    e = engine(pi_home.index)
    e.refresh()

    def state(entry: str) -> str:
        return str(e.read(f"{sb.session_id}/{entry}", ALL)["event"]["selectionState"])

    assert state(a) == "direct"
    edit = sb.context_edit(a, None)
    assert e.refresh_paths({str(sb.path)}).changed == {"appended": 1}
    assert state(a) == "edited-out"
    assert e.read(f"{sb.session_id}/{a}", ALL)["event"]["contextEdit"] == {
        "ref": f"pi-event:{sb.session_id}/{edit}", "replacement": "removed"}
    sb.context_edit(a, "wombat tests ran")
    e.refresh()
    assert state(a) == "direct"
    kept_system = sb.system({"skills": "<skills>wombat</skills>"})
    sb.compaction("summary: the wombat tests", u)
    after = sb.system({"skills": None})
    e.refresh()
    assert (state(kept_system), state(after), state(u)) == ("not-selected", "direct", "direct")
