"""Test support shared by every suite: an isolated Pi home and tree checksums."""

from __future__ import annotations

import hashlib
import os
import socket
from dataclasses import dataclass
from pathlib import Path


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
