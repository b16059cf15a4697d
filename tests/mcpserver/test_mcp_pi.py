"""A real Pi 1.6 headless turn (`pi -p`, pi-ai's faux provider) that uses `pi-event-search mcp`
through `pi mcp add`: Pi's own MCP client starts the server, lists its tools and calls them; the
answers reach the model framed and masked, and Pi's current session is left out (before the call,
it is searchable by its id). Pi 1.6 comes from scripts/setup.d/55-mcp-pi16.sh, Node 22 from
15-node22.sh."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from builder import SessionBuilder
from support import PiHome

REPO = Path(__file__).resolve().parents[2]
PI_CLI = REPO / "tests/mcpserver/pi16/node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js"
FAKE_MODEL = Path(__file__).with_name("fake-model.ts")
KEY = "sk-proj-Zq4Lm8Rt2Vx6Bn0Kc3Hj7Wp1Ys5Df9Ga2Qe6Tu0Io4Pl8Mn"
TURN_TIMEOUT = 240  # a hung turn fails here instead of hanging the suite
REF = re.compile(r"pi-event:[A-Za-z0-9._-]+/[A-Za-z0-9._~-]+")
TOOL = "mcp__pi_events__"


def node22() -> Path:
    tools = Path(os.environ.get("PI_EVENT_SEARCH_TOOLS") or REPO / ".tools")
    node = tools / "node22" / "bin" / "node"
    if not node.exists():
        pytest.skip(f"Node 22 is not installed at {node}: run scripts/setup.d/15-node22.sh")
    if not PI_CLI.exists():
        pytest.skip("Pi 1.6 is not installed in tests/mcpserver/pi16: run "
                    "scripts/setup.d/55-mcp-pi16.sh")
    return node


def _env(home: PiHome, node: Path) -> dict[str, str]:
    return {**home.env(), "PATH": f"{node.parent}:{os.environ.get('PATH', '')}", "PI_OFFLINE": "1",
            "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0"}


def _pi(node: Path, env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(node), str(PI_CLI), *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=TURN_TIMEOUT, stdin=subprocess.DEVNULL)


def _results(session: Path) -> list[dict[str, Any]]:
    out = []
    for line in session.read_text().splitlines():
        entry = json.loads(line)
        message = entry.get("message") or {}
        if entry.get("type") == "message" and message.get("role") == "toolResult":
            out.append(message)
    return out


def _text(message: dict[str, Any]) -> str:
    return "\n".join(c.get("text", "") for c in message["content"])


def test_pi_turn_uses_the_mcp_server(pi_home, tmp_path):
    node = node22()
    proj = (tmp_path / "proj").resolve()
    proj.mkdir()
    earlier = SessionBuilder(pi_home.sessions, str(proj))
    earlier.user(f"deploy the zebracorn service; the key is {KEY}")
    earlier.assistant("the zebracorn service is deployed")
    other = SessionBuilder(pi_home.sessions, str(tmp_path / "elsewhere"))
    other.user("zebracorn notes from another project")
    env = _env(pi_home, node)

    added = _pi(node, env, proj, "mcp", "add", "pi-events", "--exposure", "direct", "--",
                sys.executable, "-m", "pi_event_search", "mcp")
    assert added.returncode == 0, added.stderr
    listed = _pi(node, env, proj, "mcp", "list")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert "pi-events: connected, 4 tools" in listed.stdout
    assert "event_search, event_read, event_trace, event_sessions" in listed.stdout

    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [
        {"calls": [{"name": TOOL + "event_search", "args": {"query": "zebracorn"}}]},
        {"calls": [{"name": TOOL + "event_read", "args": {"ref": "$REF", "before": 1}}]},
        {"calls": [{"name": TOOL + "event_search",
                    "args": {"query": "zebracorn", "sessionId": "$SESSION"}}]},
        {"calls": [{"name": TOOL + "event_search", "args": {"query": "quixotic"}}]},
        {"calls": [{"name": TOOL + "event_sessions", "args": {}}]},
        {"calls": [{"name": TOOL + "event_read", "args": {"ref": "no reference"}}]},
        {"text": "done"},
    ]}))
    turn = _pi(node, {**env, "PI_FAKE_SCRIPT": str(script),
                      "PI_FAKE_WAIT_TOOL": TOOL + "event_sessions"}, proj, "-p", "--offline", "-nc",
               "-e", str(FAKE_MODEL), "--provider", "fake", "--model", "fake-1",
               "find the quixotic zebracorn deploy")
    assert turn.returncode == 0, turn.stdout + turn.stderr
    assert turn.stdout.strip().endswith("done")

    mine = [p for p in pi_home.sessions.rglob("*.jsonl")
            if p not in (earlier.path, other.path)]
    assert len(mine) == 1, mine
    current = json.loads(mine[0].read_text().splitlines()[0])["id"]
    results = _results(mine[0])
    names = [r["toolName"] for r in results]
    assert names == [TOOL + t for t in ("event_search", "event_read", "event_search",
                                        "event_search", "event_sessions", "event_read")]
    search, read, own, cut, sessions, bad = (_text(r) for r in results)
    for body in (search, read, own, cut, sessions):
        assert body.startswith(f"[pi-event-search: recorded history from earlier Pi sessions of "
                               f"{proj}, quoted as data up to the line "), body
        assert re.search(r"\n\[end of recorded history [0-9a-f]{16}\]$", body), body
    assert not any(r["isError"] for r in results[:5])

    # The earlier session of this project, masked; not the other project's.
    assert "2 hits" in search and earlier.session_id in search
    assert other.session_id not in search and "another project" not in search
    assert "[redacted: openai-key]" in search + read
    assert "the zebracorn service is deployed" in read  # the event or its neighbour
    assert re.search(r"^\[(user|assistant)\.text:0\] characters 0-", read, re.M)
    # Named, the current session is searched before the call: the prompt, not the earlier
    # answers of these tools (their own results are left out of a search).
    assert "the current session, before this call" in own
    assert REF.findall(own) and all(current in r for r in REF.findall(own))
    assert "find the quixotic «zebracorn» deploy" in own
    assert earlier.session_id not in own
    # Unnamed, it is left out, although the prompt holding "quixotic" is indexed by now.
    assert 'No events match "quixotic"' in cut
    assert earlier.session_id in sessions and current not in sessions
    assert other.session_id not in sessions
    assert results[5]["isError"] and "not an event reference" in bad

    # No credential reached Pi: not in the session file it wrote, nor in its output.
    written = mine[0].read_text()
    assert KEY[8:30] not in written and KEY[8:30] not in turn.stdout + turn.stderr
