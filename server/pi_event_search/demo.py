"""A generated demo history, for first runs on a machine without any Pi sessions.

It is written to the cache directory (never to Pi's own directory) and searched as an extra
sessions directory, with its sessions recorded in the current project so they are visible.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import orjson

from pi_event_search import locations
from pi_event_search.authz import default_root

_T0 = "2026-05-01T10:00:{:02d}.000Z"

_SCRIPT: list[tuple[str, dict[str, object]]] = [
    ("user", {"content": [{"type": "text", "text": "the build fails after the upgrade, fix it"}]}),
    ("assistant", {"content": [{"type": "text", "text": "Running the build to see the error."},
                               {"type": "toolCall", "id": "call_1", "name": "bash",
                                "arguments": {"command": "npm run build"}}]}),
    ("toolResult", {"toolCallId": "call_1", "toolName": "bash", "isError": True, "content": [
        {"type": "text", "text": "error TS2307: Cannot find module './session-manager.js'\n"
                                 "npm ERR! ENOENT: no such file or directory\n\nexit code 1"}]}),
    ("assistant", {"content": [{"type": "toolCall", "id": "call_2", "name": "edit", "arguments": {
        "path": "src/index.ts", "edits": [{"oldText": "./session-manager.js",
                                           "newText": "./core/session-manager.js"}]}}]}),
    ("toolResult", {"toolCallId": "call_2", "toolName": "edit", "isError": False,
                    "content": [{"type": "text", "text": "Successfully replaced 1 block(s)."}]}),
    ("assistant", {"content": [{"type": "text", "text": "Fixed the import path; the build "
                                "passes now."}]}),
]


def ensure_demo(args: argparse.Namespace) -> None:
    """Add a demo sessions directory when Pi has no history here, and say so on stderr."""
    live = locations.pi_sessions_dir()
    if live.is_dir() and any(live.glob("*/*.jsonl")):
        return
    demo_dir = locations.cache_dir() / "demo-sessions"
    cwd = default_root()
    path = demo_dir / "demo.jsonl"
    write_demo(path, cwd)
    args.sessions_dir = [*args.sessions_dir, str(demo_dir)]
    print(f"pi-event-search: no Pi history in {live}; searching a generated demo history "
          f"({path}) recorded in {cwd}", file=sys.stderr)


def write_demo(path: Path, cwd: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [{"type": "session", "version": 3, "id": "demo-session-0001",
              "timestamp": _T0.format(0), "cwd": cwd}]
    parent = None
    for i, (role, body) in enumerate(_SCRIPT, start=1):
        entry_id = f"de{i:06x}"
        lines.append({"type": "message", "id": entry_id, "parentId": parent,
                      "timestamp": _T0.format(i), "message": {"role": role, **body,
                                                              "timestamp": 1777629600000 + i}})
        parent = entry_id
    lines.append({"type": "session_info", "id": "de0000ff", "parentId": parent,
                  "timestamp": _T0.format(59), "name": "demo: fix the build"})
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
