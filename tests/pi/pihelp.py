"""What the Pi end-to-end tests share: the pinned Pi CLIs (Pi 1.6 on Node 22, the reference; Pi
0.73.1, the oldest supported, in one test), and a project with an earlier session of its own and
one of another directory (real-shaped JSONL from tests/builder.py)."""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pytest

from builder import SessionBuilder
from support import NODE22_MISSING, node22_bin

REPO = Path(__file__).resolve().parents[2]
EXT = REPO / "clients" / "pi"
# Pi 1.x is @earendil-works/pi-coding-agent; Pi up to 0.73.1 was @mariozechner/pi-coding-agent.
# Both are pinned in clients/pi/package-lock.json (devDependencies).
PI_PKGS = {"1.6": EXT / "node_modules" / "@earendil-works" / "pi-coding-agent",
           "0.73": EXT / "node_modules" / "@mariozechner" / "pi-coding-agent"}
PINNED = {"1.6": "1.6.0", "0.73": "0.73.1"}
CLIS = {"1.6": "dist/bundle/cli.js", "0.73": "dist/cli.js"}
FAKE_MODEL = Path(__file__).with_name("fake-model.ts")
WORD = "zebracorn"
RUN_TIMEOUT = 150  # a hung turn fails the test here instead of hanging the suite


WAIT = 90  # seconds for any one RPC message: a hang fails here


class Rpc:
    """Pi in `--mode rpc`: JSON lines both ways."""

    def __init__(self, proc: subprocess.Popen[str], wait: float = WAIT) -> None:
        self.proc = proc
        self.wait = wait
        self.messages: queue.Queue[dict[str, Any]] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        threading.Thread(target=self._read, args=(proc.stdout,), daemon=True).start()

    def _read(self, out: IO[str] | None) -> None:
        assert out is not None
        for line in out:  # RPC frames on "\n" only
            if line.strip().startswith("{"):
                self.messages.put(json.loads(line))

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def wait_for(self, want: dict[str, Any]) -> dict[str, Any]:
        while True:
            try:
                msg = self.messages.get(timeout=self.wait)
            except queue.Empty:
                raise AssertionError(f"no {want} within {self.wait} s; saw {self.seen[-10:]}") from None
            self.seen.append(msg)
            if all(msg.get(k) == v for k, v in want.items()):
                return msg


    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def pi_node(pi: str = "1.6") -> str:
    """The node that runs this Pi: Node >= 22.19 for 1.x (tests/support.py node22_bin)."""
    if pi == "1.6":
        bin_dir = node22_bin()
        if bin_dir is None:
            pytest.skip(NODE22_MISSING)
        return str(bin_dir / "node")
    node = shutil.which("node")
    if node is None:
        pytest.skip("node not found")
    return node


def pi_cli(pi: str = "1.6") -> Path:
    pkg = PI_PKGS[pi] / "package.json"
    if not pkg.exists():
        pytest.skip(f"Pi {PINNED[pi]} is not installed in clients/pi/node_modules: run "
                    "scripts/setup.d/50-pi.sh")
    version = json.loads(pkg.read_text())["version"]
    assert version == PINNED[pi], f"clients/pi pins Pi {PINNED[pi]}, found {version}"
    return PI_PKGS[pi] / CLIS[pi]


def pi_argv(pi: str = "1.6") -> list[str]:
    """node and Pi's CLI: the start of every command line that runs Pi."""
    return [pi_node(pi), str(pi_cli(pi))]


@dataclass
class Project:
    tmp: Path
    root: Path
    other: Path
    agent: Path
    earlier: SessionBuilder
    elsewhere: SessionBuilder
    earlier_hit: str  # entry id of the earlier session's failing bash run

    def env(self, path: str | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PI_", "XDG_"))}
        server_bin = str(Path(sys.executable).parent)  # pi-event-search of this checkout
        env.update(PI_CODING_AGENT_DIR=str(self.agent), HOME=str(self.tmp / "home"),
                   XDG_CACHE_HOME=str(self.tmp / "cache"),
                   PI_EVENT_SEARCH_INDEX=str(self.tmp / "index.sqlite3"),
                   PATH=path if path is not None else f"{server_bin}:{env.get('PATH', '')}")
        return env


def make_project(tmp_path: Path) -> Project:
    root, other, agent = tmp_path / "proj", tmp_path / "other", tmp_path / "agent"
    for d in (root / "sub", other, agent, tmp_path / "home"):
        d.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    sessions = agent / "sessions"
    # Recorded at the Git root: visible to a Pi started in root/sub only through the Git rule.
    earlier = SessionBuilder(sessions, str(root))
    earlier.session_info("fix the build")
    earlier.user(f"the {WORD} build is broken, find out why")
    earlier.assistant("Running it.", tool_calls=[("c1", "bash", {"command": "npm run build"})])
    hit = earlier.tool_result("c1", "bash", f"npm ERR! {WORD} module missing", is_error=True)
    earlier.assistant("It needs the module installed.")
    elsewhere = SessionBuilder(sessions, str(other))
    elsewhere.user(f"{WORD} in another project entirely")
    elsewhere.assistant(f"Yes, {WORD} there too.")
    return Project(tmp_path, root, other, agent, earlier, elsewhere, hit)
