"""Self-consistency of the files Pi's own SessionManager writes and of the oracle describing them
(see tests/piwriter.py). These check the fixture itself; indexer tests compare against it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from piwriter import by_scenario, write_pi_sessions

EXPECTED_SCENARIOS = {
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


@pytest.fixture(scope="module")
def pi_sessions(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    root = tmp_path_factory.mktemp("pi-sessions") / "sessions"
    return root, write_pi_sessions(root)


def read_lines(path: str) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def test_every_file_matches_its_record(pi_sessions: tuple[Path, dict[str, Any]]) -> None:
    root, oracle = pi_sessions
    assert oracle["pi_version"] == "0.73.1"
    assert {r["scenario"] for r in oracle["sessions"]} == EXPECTED_SCENARIOS
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


def test_selected_and_context_ids_are_entries(pi_sessions: tuple[Path, dict[str, Any]]) -> None:
    _, oracle = pi_sessions
    for rec in oracle["sessions"]:
        by_id = {e["id"]: e for e in read_lines(rec["path"])[1:]}
        sel = rec["selected"]
        assert set(sel) <= set(by_id), rec["scenario"]
        assert set(rec["context"]) <= set(sel), rec["scenario"]
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
            assert role == expected, (rec["scenario"], eid)


def test_core_concepts_branch(pi_sessions: tuple[Path, dict[str, Any]]) -> None:
    _, oracle = pi_sessions
    rec = by_scenario(oracle, "b-core-concepts")
    m = rec["marks"]
    assert rec["entries"] == [m[k] for k in "ABCDEF"]
    assert rec["selected"] == [m[k] for k in "ABEF"]
    assert rec["context"] == [m[k] for k in "ABEF"]


def test_compaction_context(pi_sessions: tuple[Path, dict[str, Any]]) -> None:
    _, oracle = pi_sessions
    rec = by_scenario(oracle, "c-compaction")
    m = rec["marks"]
    # last compaction's summary first, then firstKeptEntryId (t8u) up to it, then after it
    kept = ["t8u", "t8a", "t9u", "t9a", "t10u", "t10a"]
    assert rec["context"] == [m["c2"]] + [m[k] for k in kept]


def test_fork_shares_ids_with_parent(pi_sessions: tuple[Path, dict[str, Any]]) -> None:
    _, oracle = pi_sessions
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
            assert e == src_lines[e["id"]], "copied entries are verbatim"
    assert fork["labels"] == {m["U1"]: "retries"}

    cross = by_scenario(oracle, "f2-fork-from")
    core = by_scenario(oracle, "b-core-concepts")
    assert cross["parentSession"] == core["path"]
    assert cross["entries"][: len(core["entries"])] == core["entries"]


def test_big_tool_result_is_one_line(pi_sessions: tuple[Path, dict[str, Any]]) -> None:
    _, oracle = pi_sessions
    rec = by_scenario(oracle, "g-long-5mib-tool-result")
    big = rec["marks"]["big"]
    with open(rec["path"], encoding="utf-8") as f:
        line = next(ln for ln in f if f'"id":"{big}"' in ln[:200])
    text = json.loads(line)["message"]["content"][0]["text"]
    assert len(text) >= 5 * 1024 * 1024
    assert text.startswith("BUNDLE_START_MARKER") and text.endswith("BUNDLE_END_MARKER")
