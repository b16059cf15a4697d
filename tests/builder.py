"""Writes real-shaped Pi session JSONL for tests, the way Pi does: one compact JSON object per line,
appended as entries happen, with the current leaf as each new entry's parent.

Shapes follow ../shared/reference/pi-session-format.md (v3 unless asked otherwise). Files written
by Pi's own SessionManager come from tests/piwriter/ instead; both kinds are used by the tests.
`omp_title` makes an Oh My Pi file (its 256-byte title record on line 1, session-title-slot.ts):
most Oh My Pi files come from its own writer (tests/ompwriter/), this covers the shapes it does
not write here (a title rewritten in place, older entry types, a parent recorded by id).
"""

from __future__ import annotations

import hashlib
import itertools
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

_SERIAL = itertools.count()  # distinct ids for sessions built alike within one process
BASE_TIME = datetime(2026, 5, 1, 10, 0, 0, tzinfo=UTC)
USAGE = {
    "input": 10, "output": 50, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 60,
    "cost": {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0, "total": 0.0},
}


def iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def encoded_dir(cwd: str) -> str:
    """Pi's per-project directory name for a cwd."""
    stripped = cwd[1:] if cwd.startswith(("/", "\\")) else cwd
    return "--" + stripped.replace("/", "-").replace("\\", "-").replace(":", "-") + "--"


class SessionBuilder:
    """One session file. Every append is written to disk immediately (Pi appends with
    appendFileSync), so tests can index between appends."""

    def __init__(
        self,
        sessions_dir: Path,
        cwd: str,
        *,
        session_id: str | None = None,
        version: int | None = 3,
        parent_session: str | None = None,
        flat: bool = False,
        start: datetime = BASE_TIME,
        header_extra: dict[str, Any] | None = None,
        name_seed: str = "",
        omp_title: str | None = None,
    ) -> None:
        self.cwd = cwd
        self.version = version
        self.clock = start
        seed = name_seed or f"{cwd}|{session_id}|{start.isoformat()}|{next(_SERIAL)}"
        digest = hashlib.sha256(seed.encode()).hexdigest()
        self.session_id = session_id or (
            f"{digest[:8]}-{digest[8:12]}-7{digest[13:16]}-8{digest[17:20]}-{digest[20:32]}"
        )
        self._id_seed = digest
        self._counter = 0
        self.leaf: str | None = None
        self.ids: list[str] = []
        folder = sessions_dir if flat else sessions_dir / encoded_dir(cwd)
        folder.mkdir(parents=True, exist_ok=True)
        stamp = iso(start).replace(":", "-").replace(".", "-")
        self.path = folder / f"{stamp}_{self.session_id}.jsonl"
        header: dict[str, Any] = {"type": "session"}
        if version is not None:
            header["version"] = version
        header.update({"id": self.session_id, "timestamp": iso(start), "cwd": cwd})
        if parent_session is not None:
            header["parentSession"] = parent_session
        header.update(header_extra or {})
        self.header = header
        slot = self.title_slot(omp_title, iso(start)) if omp_title is not None else b""
        self.path.write_bytes(slot + self.dumps(header) + b"\n")

    @classmethod
    def title_slot(cls, title: str, updated_at: str, source: str = "user") -> bytes:
        """Oh My Pi's title record: padded with spaces to exactly 256 bytes, newline included."""
        def line(pad: str) -> bytes:
            return cls.dumps({"type": "title", "v": 1, "title": title, "source": source,
                              "updatedAt": updated_at, "pad": pad}) + b"\n"
        return line(" " * (256 - len(line(""))))

    def retitle(self, title: str) -> None:
        """Rewrite the title record in place, as Oh My Pi renames a session (same size)."""
        data = self.path.read_bytes()
        self.path.write_bytes(self.title_slot(title, self.tick()) + data[256:])

    # -- low level -------------------------------------------------------------------------
    @staticmethod
    def dumps(obj: dict[str, Any]) -> bytes:
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()

    def tick(self, seconds: float = 1.0) -> str:
        self.clock += timedelta(seconds=seconds)
        return iso(self.clock)

    def new_id(self) -> str:
        self._counter += 1
        return hashlib.sha256(f"{self._id_seed}:{self._counter}".encode()).hexdigest()[:8]

    def write_raw(self, data: bytes) -> None:
        with self.path.open("ab") as fh:
            fh.write(data)

    def append(self, entry_type: str, payload: dict[str, Any], *, newline: bool = True,
               parent: str | None | bool = True) -> str:
        """Append one entry; `parent=True` means the current leaf."""
        entry: dict[str, Any] = {"type": entry_type}
        entry_id = self.new_id()
        if self.version is not None and self.version >= 2:
            entry["id"] = entry_id
            entry["parentId"] = self.leaf if parent is True else parent
        entry["timestamp"] = self.tick()
        entry.update(payload)
        self.write_raw(self.dumps(entry) + (b"\n" if newline else b""))
        self.ids.append(entry_id)
        self.leaf = entry_id
        return entry_id

    def branch(self, from_id: str | None) -> None:
        """Move the leaf (Pi writes nothing for this)."""
        self.leaf = from_id

    def ms(self) -> int:
        return int(self.clock.timestamp() * 1000)

    # -- entry helpers ---------------------------------------------------------------------
    def message(self, message: dict[str, Any], **kw: Any) -> str:
        message.setdefault("timestamp", self.ms())
        return self.append("message", {"message": message}, **kw)

    def user(self, text: str, *, images: list[tuple[str, bytes]] | None = None,
             as_string: bool = False, **kw: Any) -> str:
        content: Any = text if as_string else [{"type": "text", "text": text}]
        for mime, data in images or []:
            import base64

            content.append({"type": "image", "data": base64.b64encode(data).decode(), "mimeType": mime})
        return self.message({"role": "user", "content": content}, **kw)

    def assistant(self, text: str | None = None, *, tool_calls: list[tuple[str, str, dict[str, Any]]]
                  | None = None, thinking: str | None = None, stop_reason: str | None = None,
                  error: str | None = None, **kw: Any) -> str:
        content: list[dict[str, Any]] = []
        if thinking is not None:
            content.append({"type": "thinking", "thinking": thinking, "thinkingSignature": "c2ln" * 50})
        if text is not None:
            content.append({"type": "text", "text": text})
        for call_id, name, args in tool_calls or []:
            content.append({"type": "toolCall", "id": call_id, "name": name, "arguments": args})
        msg: dict[str, Any] = {
            "role": "assistant", "content": content, "api": "anthropic-messages",
            "provider": "anthropic", "model": "claude-sonnet-4-5", "usage": USAGE,
            "stopReason": stop_reason or ("toolUse" if tool_calls else "stop"),
        }
        if error is not None:
            msg["stopReason"] = "error"
            msg["errorMessage"] = error
        return self.message(msg, **kw)

    def tool_result(self, call_id: str, tool_name: str, text: str, *, is_error: bool = False,
                    images: list[tuple[str, bytes]] | None = None,
                    details: dict[str, Any] | None = None, **kw: Any) -> str:
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        for mime, data in images or []:
            import base64

            content.append({"type": "image", "data": base64.b64encode(data).decode(), "mimeType": mime})
        msg: dict[str, Any] = {"role": "toolResult", "toolCallId": call_id, "toolName": tool_name,
                               "content": content, "isError": is_error}
        if details is not None:
            msg["details"] = details
        return self.message(msg, **kw)

    def bash(self, command: str, output: str, exit_code: int | None = 0, *,
             exclude: bool | None = False, **kw: Any) -> str:
        msg: dict[str, Any] = {"role": "bashExecution", "command": command, "output": output,
                               "exitCode": exit_code, "cancelled": False, "truncated": False}
        if exclude is not None:
            msg["excludeFromContext"] = exclude
        return self.message(msg, **kw)

    def compaction(self, summary: str, first_kept: str, *, details: dict[str, Any] | None = None,
                   **kw: Any) -> str:
        payload: dict[str, Any] = {"summary": summary, "firstKeptEntryId": first_kept,
                                   "tokensBefore": 12345, "fromHook": False}
        if details is not None:
            payload["details"] = details
        return self.append("compaction", payload, **kw)

    def branch_summary(self, from_id: str | None, summary: str, *,
                       details: dict[str, Any] | None = None) -> str:
        """Like Pi's branchWithSummary: move the leaf to from_id, then append the summary there."""
        self.leaf = from_id
        payload: dict[str, Any] = {"fromId": from_id if from_id is not None else "root",
                                   "summary": summary, "fromHook": False}
        if details is not None:
            payload["details"] = details
        return self.append("branch_summary", payload)

    def label(self, target: str, label: str | None) -> str:
        payload: dict[str, Any] = {"targetId": target}
        if label is not None:
            payload["label"] = label
        return self.append("label", payload)

    def session_info(self, name: str) -> str:
        return self.append("session_info", {"name": name})

    def model_change(self, provider: str = "anthropic", model: str = "claude-sonnet-4-5") -> str:
        return self.append("model_change", {"provider": provider, "modelId": model})

    def thinking_level(self, level: str = "medium") -> str:
        return self.append("thinking_level_change", {"thinkingLevel": level})

    def custom(self, custom_type: str, data: Any = None) -> str:
        payload: dict[str, Any] = {"customType": custom_type}
        if data is not None:
            payload["data"] = data
        return self.append("custom", payload)

    def custom_message(self, custom_type: str, content: Any, display: bool = True) -> str:
        return self.append("custom_message",
                           {"customType": custom_type, "content": content, "display": display})

    # Pi 1.x: the shapes of docs/session-format.md in @earendil-works/pi-coding-agent 1.6.0
    def system(self, sections: dict[str, str | None], *, added: list[str] | None = None,
               removed: list[str] | None = None, content: str = "") -> str:
        """A system message: prompt sections (null removes one) and the tools added or removed."""
        message: dict[str, Any] = {"role": "system", "content": content, "sections": sections}
        if added:
            message["toolsAdded"] = [{"name": n, "description": f"The {n} tool.",
                                      "parameters": {"type": "object", "properties": {}}}
                                     for n in added]
        if removed:
            message["toolsRemoved"] = [{"name": n} for n in removed]
        return self.message(message)

    def context_edit(self, target: str, replacement: Any) -> str:
        """An edit of `target`'s part of the model context: None removes it, else its content."""
        return self.append("context_edit", {
            "targetId": target,
            "replacement": None if replacement is None else {"content": replacement}})

    def usage(self, kind: str = "cache_warm", total: int = 50000) -> str:
        return self.append("usage", {
            "kind": kind, "provider": "anthropic", "model": "claude-sonnet-4-5",
            "usage": {"input": 0, "output": 0, "cacheRead": total, "cacheWrite": 0,
                      "totalTokens": total, "cost": {"input": 0, "output": 0, "cacheRead": 0.015,
                                                     "cacheWrite": 0, "total": 0.015}}})

    def fork(self, sessions_dir: Path, cwd: str | None = None, *, upto: str | None = None,
             **kw: Any) -> SessionBuilder:
        """Pi's /fork: a new session holding the root..upto path with the same entry ids."""
        lines = self.path.read_bytes().splitlines()[1:]
        entries = [json.loads(line) for line in lines if line.strip()]
        by_id = {e["id"]: e for e in entries if "id" in e}
        path: list[dict[str, Any]] = []
        cur = by_id.get(upto or self.leaf or "")
        while cur is not None:
            path.append(cur)
            cur = by_id.get(cur.get("parentId") or "")
        child = SessionBuilder(sessions_dir, cwd or self.cwd, parent_session=str(self.path),
                               start=self.clock + timedelta(seconds=5), **kw)
        for entry in reversed(path):
            child.write_raw(child.dumps(entry) + b"\n")
            child.leaf = entry["id"]
            child.ids.append(entry["id"])
        return child


def sample_session(sessions_dir: Path, cwd: str = "/home/dev/proj", **kw: Any) -> SessionBuilder:
    """A small but complete session: every common entry type once."""
    sb = SessionBuilder(sessions_dir, cwd, **kw)
    sb.model_change()
    sb.thinking_level()
    sb.user("fix the flaky websocket reconnect test in src/ws.ts")
    sb.assistant("Looking at the reconnect logic.", thinking="private chain of thought",
                 tool_calls=[("call_1", "read", {"path": "src/ws.ts"})])
    sb.tool_result("call_1", "read", "export function reconnect() { setTimeout(connect, 1000) }")
    sb.assistant(tool_calls=[("call_2", "bash", {"command": "npm test -- ws"})])
    sb.tool_result("call_2", "bash",
                   "TypeError: Cannot read properties of undefined (reading 'close')\n\nexit code 1",
                   is_error=True)
    sb.assistant(tool_calls=[("call_3", "edit", {"path": "src/ws.ts", "edits": [
        {"oldText": "setTimeout(connect, 1000)", "newText": "setTimeout(connect, backoff())"}]})])
    sb.tool_result("call_3", "edit", "Successfully replaced 1 block(s) in src/ws.ts.",
                   details={"diff": "-a\n+b", "firstChangedLine": 1})
    sb.assistant("The retry now uses exponential backoff.")
    sb.bash("git push --force origin fix-ws", "To github.com:me/proj.git\n + 1a2b3c...4d5e6f fix-ws",
            exit_code=0)
    sb.session_info("websocket reconnect fix")
    return sb
