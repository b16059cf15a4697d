"""The peer engine (mnemo-search) in a venv of its own, shared by the cold-index bench (run.py) and
the relevance bench (relevance/styles.py) so neither imports the other."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def peer_exe(out: Path, spec: str) -> str:
    """The peer's command in a venv of its own under the bench output (created on first use)."""
    venv = (out / "peer-venv").resolve()
    exe = venv / "bin" / spec.split("==")[0].removesuffix("-search")
    if not exe.exists() or spec not in subprocess.run(
            [str(venv / "bin" / "pip"), "freeze"], capture_output=True, text=True).stdout:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", spec], check=True)
    return str(exe)
