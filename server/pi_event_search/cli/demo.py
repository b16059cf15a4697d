"""A generated demo history, for first runs on a machine without any Pi sessions.

It is written to the cache directory (never to Pi's own directory) and searched as an extra
sessions directory, with its sessions recorded in the current project so they are visible. The
README's quick-start query ("build failed") finds events in it: a first run must show hits.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import orjson

from pi_event_search.core import locations
from pi_event_search.core.authz import default_root
from pi_event_search.source import sessiondirs
from pi_event_search.source.discovery import scan

Step = tuple[str, dict[str, Any]]


def _text(role: str, text: str) -> Step:
    return role, {"content": [{"type": "text", "text": text}]}


def _call(call_id: str, name: str, arguments: dict[str, Any], text: str = "") -> Step:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content.append({"type": "toolCall", "id": call_id, "name": name, "arguments": arguments})
    return "assistant", {"content": content}


def _result(call_id: str, name: str, text: str, *, error: bool = False) -> Step:
    return "toolResult", {"toolCallId": call_id, "toolName": name, "isError": error,
                          "content": [{"type": "text", "text": text}]}


# Session 1: the build broke after an upgrade, and one edit fixed it.
_BUILD: list[Step] = [
    _text("user", "the build failed after the upgrade to TypeScript 5.6, fix it"),
    _call("call_1", "bash", {"command": "npm run build"}, "Running the build to see the error."),
    _result("call_1", "bash",
            "> demo@1.0.0 build\n> tsc -p . && esbuild src/index.ts --bundle\n\n"
            "src/index.ts(3,30): error TS2307: Cannot find module './session-manager.js'\n"
            "Build failed with 1 error.\nexit code 1", error=True),
    _call("call_2", "edit", {"path": "src/index.ts", "edits": [
        {"oldText": "./session-manager.js", "newText": "./core/session-manager.js"}]}),
    _result("call_2", "edit", "Successfully replaced 1 block(s)."),
    _call("call_3", "bash", {"command": "npm run build"}),
    _result("call_3", "bash", "> demo@1.0.0 build\n\ndist/index.js  41.2kb\nDone in 812ms"),
    _text("assistant", "Fixed the import path (the module moved to src/core/); the build "
                       "passes now."),
]

# Session 2: a flaky test; the first idea was abandoned on a branch, the second one landed.
_FLAKY: list[Step] = [
    _text("user", "the websocket reconnect test fails on CI about one run in five"),
    _call("call_1", "bash", {"command": "npx vitest run test/ws.test.ts --repeat 20"}),
    _result("call_1", "bash",
            "FAIL test/ws.test.ts > reconnects after the server restarts\n"
            "AssertionError: expected 'closed' to be 'open'\n 4 failed | 16 passed", error=True),
    _text("assistant", "The retry uses a fixed 100 ms delay, so the client gives up before "
                       "the server is back."),
]
_FLAKY_OLD: list[Step] = [
    _text("user", "just raise the test timeout to 10 seconds"),
    _text("assistant", "Raised the timeout; the test still fails when the restart is slow."),
]
_FLAKY_NEW: list[Step] = [
    _text("user", "use exponential backoff with jitter for the reconnect instead"),
    _call("call_2", "edit", {"path": "src/ws.ts", "edits": [
        {"oldText": "setTimeout(connect, 100)",
         "newText": "setTimeout(connect, backoff(attempt++))"}]}),
    _result("call_2", "edit", "Successfully replaced 1 block(s)."),
    _text("assistant", "Reconnect now backs off exponentially with jitter; 50 repeated runs "
                       "passed."),
]


class _Writer:
    """Entries of one demo session, chained like Pi chains them (parentId = previous leaf)."""

    def __init__(self, session_id: str, cwd: str, minute: int) -> None:
        self.t0 = f"2026-05-01T10:{minute:02d}:{{:02d}}.000Z"
        self.lines: list[dict[str, Any]] = [{"type": "session", "version": 3, "id": session_id,
                                             "timestamp": self.t0.format(0), "cwd": cwd}]
        self.prefix = session_id[-2:]
        self.leaf: str | None = None

    def entry(self, entry_type: str, body: dict[str, Any]) -> str:
        n = len(self.lines)
        entry_id = f"d{self.prefix}{n:05x}"
        self.lines.append({"type": entry_type, "id": entry_id, "parentId": self.leaf,
                           "timestamp": self.t0.format(n), **body})
        self.leaf = entry_id
        return entry_id

    def steps(self, steps: list[Step]) -> str | None:
        for role, body in steps:
            ts = 1777629600000 + len(self.lines) * 1000
            self.entry("message", {"message": {"role": role, **body, "timestamp": ts}})
        return self.leaf

    def dump(self, path: Path) -> None:
        path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in self.lines))


def ensure_demo(args: argparse.Namespace) -> None:
    """Add a demo sessions directory when Pi has no history here, and say so on stderr."""
    dirs = sessiondirs.configured(flag=args.session_dir, extra=list(args.sessions_dir))
    if scan(dirs)[0]:
        return
    live = ", ".join(d.path for d in dirs)
    demo_dir = locations.cache_dir() / "demo-sessions"
    cwd = default_root()
    write_demo(demo_dir, cwd)
    args.sessions_dir = [*args.sessions_dir, str(demo_dir)]
    print(f"pi-event-search: no Pi history in {live}; searching a generated demo history "
          f"({demo_dir}) recorded in {cwd}", file=sys.stderr)


def write_demo(demo_dir: Path, cwd: str) -> None:
    demo_dir.mkdir(parents=True, exist_ok=True)
    (demo_dir / "demo.jsonl").unlink(missing_ok=True)  # the single file of earlier versions
    build = _Writer("demo-session-0001", cwd, 0)
    build.steps(_BUILD)
    build.entry("session_info", {"name": "demo: fix the build"})
    build.dump(demo_dir / "demo-build.jsonl")
    flaky = _Writer("demo-session-0002", cwd, 30)
    fork = flaky.steps(_FLAKY)
    flaky.steps(_FLAKY_OLD)
    flaky.leaf = fork  # the user went back in /tree and tried something else
    flaky.entry("branch_summary", {"fromId": fork, "summary": "Abandoned: raising the test "
                                   "timeout did not help; the test still failed."})
    flaky.steps(_FLAKY_NEW)
    flaky.entry("session_info", {"name": "demo: flaky websocket reconnect test"})
    flaky.dump(demo_dir / "demo-flaky.jsonl")
