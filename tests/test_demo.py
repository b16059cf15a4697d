"""The quick start's first run: with no Pi history, `search --demo` searches a generated demo
history, says so, and the README's query finds something in it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def _quick_start_query() -> str:
    """The query of the README's first quick-start command (so the test follows the README)."""
    m = re.search(r'\./scripts/install-and-search "([^"]+)"', README.read_text())
    assert m, "README quick start lost its install-and-search command"
    return m.group(1)


def _demo_search(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / "cache")}
    for var in ("PI_CODING_AGENT_DIR", "PI_EVENT_SEARCH_INDEX"):
        env.pop(var, None)
    return subprocess.run([sys.executable, "-m", "pi_event_search", "search", "--demo", "--all",
                           *args], cwd=home, env=env, capture_output=True, text=True,
                          timeout=120)


def test_quick_start_query_finds_demo_events(tmp_path: Path) -> None:
    proc = _demo_search(tmp_path, _quick_start_query(), "--json")
    assert proc.returncode == 0, proc.stderr
    assert "generated demo history" in proc.stderr
    hits = json.loads(proc.stdout)["hits"]
    assert hits, "the README's quick-start query finds nothing in the demo history"
    assert all(h["sessionId"].startswith("demo-session-") for h in hits)
    assert all(h["cwd"] == str(tmp_path) for h in hits)


def test_demo_shows_an_abandoned_branch(tmp_path: Path) -> None:
    proc = _demo_search(tmp_path, "timeout", "--json")
    assert proc.returncode == 0, proc.stderr
    states = {h["kind"]: h["branchState"] for h in json.loads(proc.stdout)["hits"]}
    assert states.get("user.text") == "alternate"
    assert states.get("summary.branch") == "selected"


def test_no_demo_when_pi_history_exists(tmp_path: Path) -> None:
    sessions = tmp_path / ".pi" / "agent" / "sessions" / "--p--"
    sessions.mkdir(parents=True)
    (sessions / "s.jsonl").write_text(json.dumps(
        {"type": "session", "version": 3, "id": "real-1", "timestamp": "2026-01-01T00:00:00Z",
         "cwd": str(tmp_path)}) + "\n")
    proc = _demo_search(tmp_path, _quick_start_query(), "--json")
    assert proc.returncode == 0, proc.stderr
    assert "demo" not in proc.stderr
    assert json.loads(proc.stdout)["hits"] == []
