"""Shared pieces of the reliability suite: CI/soak sizes, figures, guarded subprocesses, index views,
and a raw LSP client with its own Content-Length framing."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from pi_event_search.index import store

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
ENGINE_DIR = str(REPO / "server" / "pi_event_search")
SOAK = os.environ.get("PI_EVENT_SEARCH_SOAK", "") not in ("", "0")
ARTIFACTS = Path(os.environ.get("PI_EVENT_SEARCH_ARTIFACTS", REPO / "test-artifacts"))


def size(ci: int, soak: int) -> int:
    """A workload size: bounded in CI, full in soak mode (PI_EVENT_SEARCH_SOAK=1)."""
    return soak if SOAK else ci


def timeout(ci: float, soak: float) -> float:
    return soak if SOAK else ci


class Figures:
    """Counts reported at the end of the run and written to test-artifacts for docs/reliability.md."""

    def __init__(self) -> None:
        self.data: dict[str, dict[str, Any]] = {}
        self.lock = threading.Lock()

    def add(self, section: str, key: str, value: Any = 1) -> None:
        with self.lock:
            sec = self.data.setdefault(section, {})
            if isinstance(value, int | float) and not isinstance(value, bool):
                sec[key] = sec.get(key, 0) + value
            else:
                sec[key] = value

    def set(self, section: str, key: str, value: Any) -> None:
        with self.lock:
            self.data.setdefault(section, {})[key] = value

    def write(self) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / ("reliability-figures-soak.json" if SOAK else "reliability-figures.json")
        body = {"mode": "soak" if SOAK else "ci", "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                            time.gmtime()),
                "sections": self.data}
        path.write_text(json.dumps(body, indent=2, sort_keys=True) + "\n")
        return path


FIGURES = Figures()


# -- guarded child processes ---------------------------------------------------------------------
def guard_cmd(*args: str) -> list[str]:
    """`python -c` that installs the audit hook (guard.py) and then runs the CLI with args."""
    code = f"import sys; sys.path.insert(0, {str(HERE)!r}); import guard; guard.main()"
    return [sys.executable, "-c", code, *args]


def guard_env(base: dict[str, str], guarded: list[Path], log: Path) -> dict[str, str]:
    return {**base, "PIES_GUARD_DIRS": os.pathsep.join(str(g) for g in guarded),
            "PIES_GUARD_LOG": str(log), "PYTHONUNBUFFERED": "1"}


def violations(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


# -- views of an index ---------------------------------------------------------------------------
def connect_ro(index: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(f"file:{index}?mode=ro", uri=True, timeout=60, isolation_level=None)
    conn.execute("PRAGMA busy_timeout = 60000")
    conn.create_function("fragment_text", 1, store._sql_unpack, deterministic=True)
    return conn


def integrity(conn: sqlite3.Connection) -> None:
    """SQLite's and FTS5's own consistency checks (raise or assert on any problem)."""
    rows = [tuple(r) for r in conn.execute("PRAGMA integrity_check")]  # plain or sqlite3.Row
    assert rows == [("ok",)], rows
    conn.execute("INSERT INTO fts(fts) VALUES ('integrity-check')")


def per_session(conn: sqlite3.Connection) -> dict[str, tuple[Any, ...]]:
    """Each session's complete indexed state (events, fragments, checkpoint), without row ids."""
    out: dict[str, tuple[Any, ...]] = {}
    sessions = conn.execute("SELECT sid, session_id, path, cwd, version, name, leaf, entries, state "
                            "FROM sessions").fetchall()
    for sid, session_id, path, *rest in sessions:
        events = conn.execute(
            "SELECT e.entry_id, e.parent_id, e.seq, e.line, e.byte_off, e.sub, e.entry_type, e.role, "
            "e.tool_name, e.is_error, e.branch_state, e.selection_state, e.context_role, e.preview, "
            "(SELECT group_concat(f.frag || '=' || fragment_text(f.text), '|') FROM fragments f "
            "WHERE f.eid = e.eid), "
            "(SELECT count(*) FROM relations r WHERE r.eid = e.eid), "
            "(SELECT count(*) FROM file_refs r WHERE r.eid = e.eid) "
            "FROM events e WHERE e.sid = ? ORDER BY e.seq", (sid,)).fetchall()
        checkpoint = conn.execute(
            "SELECT status, committed, lines, bad_lines, size FROM files WHERE path = ?",
            (path,)).fetchone()
        calls = conn.execute("SELECT count(*) FROM calls WHERE sid = ?", (sid,)).fetchone()[0]
        out[session_id] = (path, *rest, tuple(events), checkpoint, calls)
    return out


def orphans(conn: sqlite3.Connection) -> list[tuple[str, int]]:
    """Rows that belong to no session: a half-applied or half-dropped session leaves these."""
    checks = {
        "events": "SELECT count(*) FROM events WHERE sid NOT IN (SELECT sid FROM sessions)",
        "fragments": "SELECT count(*) FROM fragments WHERE eid NOT IN (SELECT eid FROM events)",
        "relations": "SELECT count(*) FROM relations WHERE eid NOT IN (SELECT eid FROM events)",
        "file_refs": "SELECT count(*) FROM file_refs WHERE eid NOT IN (SELECT eid FROM events)",
        "calls": "SELECT count(*) FROM calls WHERE sid NOT IN (SELECT sid FROM sessions)",
        "entries": "SELECT count(*) FROM sessions s WHERE entries != "
                   "(SELECT count(*) FROM events e WHERE e.sid = s.sid)",
        "fts": "SELECT (SELECT count(*) FROM fts) - (SELECT count(*) FROM fragments)",
    }
    out = []
    for name, sql in checks.items():
        n = conn.execute(sql).fetchone()[0]
        if n:
            out.append((name, n))
    return out


def open_engine(sessions: Path, index: Path, extra: list[str] | None = None) -> Any:
    """An Engine on an explicit sessions directory (no environment involved)."""
    from pi_event_search.service.engine import Engine
    from pi_event_search.source.discovery import default_dirs

    return Engine(index, default_dirs(sessions, extra or []))


def full_state(index: Path) -> tuple[Any, ...]:
    """engine_support.snapshot plus per-session checkpoints and the files table."""
    from engine_support import snapshot
    from pi_event_search.service.engine import Engine

    e = Engine(index, [])
    try:
        files = e.reader().execute("SELECT path, status, session_id, committed, lines, bad_lines, "
                               "canonical_path FROM files ORDER BY path").fetchall()
        sessions = e.reader().execute("SELECT session_id, path, state, entries, name, leaf, cwd "
                                  "FROM sessions ORDER BY session_id").fetchall()
        return (snapshot(e), files, sessions)
    finally:
        e.close()


def clean_state(sessions: Path, index: Path, extra: list[str] | None = None) -> tuple[Any, ...]:
    """The state of a fresh index of what is on disk now."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{index}{suffix}").unlink(missing_ok=True)
    e = open_engine(sessions, index, extra)
    e.refresh()
    e.close()
    return full_state(index)


# -- a raw JSON-RPC client (own Content-Length framing) -------------------------------------------
class RawLsp:
    """Talks to `pi-event-search serve` over pipes, byte by byte; reads in a background thread."""

    def __init__(self, cmd: list[str], env: dict[str, str], cwd: str | None = None) -> None:
        self.proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.messages: list[dict[str, Any]] = []
        self.cond = threading.Condition()
        self.stderr: list[bytes] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        self.next_id = 0

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line)

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    with self.cond:
                        self.cond.notify_all()
                    return
                if line in (b"\r\n", b"\n"):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            assert length is not None
            body = out.read(length)
            msg = json.loads(body)
            with self.cond:
                self.messages.append(msg)
                self.cond.notify_all()

    # -- sending ---------------------------------------------------------------------------------
    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    @staticmethod
    def frame(body: bytes) -> bytes:
        return b"Content-Length: %d\r\n\r\n" % len(body) + body

    def send(self, obj: Any) -> None:
        self.send_raw(self.frame(json.dumps(obj).encode()))

    def request(self, method: str, params: Any = None, msg_id: Any = None) -> Any:
        if msg_id is None:
            self.next_id += 1
            msg_id = self.next_id
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return msg_id

    def notify(self, method: str, params: Any = None) -> None:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    # -- receiving -------------------------------------------------------------------------------
    def response(self, msg_id: Any, timeout: float = 30.0) -> dict[str, Any]:
        end = time.monotonic() + timeout
        with self.cond:
            while True:
                for m in self.messages:
                    if m.get("id") == msg_id and ("result" in m or "error" in m):
                        return m
                left = end - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    raise AssertionError(f"no response to {msg_id!r} (server alive: "
                                         f"{self.proc.poll() is None}); stderr: "
                                         f"{b''.join(self.stderr[-20:]).decode(errors='replace')}")
                self.cond.wait(min(left, 0.5))

    def call(self, method: str, params: Any = None, timeout: float = 30.0) -> dict[str, Any]:
        return self.response(self.request(method, params), timeout)

    def wait_for(self, pred: Any, timeout: float = 30.0) -> dict[str, Any]:
        end = time.monotonic() + timeout
        with self.cond:
            while True:
                for m in self.messages:
                    if pred(m):
                        return m
                left = end - time.monotonic()
                if left <= 0:
                    raise AssertionError("expected message did not arrive")
                self.cond.wait(min(left, 0.5))

    def initialize(self, root: str, options: dict[str, Any] | None = None) -> None:
        res = self.call("initialize", {
            "processId": os.getpid(), "rootUri": f"file://{root}",
            "workspaceFolders": [{"uri": f"file://{root}", "name": "root"}],
            "capabilities": {}, "initializationOptions": options or {}})
        assert "result" in res, res
        self.notify("initialized", {})
        self.wait_for(lambda m: m.get("method") == "piEvents/indexChanged", 120)

    def close(self) -> int | None:
        if self.proc.poll() is None:
            try:
                self.response(self.request("shutdown"), 10)
                self.notify("exit")
                self.proc.wait(10)
            except Exception:
                self.proc.kill()
                self.proc.wait(10)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                with suppress(OSError):
                    stream.close()
        return self.proc.returncode


@contextmanager
def raw_server(cmd: list[str], env: dict[str, str], root: str,
               options: dict[str, Any] | None = None) -> Iterator[RawLsp]:
    client = RawLsp(cmd, env)
    try:
        client.initialize(root, options)
        yield client
    finally:
        client.close()
