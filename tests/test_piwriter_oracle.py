"""The files Pi's own SessionManager writes (tests/piwriter.py), for each supported Pi: Pi 1.6 and
the oldest, 0.73.1. First the fixture's self-consistency, then the oracle itself: every entry's
branch and selection state in the index equals what Pi's getBranch() and (1.6)
buildSessionProjection() say of it."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from engine_support import engine
from piwriter import VERSIONS, by_scenario, write_pi_sessions

BOTH = {
    "a-linear",
    "b-core-concepts",
    "c-compaction",
    "c2-compaction-unknown-first-kept",
    "c3-rewind-past-compaction",
    "c4-compaction-keeps-earlier-compaction",
    "d-branch-summary",
    "d2-root-and-empty-branch-summary",
    "e-second-root",
    "f-fork-source",
    "f-fork",
    "f2-fork-from",
    "g-long-5mib-tool-result",
}
EXPECTED_SCENARIOS = {
    "0.73": BOTH,
    "1.6": BOTH | {"h1-context-edits-leaf-a", "h1-context-edits-leaf-b",
                   "h2-edits-after-compaction", "h3-retain-none-compaction", "h4-multiple-roots",
                   "h5-custom-id"},
}


@pytest.fixture(scope="module", params=["1.6", "0.73"])
def pi_sessions(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
                ) -> tuple[str, Path, dict[str, Any]]:
    pi: str = request.param
    root = tmp_path_factory.mktemp(f"pi-{pi}-sessions") / "sessions"
    return pi, root, write_pi_sessions(root, pi=pi)


def read_lines(path: str) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def test_every_file_matches_its_record(pi_sessions: tuple[str, Path, dict[str, Any]]) -> None:
    pi, root, oracle = pi_sessions
    assert oracle["pi_version"] == VERSIONS[pi]
    assert {r["scenario"] for r in oracle["sessions"]} == EXPECTED_SCENARIOS[pi]
    on_disk = {str(p) for p in root.rglob("*.jsonl")}
    assert on_disk == {r["path"] for r in oracle["sessions"]}
    for rec in oracle["sessions"]:
        lines = read_lines(rec["path"])
        header, body = lines[0], lines[1:]
        assert header["type"] == "session", rec["scenario"]
        assert header["version"] == 3
        assert header["id"] == rec["sessionId"]
        assert header["cwd"] == rec["cwd"]
        assert rec["cwd"] == "/home/dev/proj" or rec["cwd"].startswith("/home/dev/proj/")
        assert header.get("parentSession") == rec["parentSession"]
        assert Path(rec["path"]).name.endswith(f"_{rec['sessionId']}.jsonl")
        ids = [e["id"] for e in body]
        assert ids == rec["entries"], rec["scenario"]
        assert len(set(ids)) == len(ids)
        assert rec["leafId"] == ids[-1]
        assert set(rec["marks"].values()) <= set(ids) or rec["scenario"] == "f-fork"


def test_selected_and_context_ids_are_entries(pi_sessions: tuple[str, Path, dict[str, Any]]
                                              ) -> None:
    _, _, oracle = pi_sessions
    for rec in oracle["sessions"]:
        by_id = {e["id"]: e for e in read_lines(rec["path"])[1:]}
        sel = rec["selected"]
        assert set(sel) <= set(by_id), rec["scenario"]
        assert set(rec["context"]) <= set(sel), rec["scenario"]
        assert set(rec["states"]) == set(by_id), rec["scenario"]
        assert sel[-1] == rec["leafId"]
        # the selected path is a parent chain ending at the leaf
        for parent, child in zip(sel, sel[1:], strict=False):
            assert by_id[child]["parentId"] == parent, rec["scenario"]
        assert len(rec["context"]) == len(rec["contextRoles"])
        for eid, role in zip(rec["context"], rec["contextRoles"], strict=True):
            etype = by_id[eid]["type"]
            expected = {
                "compaction": "compactionSummary",
                "branch_summary": "branchSummary",
                "custom_message": "custom",
            }.get(etype, by_id[eid].get("message", {}).get("role"))
            # Pi 1.6: a compaction with a prompt checkpoint is that system message, then its summary
            checkpoint = etype == "compaction" and role == "system" and "systemMessage" in by_id[eid]
            assert role == expected or checkpoint, (rec["scenario"], eid)


def test_core_concepts_branch(pi_sessions: tuple[str, Path, dict[str, Any]]) -> None:
    _, _, oracle = pi_sessions
    rec = by_scenario(oracle, "b-core-concepts")
    m = rec["marks"]
    assert rec["entries"] == [m[k] for k in "ABCDEF"]
    assert rec["selected"] == [m[k] for k in "ABEF"]
    assert rec["context"] == [m[k] for k in "ABEF"]


def test_compaction_context(pi_sessions: tuple[str, Path, dict[str, Any]]) -> None:
    _, _, oracle = pi_sessions
    rec = by_scenario(oracle, "c-compaction")
    m = rec["marks"]
    # last compaction's summary first, then firstKeptEntryId (t8u) up to it, then after it
    kept = ["t8u", "t8a", "t9u", "t9a", "t10u", "t10a"]
    assert [i for i in rec["context"] if i != m["c2"]] == [m[k] for k in kept]
    assert rec["context"][0] == m["c2"]


def test_fork_shares_ids_with_parent(pi_sessions: tuple[str, Path, dict[str, Any]]) -> None:
    pi, _, oracle = pi_sessions
    source = by_scenario(oracle, "f-fork-source")
    fork = by_scenario(oracle, "f-fork")
    assert fork["parentSession"] == source["path"]
    assert fork["sessionId"] != source["sessionId"]
    shared = set(fork["entries"]) & set(source["entries"])
    m = source["marks"]
    # the copied path root..A2 minus the label entry L1
    assert shared == {m[k] for k in ("model", "thinking", "U1", "A1", "U2", "A2")}
    src_lines = {e["id"]: e for e in read_lines(source["path"])[1:]}
    for e in read_lines(fork["path"])[1:]:
        if e["id"] in shared:
            want = dict(src_lines[e["id"]])
            if pi == "1.6" and e["id"] == m["U2"]:
                # 1.6 re-chains the path around the dropped label (0.73.1 left U2 under L1)
                assert want["parentId"] == m["L1"]
                want["parentId"] = m["A1"]
            assert e == want, "copied entries are verbatim"
    assert fork["labels"] == {m["U1"]: "retries"}

    cross = by_scenario(oracle, "f2-fork-from")
    core = by_scenario(oracle, "b-core-concepts")
    assert cross["parentSession"] == core["path"]
    assert cross["entries"][: len(core["entries"])] == core["entries"]


def test_big_tool_result_is_one_line(pi_sessions: tuple[str, Path, dict[str, Any]]) -> None:
    _, _, oracle = pi_sessions
    rec = by_scenario(oracle, "g-long-5mib-tool-result")
    big = rec["marks"]["big"]
    with open(rec["path"], encoding="utf-8") as f:
        line = next(ln for ln in f if f'"id":"{big}"' in ln[:200])
    text = json.loads(line)["message"]["content"][0]["text"]
    assert len(text) >= 5 * 1024 * 1024
    assert text.startswith("BUNDLE_START_MARKER") and text.endswith("BUNDLE_END_MARKER")


def test_every_state_equals_pis(pi_sessions: tuple[str, Path, dict[str, Any]],
                                pi_home: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """The oracle: for every entry of every file Pi wrote, our (branchState, selectionState)
    equals the one Pi's own answers give (write-sessions.mjs `states`)."""
    pi, root, oracle = pi_sessions
    e = engine(pi_home.index, [str(root)])
    e.refresh()
    compared, differences = 0, []
    for rec in oracle["sessions"]:
        got = {r[0]: [r[1], r[2]] for r in e.conn.execute(
            "SELECT e.entry_id, e.branch_state, e.selection_state FROM events e "
            "JOIN sessions s ON s.sid = e.sid WHERE s.session_id = ?", (rec["sessionId"],))}
        assert set(got) == set(rec["states"]), rec["scenario"]
        for entry_id, want in rec["states"].items():
            compared += 1
            if got[entry_id] != want:
                differences.append((rec["scenario"], entry_id, got[entry_id], want))
    states = Counter(s for rec in oracle["sessions"] for _, s in rec["states"].values())
    with capsys.disabled():
        print(f"\noracle Pi {oracle['pi_version']}: {len(oracle['sessions'])} files, "
              f"{compared} entries compared, {len(differences)} differences; "
              f"Pi's states: {dict(sorted(states.items()))}")
    assert differences == []
    assert compared >= 250
    if pi == "1.6":  # what only 1.6 writes is there to be compared
        assert states["edited-out"] >= 6
        kinds = Counter(json.loads(line).get("type") for rec in oracle["sessions"]
                        for line in Path(rec["path"]).read_text().splitlines()[1:])
        assert kinds["context_edit"] >= 20 and kinds["usage"] >= 2
