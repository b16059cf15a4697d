"""Test support shared by every suite: an isolated Pi home and tree checksums."""

from __future__ import annotations

import hashlib
import os
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
                "PI_EVENT_SEARCH_INDEX": str(self.index), "XDG_CACHE_HOME": str(self.root / "cache")}


def tree_digest(root: Path) -> dict[str, str]:
    """Checksums of every file below root (the read-only promise is checked with these)."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file() and not p.is_symlink():
            out[str(p.relative_to(root))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out
