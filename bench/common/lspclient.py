"""A tiny synchronous JSON-RPC client for `pi-event-search serve` over stdio (benchmarks only).

One reader thread parses `Content-Length` frames; responses wake the waiting caller; requests from
the server (progress tokens, registrations, configuration) are answered with `null`;
notifications are kept with their arrival time.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import orjson


class RpcError(Exception):
    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.error = error


class LspClient:
    def __init__(self, command: list[str], env: dict[str, str], cwd: str | None = None) -> None:
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env, cwd=cwd, bufsize=0)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in = self.proc.stdin
        self._out = self.proc.stdout
        self._next = 0
        self._lock = threading.Lock()
        self._cond = threading.Condition()
        self._responses: dict[int, dict[str, Any]] = {}
        self.notifications: list[tuple[float, str, Any]] = []
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()

    # -- wire --------------------------------------------------------------------------------
    def _send(self, msg: dict[str, Any]) -> None:
        body = orjson.dumps(msg)
        with self._lock:
            self._in.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self._in.flush()

    def _read_loop(self) -> None:
        out = self._out
        try:
            while True:
                length = -1
                while True:
                    line = out.readline()
                    if not line:
                        return
                    line = line.strip()
                    if not line:
                        break
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                body = b""
                while len(body) < length:
                    chunk = out.read(length - len(body))
                    if not chunk:
                        return
                    body += chunk
                self._dispatch(orjson.loads(body))
        finally:
            with self._cond:
                self._cond.notify_all()

    def _dispatch(self, msg: dict[str, Any]) -> None:
        if "id" in msg and "method" in msg:  # a request from the server
            self._send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
        elif "id" in msg:
            with self._cond:
                self._responses[msg["id"]] = msg
                self._cond.notify_all()
        else:
            self.notifications.append((time.perf_counter(), msg.get("method", ""),
                                       msg.get("params")))

    # -- API ---------------------------------------------------------------------------------
    def request(self, method: str, params: Any, timeout: float = 120.0) -> Any:
        with self._lock:
            self._next += 1
            rid = self._next
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        end = time.monotonic() + timeout
        with self._cond:
            while rid not in self._responses:
                left = end - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    raise TimeoutError(f"{method}: no answer in {timeout}s")
                self._cond.wait(left)
            msg = self._responses.pop(rid)
        if "error" in msg:
            raise RpcError(msg["error"])
        return msg.get("result")

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def initialize(self, folders: list[str], options: dict[str, Any] | None = None) -> Any:
        ws = [{"uri": Path(f).as_uri(), "name": os.path.basename(f) or f} for f in folders]
        result = self.request("initialize", {
            "processId": os.getpid(), "rootUri": ws[0]["uri"] if ws else None,
            "workspaceFolders": ws or None, "initializationOptions": options or {},
            "capabilities": {"workspace": {"workspaceFolders": True}}})
        self.notify("initialized", {})
        return result

    def wait_notification(self, method: str, after: int = 0, timeout: float = 600.0) -> Any:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for _, m, params in self.notifications[after:]:
                if m == method:
                    return params
            if self.proc.poll() is not None:
                break
            time.sleep(0.01)
        raise TimeoutError(f"no {method} notification in {timeout}s")

    def close(self) -> None:
        try:
            self.request("shutdown", None, timeout=10)
            self.notify("exit", None)
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()
            self.proc.wait()
