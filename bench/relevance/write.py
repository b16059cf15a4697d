"""Writes the three-style relevance set's sessions (sessions.py, with the routine
turns of filler.py around their steps) into a Pi sessions root: the "py" sessions
with this bench's JSONL writer, the "pi" sessions with Pi's own SessionManager
(piwriter.mjs, which needs tests/piwriter's npm install:
scripts/setup.d/10-piwriter.sh). Returns, per session key, its sessionId, file and the entry id
of every marked step. Also: `step_text`, the searchable words of one step, for the set's check.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from bench.common.corpus import encoded_dir, iso

from .filler import expand
from .sessions import SESSIONS, Session

HERE = Path(__file__).resolve().parent

START_MS = int(datetime(2026, 10, 1, 9, tzinfo=UTC).timestamp() * 1000)
PIWRITER = HERE.parent.parent / "tests" / "piwriter"


def set_digest() -> str:
    """Changes whenever a session's script or this writer changes: the cached copy is rewritten."""
    h = hashlib.sha256(repr(SESSIONS).encode())
    for f in ("write.py", "piwriter.mjs", "filler.py"):
        h.update((HERE / f).read_bytes())
    return h.hexdigest()[:16]


def step_text(step: tuple[Any, ...]) -> str:
    """The words a step records: a prompt, a reply, calls with their arguments, an output."""
    kind = step[0]
    if kind in ("u", "a", "n"):
        return str(step[2])
    if kind == "c":
        parts = [step[2] or ""] + [f"{tool} {json.dumps(args)}" for tool, args in step[3]]
        return "\n".join(parts)
    if kind == "r":
        return str(step[2])
    if kind == "b":
        return f"{step[2]}\n{step[3]}"
    raise ValueError(kind)


def _start(s: Session) -> int:
    return START_MS + s.day * 86_400_000 + (sum(map(ord, s.key)) % 600) * 60_000


def _write_py(s: Session, sessions_dir: Path, routine: bool = True) -> dict[str, Any]:
    rng = random.Random(s.key)
    clock = _start(s)
    h = f"{clock:012x}{rng.getrandbits(80):020x}"
    sid = f"{h[:8]}-{h[8:12]}-7{h[13:16]}-8{h[17:20]}-{h[20:32]}"
    lines = [orjson.dumps({"type": "session", "version": 3, "id": sid, "timestamp": iso(clock),
                           "cwd": s.cwd})]
    leaf: str | None = None
    marks: dict[str, str] = {}
    pending: list[tuple[str, str]] = []
    usage = {"input": 120, "output": 45, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 165,
             "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}

    def append(etype: str, payload: dict[str, Any]) -> str:
        nonlocal clock, leaf
        clock += rng.randint(1500, 20_000)
        eid = f"{rng.getrandbits(32):08x}"
        if etype == "message":
            payload["message"]["timestamp"] = clock
        lines.append(orjson.dumps({"type": etype, "id": eid, "parentId": leaf,
                                   "timestamp": iso(clock), **payload}))
        leaf = eid
        return eid

    def assistant(content: list[dict[str, Any]], stop: str) -> str:
        return append("message", {"message": {
            "role": "assistant", "content": content, "api": "anthropic-messages",
            "provider": "anthropic", "model": "claude-sonnet-4-5", "usage": usage,
            "stopReason": stop}})

    append("model_change", {"provider": "anthropic", "modelId": "claude-sonnet-4-5"})
    for st in expand(s.key, s.steps) if routine else s.steps:
        kind, mark = st[0], st[1]
        if kind == "u":
            eid = append("message", {"message": {"role": "user", "content": [
                {"type": "text", "text": st[2]}]}})
        elif kind == "a":
            eid = assistant([{"type": "text", "text": st[2]}], "stop")
        elif kind == "c":
            content: list[dict[str, Any]] = [{"type": "text", "text": st[2]}] if st[2] else []
            for tool, args in st[3]:
                cid = f"toolu_{rng.getrandbits(64):016x}"
                pending.append((cid, tool))
                content.append({"type": "toolCall", "id": cid, "name": tool, "arguments": args})
            eid = assistant(content, "toolUse")
        elif kind == "r":
            cid, tool = pending.pop(0)
            eid = append("message", {"message": {
                "role": "toolResult", "toolCallId": cid, "toolName": tool,
                "content": [{"type": "text", "text": st[2]}], "isError": st[3]}})
        elif kind == "b":
            eid = append("message", {"message": {
                "role": "bashExecution", "command": st[2], "output": st[3], "exitCode": st[4],
                "cancelled": False, "truncated": False}})
        elif kind == "n":
            eid = append("session_info", {"name": st[2]})
        else:
            raise ValueError(kind)
        if mark:
            marks[mark] = eid
    folder = sessions_dir / encoded_dir(s.cwd)
    folder.mkdir(parents=True, exist_ok=True)
    stamp = iso(_start(s)).replace(":", "-").replace(".", "-")
    path = folder / f"{stamp}_{sid}.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return {"sessionId": sid, "path": str(path), "marks": marks}


def _write_pi(sessions: list[Session], sessions_dir: Path, work: Path) -> dict[str, Any]:
    if not (PIWRITER / "node_modules" / "@mariozechner" / "pi-coding-agent").is_dir():
        raise SystemExit("Pi's writer is not installed: bash scripts/setup.d/10-piwriter.sh")
    spec = {"sessionsDir": str(sessions_dir),
            "sessions": [{"key": s.key, "cwd": s.cwd, "startMs": _start(s),
                          "steps": [list(st) for st in expand(s.key, s.steps)]} for s in sessions]}
    spec_path, out_path = work / "pi-spec.json", work / "pi-written.json"
    spec_path.write_text(json.dumps(spec))
    subprocess.run(["node", str(HERE / "piwriter.mjs"), str(spec_path), str(out_path)],
                   check=True)
    written: dict[str, Any] = json.loads(out_path.read_text())
    return written


def write_set(root: Path) -> dict[str, Any]:
    """The set's sessions under root/agent/sessions (rewritten when the set changed):
    {"digest", "agent_dir", "sessions_dir", "sessions": {key: {sessionId, path, marks}}}."""
    manifest = root / "set.json"
    digest = set_digest()
    if manifest.exists():
        m: dict[str, Any] = orjson.loads(manifest.read_bytes())
        if m.get("digest") == digest:
            return m
    shutil.rmtree(root, ignore_errors=True)
    sessions_dir = root / "agent" / "sessions"
    sessions_dir.mkdir(parents=True)
    written = {s.key: _write_py(s, sessions_dir) for s in SESSIONS if s.writer == "py"}
    written.update(_write_pi([s for s in SESSIONS if s.writer == "pi"], sessions_dir, root))
    m = {"digest": digest, "agent_dir": str((root / "agent").resolve()),
         "sessions_dir": str(sessions_dir.resolve()), "sessions": written}
    manifest.write_bytes(orjson.dumps(m))
    return m


if __name__ == "__main__":
    out = write_set(Path(sys.argv[1]))
    print(f"{len(out['sessions'])} sessions under {out['sessions_dir']}")
