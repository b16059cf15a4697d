"""The Pi extension end to end: the real Pi 1.6 CLI on Node 22 (and 0.73.1 in one test; both
installed by scripts/setup.d/50-pi.sh), headless, with a scripted model (pi-ai's faux provider,
tests/pi/fake-model.ts), our extension from clients/pi and the real server. Every assertion reads
the session JSONL that Pi itself wrote.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pihelp import EXT, FAKE_MODEL, RUN_TIMEOUT, WORD, Project, pi_argv, pi_node

from builder import SessionBuilder, encoded_dir


def run_pi(p: Project, turns: list[dict[str, Any]], prompt: str, path: str | None = None,
           session_dir: Path | None = None, cwd: Path | None = None, pi: str = "1.6"
           ) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    cwd = cwd or p.root
    script = p.tmp / "script.json"
    script.write_text(json.dumps({"turns": turns}))
    env = p.env(path) | {"PI_FAKE_SCRIPT": str(script),
                         "PI_FAKE_PROMPT_OUT": str(p.tmp / "system-prompt.txt")}
    argv = [*pi_argv(pi), "-p", "--offline", "-nc",
            "-e", str(EXT / "src" / "index.ts"), "-e", str(FAKE_MODEL),
            "--provider", "fake", "--model", "fake-1", prompt]
    if session_dir is not None:
        argv[3:3] = ["--session-dir", str(session_dir)]
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=RUN_TIMEOUT)
    where = session_dir or p.agent / "sessions" / encoded_dir(str(cwd))
    files = sorted(where.glob("*.jsonl"),
                   key=lambda f: f.stat().st_mtime)
    assert files, f"Pi wrote no session: {done.stdout[-2000:]} {done.stderr[-2000:]}"
    entries = [json.loads(line) for line in files[-1].read_text().splitlines() if line.strip()]
    return done, entries


def servers_using(index: Path) -> list[int]:
    """Processes whose environment names this index: the servers a Pi run started."""
    pids = []
    for proc in Path("/proc").iterdir():
        try:
            env = (proc / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"PI_EVENT_SEARCH_INDEX={index}".encode() in env and proc.name.isdigit():
            pids.append(int(proc.name))
    return pids


class Transcript:
    """The session Pi wrote: calls by id, their results, and append order."""

    def __init__(self, entries: list[dict[str, Any]]) -> None:
        self.session_id = entries[0]["id"]
        self.entries = entries[1:]
        self.order = {e["id"]: i for i, e in enumerate(self.entries)}
        self.calls: list[tuple[str, dict[str, Any]]] = []  # (holding entry id, call block)
        self.results: dict[str, dict[str, Any]] = {}
        for e in self.entries:
            msg = e.get("message") or {}
            if msg.get("role") == "assistant":
                self.calls += [(e["id"], b) for b in msg["content"] if b.get("type") == "toolCall"]
            if msg.get("role") == "toolResult":
                self.results[msg["toolCallId"]] = msg

    def result(self, index: int) -> tuple[str, dict[str, Any], dict[str, Any]]:
        holder, call = self.calls[index]
        return holder, call, self.results[call["id"]]

    def user_entry(self) -> str:
        return next(e["id"] for e in self.entries
                    if (e.get("message") or {}).get("role") == "user")


def text_of(result: dict[str, Any]) -> str:
    return "\n".join(c.get("text", "") for c in result["content"])


# Pi 1.6 (the reference) and 0.73.1, the oldest Pi this extension supports: this one end-to-end
# test runs on both; every other one on 1.6.
@pytest.mark.parametrize("pi", ["1.6", "0.73"])
def test_tools_search_read_trace_with_authorization_and_cutoff(project: Project, pi: str) -> None:
    turns = [
        {"calls": [{"name": "event_search", "args": {"query": WORD}},
                   {"name": "event_search", "args": {"query": WORD, "sessionId": "$SESSION"}}]},
        {"calls": [{"name": "event_read", "args": {"ref": "$REF"}},
                   {"name": "event_trace", "args": {"ref": "$REF"}},
                   {"name": "bash", "args": {"command": f"echo {WORD} checked"}}]},
        {"calls": [{"name": "event_search", "args": {"query": WORD, "sessionId": "$SESSION"}},
                   {"name": "event_search", "args": {"query": WORD, "sessionId": "$SESSION",
                                                     "tool": "event_search"}}]},
        {"calls": [{"name": "scratch_note", "args": {"text": f"{WORD} sequential"}},
                   {"name": "event_search", "args": {"query": WORD, "sessionId": "$SESSION"}}]},
        {"text": "done"},
    ]
    # Pi works in a subdirectory: the root is the Git worktree root above it.
    done, entries = run_pi(project, turns, f"what happened with {WORD} before?",
                           cwd=project.root / "sub", pi=pi)
    assert done.returncode == 0, done.stderr[-3000:]
    assert servers_using(project.tmp / "index.sqlite3") == [], "the server outlived Pi"
    prompt = (project.tmp / "system-prompt.txt").read_text()
    assert "event_search: Search earlier Pi sessions of this project" in prompt
    assert "Then use event_read on a hit's ref" in prompt  # the guidelines
    assert "pasted from /events), call event_read on it before acting on it" in prompt
    t = Transcript(entries)
    assert len(t.calls) == 9 and len(t.results) == 9, [c[1]["name"] for c in t.calls]

    # Turn 1: two parallel calls held by one assistant entry (the cutoff of both).
    cut1, _, default = t.result(0)
    cut1b, _, own = t.result(1)
    assert cut1 == cut1b
    assert not default["isError"] and not own["isError"], text_of(default) + text_of(own)

    hits = default["details"]["result"]["hits"]
    sessions = {h["sessionId"] for h in hits}
    assert f"pi-event:{project.earlier.session_id}/{project.earlier_hit}" in {h["ref"] for h in hits}
    assert project.elsewhere.session_id not in sessions, "a session of another directory leaked"
    assert t.session_id not in sessions, "the current session must be excluded by default"
    assert f"pi-event:{project.earlier.session_id}/{project.earlier_hit}" in text_of(default)
    assert f"«{WORD}»" in text_of(default)
    assert default["details"]["currentSession"] == {"sessionId": t.session_id, "cutoff": cut1}
    assert default["details"]["root"] == str(project.root.resolve())

    own_hits = own["details"]["result"]["hits"]
    assert {h["sessionId"] for h in own_hits} == {t.session_id}
    own_ids = {h["entryId"] for h in own_hits}
    assert t.user_entry() in own_ids, "the prompt precedes the cutoff: it must be found"
    assert cut1 not in own_ids, "the entry holding the invoking call is past the cutoff"
    assert all(t.order[i] < t.order[cut1] for i in own_ids)

    # Turn 2: read and trace the ref the search returned.
    _, read_call, read = t.result(2)
    _, trace_call, trace = t.result(3)
    ref = read_call["arguments"]["ref"]
    assert ref == hits[0]["ref"] and trace_call["arguments"]["ref"] == ref
    assert not read["isError"] and not trace["isError"], text_of(read) + text_of(trace)
    assert read["details"]["result"]["event"]["ref"] == ref
    assert text_of(read).splitlines()[1].startswith(ref)  # after the line framing it as data
    assert trace["details"]["result"]["event"]["ref"] == ref
    assert "parent:" in text_of(trace) and "toward leaf:" in text_of(trace)
    parent = trace["details"]["result"]["parent"]
    assert parent is not None and parent["ref"] in text_of(trace)

    # Turn 3: the current session again, later: turn 2 is now before the cutoff, turn 3 is not.
    cut2, _, bash = t.result(4)
    assert not bash["isError"], text_of(bash)
    bash_entry = next(e["id"] for e in t.entries
                      if (e.get("message") or {}).get("toolCallId") == t.calls[4][1]["id"])
    cut3, _, later = t.result(5)
    later_ids = {h["entryId"] for h in later["details"]["result"]["hits"]}
    assert {cut2, bash_entry} <= later_ids, "an earlier turn of the current session is searchable"
    assert cut3 not in later_ids
    assert all(t.order[i] < t.order[cut3] for i in later_ids)
    # The tools' own calls and answers are left out (they repeat old hits), unless asked for.
    assert cut1 not in later_ids
    assert not any(h["toolName"] == "event_search" for h in later["details"]["result"]["hits"])
    _, _, searches = t.result(6)
    asked = {h["entryId"] for h in searches["details"]["result"]["hits"]}
    assert cut1 in asked and asked <= {e["id"] for e in t.entries if t.order[e["id"]] < t.order[cut3]}

    # Turn 4, sequential: the note's result is on disk (and indexed) before the search runs, but
    # it comes after the entry holding the call: excluded.
    cut4, _, note = t.result(7)
    note_entry = next(e["id"] for e in t.entries
                      if (e.get("message") or {}).get("toolCallId") == t.calls[7][1]["id"])
    _, _, seq = t.result(8)
    assert t.order[note_entry] < t.order[next(
        e["id"] for e in t.entries
        if (e.get("message") or {}).get("toolCallId") == t.calls[8][1]["id"])], "ran in order"
    seq_ids = {h["entryId"] for h in seq["details"]["result"]["hits"]}
    assert {cut2, bash_entry} <= seq_ids and not {cut4, note_entry} & seq_ids


def test_sessions_in_a_custom_session_dir_are_found(project: Project) -> None:
    """Pi keeps this project's sessions in a directory of its own (--session-dir): the extension
    tells the server to look there too."""
    custom = project.tmp / "custom-sessions"
    custom.mkdir()
    kept = SessionBuilder(custom, str(project.root), flat=True)
    hit = kept.user(f"the {WORD} kept in a custom directory")
    turns = [{"calls": [{"name": "event_search", "args": {"query": f"{WORD} custom"}}]},
             {"text": "done"}]
    done, entries = run_pi(project, turns, "search please", session_dir=custom)
    assert done.returncode == 0, done.stderr[-3000:]
    _, _, result = Transcript(entries).result(0)
    assert not result["isError"], text_of(result)
    # First: the one event with both words (partial matches of the default directory follow).
    assert [h["ref"] for h in result["details"]["result"]["hits"]][:1] == [
        f"pi-event:{kept.session_id}/{hit}"]


def test_no_server_and_no_python_says_exactly_what_to_install(project: Project) -> None:
    """No server anywhere, and no Python to install one with: the tool error names the packages."""
    bare = project.tmp / "bare-bin"  # node and git only
    bare.mkdir()
    for tool in ("node", "git"):
        found = pi_node() if tool == "node" else shutil.which(tool)
        (bare / tool).symlink_to(found or f"/usr/bin/{tool}")
    turns = [{"calls": [{"name": "event_search", "args": {"query": WORD}}]}, {"text": "done"}]
    done, entries = run_pi(project, turns, "search please", path=str(bare))
    assert done.returncode == 0, done.stderr[-3000:]
    _, _, result = Transcript(entries).result(0)
    assert result["isError"] is True
    text = text_of(result)
    assert "needs Python 3.11 or newer" in text and "sudo apt install python3 python3-venv" in text, text
    assert "eventSearch.server" in text, text
    assert not (project.tmp / "home" / ".local" / "share" / "pi-event-search" / "pi-extension"
                / "installed.json").exists()


def test_server_that_never_answers_times_out_with_the_install_hint(project: Project) -> None:
    hang = [sys.executable, "-c", "import time; time.sleep(600)", "serve"]
    settings = project.agent / "settings.json"  # the user's: a project cannot name a server
    settings.write_text(json.dumps({"eventSearch": {"server": hang, "startTimeoutMs": 1500}}))
    turns = [{"calls": [{"name": "event_search", "args": {"query": WORD}}]}, {"text": "done"}]
    done, entries = run_pi(project, turns, "search please")
    assert done.returncode == 0, done.stderr[-3000:]
    _, _, result = Transcript(entries).result(0)
    assert result["isError"] is True
    assert "did not answer" in text_of(result) and "pi install" in text_of(result), text_of(result)


def test_search_grouped_by_session_gives_each_sessions_top_hit(project: Project) -> None:
    """`groupBy: "session"` in a real turn: one line per session, each starting with the ref of the
    session's strongest hit, which is its first hit in the event-level order of the same search
    (asked in the same turn, so with the same cutoff); names and first prompts masked."""
    key = "sk-proj-Qx7vR2mN8kL4pT6wY1zB3cD5fG9hJ0aS"
    sessions = project.agent / "sessions"
    strong = SessionBuilder(sessions, str(project.root))
    strong.user(f"{WORD} {WORD} {WORD}: why is it everywhere? my key is {key}")
    strong.assistant(f"The {WORD} config is read twice.")
    named = SessionBuilder(sessions, str(project.root))
    named.user("deploy the app")
    named.assistant(f"Deployed; the {WORD} step was skipped.")
    named.session_info(f"deploy with {key}")
    turns = [{"calls": [{"name": "event_search", "args": {"query": WORD, "groupBy": "session"}},
                        {"name": "event_search", "args": {"query": WORD, "limit": 50}}]},
             {"text": "done"}]
    done, entries = run_pi(project, turns, f"which session had {WORD}?")
    assert done.returncode == 0, done.stderr[-3000:]
    t = Transcript(entries)
    _, _, grouped = t.result(0)
    _, _, events = t.result(1)
    assert not grouped["isError"] and not events["isError"], text_of(grouped) + text_of(events)
    groups = grouped["details"]["result"]["sessions"]
    hits = events["details"]["result"]["hits"]
    assert events["details"]["result"]["nextCursor"] is None  # the whole event-level result
    tops: dict[str, str] = {}
    counts: dict[str, int] = {}
    for h in hits:
        tops.setdefault(h["sessionId"], h["ref"])
        counts[h["sessionId"]] = counts.get(h["sessionId"], 0) + 1
    assert [g["top"]["ref"] for g in groups] == list(tops.values())
    assert {g["sessionId"]: g["matches"] for g in groups} == counts
    assert [g["top"] for g in groups] == [next(h for h in hits if h["ref"] == r) for r in tops.values()]
    ids = [g["sessionId"] for g in groups]
    assert set(ids) == {project.earlier.session_id, strong.session_id, named.session_id}
    assert t.session_id not in ids and project.elsewhere.session_id not in ids

    text = text_of(grouped)
    lines = text.splitlines()
    assert lines[0].startswith("[pi-event-search: recorded history")
    assert re.fullmatch(r"\[end of recorded history [0-9a-f]{16}\]", lines[-1]), lines[-1]
    assert lines[-1][1:-1] in lines[0]  # the opening line names this answer's boundary
    rows = [line for line in lines if line.startswith("[") and " pi-event:" in line]
    assert [row.split(" ")[1] for row in rows] == list(tops.values()), text
    assert any('"fix the build"' in row and "2 of" in row for row in rows), text
    assert any('"deploy with [redacted' in row for row in rows), text
    assert any('first prompt "' in row and "[redacted" in row for row in rows), text
    # Neither the model's text nor the details Pi writes into the session carry the key.
    assert key not in text and key not in json.dumps(grouped["details"])
    assert "\x1b" not in json.dumps(grouped)


def test_states_of_a_session_pi_16_wrote_in_real_turns_equal_pis(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """Real Pi 1.6 turns write what SessionManager scripts do not: the prompt as a system message
    and its tool loadout, answers with a thinking level, the context edit of its own recovery from
    a failed attempt. Every entry's states in the index equal
    those Pi's own getBranch() and buildSessionProjection() give (tests/piwriter/states-of.mjs)."""
    from pi_event_search.core.authz import Scope
    from pi_event_search.service.engine import Engine
    from piwriter import states_by_pi

    # The first attempt fails with a provider error: Pi retries it, and takes the failed attempt
    # out of the model context with a context edit of its own (its recovery).
    turns = [{"error": "503 service overloaded"},
             {"calls": [{"name": "bash", "args": {"command": f"echo {WORD} checked"}}]},
             {"text": "done"}]
    done, entries = run_pi(project, turns, f"check {WORD} once more")
    assert done.returncode == 0, done.stderr[-3000:]
    failed = [e["id"] for e in entries if (e.get("message") or {}).get("stopReason") == "error"]
    edits = [e for e in entries if e["type"] == "context_edit"]
    assert len(failed) == 1 and [(e["targetId"], e["replacement"]) for e in edits] == [
        (failed[0], None)], "Pi's own recovery edit"
    system = [e for e in entries if (e.get("message") or {}).get("role") == "system"]
    assert system and system[0]["message"].get("toolsAdded"), "Pi 1.6 wrote its prompt"
    assert any("thinkingLevel" in (e.get("message") or {}) for e in entries), "and the level"
    files = sorted((project.agent / "sessions").rglob("*.jsonl"))
    pis = states_by_pi(files, project.tmp / "states.json")
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(project.agent))
    engine = Engine.open(project.tmp / "oracle-index.sqlite3", [])
    try:
        engine.refresh()
        compared = 0
        for pi in pis.values():
            got = {r[0]: [r[1], r[2]] for r in engine.conn.execute(
                "SELECT e.entry_id, e.branch_state, e.selection_state FROM events e "
                "JOIN sessions s ON s.sid = e.sid WHERE s.session_id = ?", (pi["sessionId"],))}
            assert got == pi["states"], pi["path"]
            compared += len(got)
        assert engine.read(f"{entries[0]['id']}/{failed[0]}", Scope.of(None))["event"][
            "selectionState"] == "edited-out"
        assert compared >= len(entries) - 1
    finally:
        engine.close()
