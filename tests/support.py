"""Test support shared by every suite: an isolated Pi home, tree checksums, Node 22 for Pi 1.x."""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NODE22_MIN = (22, 19)  # Pi 1.x's engines field: on Node 20 its CLI does not even load


@dataclass
class PiHome:
    root: Path
    agent: Path
    sessions: Path
    index: Path

    def env(self) -> dict[str, str]:
        return {**os.environ, "PI_CODING_AGENT_DIR": str(self.agent),
                "PI_EVENT_SEARCH_INDEX": str(self.index), "XDG_CACHE_HOME": str(self.root / "cache"),
                # The user's extractor registry never reaches a test: each writes its own.
                "XDG_CONFIG_HOME": str(self.root / "config")}


def tree_digest(root: Path) -> dict[str, str]:
    """Checksums of every file below root (the read-only promise is checked with these)."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file() and not p.is_symlink():
            out[str(p.relative_to(root))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def closed_index_env() -> dict[str, str]:
    """pip settings of a machine that cannot reach any package index: the index is a local port
    nothing listens on, and no pip.conf (or user cache) can name another one."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return {"PIP_INDEX_URL": f"http://127.0.0.1:{port}/simple", "PIP_EXTRA_INDEX_URL": "",
            "PIP_FIND_LINKS": "", "PIP_CONFIG_FILE": os.devnull, "PIP_NO_CACHE_DIR": "1",
            "PIP_RETRIES": "0", "PIP_TIMEOUT": "3"}


def _node_version(node: str) -> tuple[int, ...] | None:
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30,
                             check=False).stdout.strip()
        return tuple(int(p) for p in out.lstrip("v").split("."))
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None


def node22_bin() -> Path | None:
    """The bin directory of a Node that runs Pi 1.x (>= 22.19): the one scripts/setup.d/
    15-node22.sh installs into $PI_EVENT_SEARCH_TOOLS/node22 (default: the checkout's .tools),
    else the system's node when it is new enough; None when there is neither."""
    tools = Path(os.environ.get("PI_EVENT_SEARCH_TOOLS") or REPO / ".tools")
    candidates = [tools / "node22" / "bin" / "node"]
    system = shutil.which("node")
    if system is not None:
        candidates.append(Path(system))
    for node in candidates:
        version = _node_version(str(node)) if node.is_file() else None
        if version is not None and version[:2] >= NODE22_MIN:
            return node.parent
    return None


def node22_env(env: dict[str, str] | None = None) -> dict[str, str] | None:
    """`env` (default: this process's) with Node 22's bin directory first on PATH, so that `node`
    (and npm, which runs under the first node on PATH) is one Pi 1.x runs on; None without one."""
    bin_dir = node22_bin()
    if bin_dir is None:
        return None
    base = dict(os.environ if env is None else env)
    return {**base, "PATH": f"{bin_dir}{os.pathsep}{base.get('PATH', '')}"}


NODE22_MISSING = ("no Node >= 22.19 for Pi 1.x: run scripts/setup.d/15-node22.sh (installs it "
                  "into $PI_EVENT_SEARCH_TOOLS/node22)")


def fts_workers(parents: set[int]) -> list[int]:
    """The live full-text worker processes (index/bulk/ftsworker.py) whose parent is one of
    `parents` (a zombie is dead: not counted)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if b"ftsworker" in cmd and int(fields[1]) in parents and fields[0] != "Z":
            out.append(int(entry))
    return out
