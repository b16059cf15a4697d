"""Oh My Pi session files written by Oh My Pi's own SessionManager, plus its view of them.

`write_omp_sessions(home)` runs tests/ompwriter/write-sessions.ts under Bun (the npm package `bun`,
installed with @oh-my-pi/pi-coding-agent 18.2.3 by scripts/setup.d/12-ompwriter.sh) with HOME=home,
so the sessions land in `home/.omp/agent/sessions/-proj/` (or `$PI_CODING_AGENT_DIR/sessions/-proj/`
when `agent_dir` is given), and returns the oracle it wrote:

    {"omp_version": "18.2.3", "sessions": [
        {"path", "scenario": "main" | "subagent", "sessionId", "cwd", "parentSession", "title",
         "entries": [ids in file order], "types": {id: entry type}, "leafId",
         "selected": [getBranch() ids], "context": [entry id per buildSessionContext() message],
         "models", "mode", "injectedTtsrRules", "marks": {symbolic name: entry id}}, ...]}

Why 18.2.3 and not the latest 18.3.4: the registry this machine reaches has 18.3.4 of the package
but none of its @oh-my-pi/* dependencies at 18.3.4 (they stop at 18.2.11), and the package pins
them exactly; 18.2.3 is the newest whose whole tree installs. Its session-entries.ts,
session-title-slot.ts and session-paths.ts write what 18.3.4's do (docs/omp.md).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

OMPWRITER_DIR = Path(__file__).resolve().parent / "ompwriter"
SCRIPT = OMPWRITER_DIR / "write-sessions.ts"
BUN = OMPWRITER_DIR / "node_modules" / ".bin" / "bun"
OMP_PACKAGE = OMPWRITER_DIR / "node_modules" / "@oh-my-pi" / "pi-coding-agent" / "package.json"


def ompwriter_unavailable() -> str | None:
    """Why Oh My Pi's writer cannot run here, or None when it can."""
    if not OMP_PACKAGE.is_file() or not BUN.exists():
        return ("tests/ompwriter/node_modules is missing; run scripts/setup.d/12-ompwriter.sh "
                "(npm ci in tests/ompwriter: Oh My Pi and Bun)")
    return None


def write_omp_sessions(home: Path, agent_dir: Path | None = None) -> dict[str, Any]:
    """Write the scenario sessions with Oh My Pi's SessionManager under the fake home `home`
    (and `agent_dir` as PI_CODING_AGENT_DIR) and return the parsed oracle. Skips the calling
    test when the writer is not installed."""
    reason = ompwriter_unavailable()
    if reason is not None:
        pytest.skip(reason)
    home.mkdir(parents=True, exist_ok=True)
    out = home / "omp-oracle.json"
    env = {k: v for k, v in os.environ.items()
           if k not in ("PI_CODING_AGENT_DIR", "PI_CONFIG_DIR", "XDG_DATA_HOME", "XDG_STATE_HOME",
                        "XDG_CACHE_HOME", "PI_PROFILE")}
    env["HOME"] = str(home)
    if agent_dir is not None:
        env["PI_CODING_AGENT_DIR"] = str(agent_dir)
    proc = subprocess.run([str(BUN), str(SCRIPT), str(out)], cwd=OMPWRITER_DIR, env=env,
                          capture_output=True, text=True, timeout=180, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"write-sessions.ts failed ({proc.returncode}):\n{proc.stdout}\n"
                           f"{proc.stderr}")
    oracle: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return oracle


def by_scenario(oracle: dict[str, Any], scenario: str) -> dict[str, Any]:
    for rec in oracle["sessions"]:
        if rec["scenario"] == scenario:
            return dict(rec)
    raise KeyError(scenario)
