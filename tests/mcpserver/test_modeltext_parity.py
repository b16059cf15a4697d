"""The MCP tools say what the Pi tools say: modeltext.py against the Pi extension's own formatter
(clients/pi/src/format.ts, run by node with jiti), on the engine's results for real-shaped sessions
(branches, compaction, errors, a fork, long text cut by the budget). Any drift between the two fails
here. Needs clients/pi's node_modules (scripts/setup.d/50-pi.sh)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from builder import SessionBuilder
from pi_event_search.core.authz import Scope
from pi_event_search.mcp import modeltext
from pi_event_search.query.search import Filters
from pi_event_search.service.engine import Engine

REPO = Path(__file__).resolve().parents[2]
EXT = REPO / "clients" / "pi"
SCRIPT = Path(__file__).with_name("format-parity.ts")


def _history(sessions: Path, cwd: str) -> None:
    sb = SessionBuilder(sessions, cwd)
    sb.session_info("the kangaroo build")
    sb.system({"preamble": "You are a kangaroo coding assistant."}, added=["read", "bash"])
    first = sb.user("why does the kangaroo build fail?\nsee the log below")
    call = sb.assistant(tool_calls=[("c1", "bash", {"command": "make kangaroo"})])
    failed = sb.tool_result("c1", "bash", "error: kangaroo.c:12: undefined reference\n" * 40,
                            is_error=True)
    sb.context_edit(failed, None)  # Pi 1.x: out of the model context; its read says so
    sb.context_edit(call, "ran make kangaroo")
    fork_at = sb.assistant("the kangaroo linker flags are wrong")
    sb.user("try the other kangaroo fix")
    sb.branch(fork_at)
    sb.user("abandon that, the kangaroo fix is in the Makefile")
    sb.assistant("editing the Makefile for the kangaroo target")
    sb.label(first, "kangaroo-start")
    sb.compaction("summary: the kangaroo build fixed by the Makefile", first)
    sb.bash("git log --oneline -3", "abc123 kangaroo fix\n")
    sb.fork(sessions, upto=fork_at).user("a kangaroo follow-up in a child session")
    other = SessionBuilder(sessions, cwd)
    other.user("first prompt of an unnamed kangaroo session " + "padding " * 60)
    other.assistant("«quoted» and \"quoted\" kangaroo text with `ticks`")


def test_same_text_as_the_pi_tools(pi_home, tmp_path):
    node = shutil.which("node")
    if node is None or not (EXT / "node_modules" / "jiti").exists():
        pytest.skip("clients/pi/node_modules/jiti missing: run scripts/setup.d/50-pi.sh")
    cwd = str((tmp_path / "proj").resolve())
    _history(pi_home.sessions, cwd)
    engine = Engine.open(pi_home.index, [])
    engine.refresh()
    scope = Scope.of(None)
    cases: list[dict[str, Any]] = []
    mine: list[str] = []
    # partial hits (no event holds "makefile linker" with "kangaroo target") and a corrected word
    queries = ("kangaroo", "kangaroo fix", "undefined reference", "", "kangaroo linker makefile",
               "kangaroo makefle", "kangaroo «fix» café")
    for query in queries:
        for max_chars in (12000, 900, 500):
            page = engine.search(query, Filters(), scope, limit=200)
            assert page.next_cursor is None
            view = {"query": query, "root": cwd, "current": False, "maxChars": max_chars}
            cases.append({"kind": "search", "result": {"hits": page.hits, "nextCursor": None,
                                                       "didYouMean": page.did_you_mean,
                                                       "indexing": None}, **view})
            mine.append(modeltext.search(page.hits, None, None, query=query, root=cwd,
                                         current=False, max_chars=max_chars,
                                         did_you_mean=page.did_you_mean).text)
            groups = engine.search_groups(query, Filters(), scope, limit=200)
            cases.append({"kind": "groups", "result": {"sessions": groups.groups,
                                                       "nextCursor": None,
                                                       "didYouMean": groups.did_you_mean,
                                                       "indexing": None}, **view})
            mine.append(modeltext.groups(groups.groups, None, None, query=query, root=cwd,
                                         current=False, max_chars=max_chars,
                                         did_you_mean=groups.did_you_mean).text)
    refs = sorted({h["ref"] for h in engine.search("", Filters(), scope, limit=200).hits})
    assert len(refs) > 10
    for ref in refs:
        for max_chars, order in ((12000, "append"), (500, "branch")):
            read = engine.read(ref, scope, length=max_chars, before=2, after=2, order=order)
            cases.append({"kind": "read", "result": read, "maxChars": max_chars})
            mine.append(modeltext.read(read, max_chars).text)
        traced = engine.trace(ref, scope)
        for max_chars in (12000, 300):
            cases.append({"kind": "trace", "result": traced, "maxChars": max_chars})
            mine.append(modeltext.trace(traced, max_chars).text)
    engine.close()

    data = tmp_path / "cases.json"
    data.write_text(json.dumps(cases))
    out = subprocess.run([node, "--import", "jiti/register", str(SCRIPT), str(data)], cwd=EXT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    theirs = json.loads(out.stdout)
    assert theirs["frame"] == [modeltext.FRAME_OPEN, modeltext.FRAME_CLOSE]
    assert any("omitted:" in t for t in mine) and any("not shown" in t for t in mine)
    assert any("more session" in t and "not shown" in t for t in mine)
    assert any("alternate branch" in t for t in mine) and any("session-" in t for t in mine)
    assert any("(partial: matched 2 of 3 words; missing: " in t for t in mine)
    assert any('No recorded event holds "makefle"; searched for "makefile"' in t for t in mine)
    assert any("context edit: removed from the model context" in t for t in mine)
    assert any("edited out of the context" in t for t in mine)
    assert any(" · replacement replaced" in t for t in mine)  # a context edit's metadata
    for case, ours, pi in zip(cases, mine, theirs["out"], strict=True):
        assert ours == pi, (case["kind"], case.get("query"), case["maxChars"])
