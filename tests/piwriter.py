"""Session files written by Pi's own SessionManager, plus Pi's view of them (an oracle).

`write_pi_sessions(dir)` runs tests/piwriter/write-sessions.mjs, which uses
@mariozechner/pi-coding-agent 0.73.1 (installed by scripts/setup.d/10-piwriter.sh) to write
scenario sessions under `dir/<encoded cwd>/`, and returns the oracle it wrote:

    {"pi_version": "0.73.1", "sessions": [
        {"path", "scenario", "sessionId", "cwd", "parentSession",
         "entries": [ids in file order], "leafId",
         "selected": [getBranch() ids, root..leaf], "context": [entry id per context message],
         "contextRoles", "thinkingLevel", "model", "roots", "labels", "name",
         "marks": {symbolic name: entry id}, "notes"?}, ...]}

Scenarios: a-linear, b-core-concepts, c-compaction, c2-compaction-unknown-first-kept,
c3-rewind-past-compaction, c4-compaction-keeps-earlier-compaction, d-branch-summary,
d2-root-and-empty-branch-summary, e-second-root, f-fork-source, f-fork, f2-fork-from,
g-long-5mib-tool-result. Ids and timestamps come from Pi (random, clock); texts are fixed.

Use the `pi_sessions` fixture (module-scoped; make it visible with
`from piwriter import pi_sessions  # noqa: F401` in a conftest.py), or call `write_pi_sessions`
from a fixture of your own, as tests/test_piwriter_oracle.py does. Both skip the test, saying
why, when node or the npm install is missing.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

PIWRITER_DIR = Path(__file__).resolve().parent / "piwriter"
SCRIPT = PIWRITER_DIR / "write-sessions.mjs"
PI_PACKAGE = PIWRITER_DIR / "node_modules" / "@mariozechner" / "pi-coding-agent" / "package.json"


def piwriter_unavailable() -> str | None:
    """Why Pi's writer cannot run here, or None when it can."""
    if shutil.which("node") is None:
        return "node is not installed; Pi's session writer needs Node 20"
    if not PI_PACKAGE.is_file():
        return (
            "tests/piwriter/node_modules is missing; run scripts/setup.d/10-piwriter.sh "
            "(npm ci in tests/piwriter)"
        )
    return None


def write_pi_sessions(sessions_dir: Path) -> dict[str, Any]:
    """Write all scenario sessions into `sessions_dir` (a Pi sessions root) with Pi's own
    SessionManager and return the parsed oracle. Skips the calling test when unavailable."""
    reason = piwriter_unavailable()
    if reason is not None:
        pytest.skip(reason)
    sessions_dir.mkdir(parents=True, exist_ok=True)
    out = sessions_dir.parent / f"{sessions_dir.name}.oracle.json"
    proc = subprocess.run(
        ["node", str(SCRIPT), str(sessions_dir), str(out)],
        cwd=PIWRITER_DIR,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(
            f"write-sessions.mjs failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
        )
    oracle: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return oracle


def by_scenario(oracle: dict[str, Any], scenario: str) -> dict[str, Any]:
    """The oracle record of one scenario's file."""
    for rec in oracle["sessions"]:
        if rec["scenario"] == scenario:
            return dict(rec)
    raise KeyError(scenario)


@pytest.fixture(scope="module")
def pi_sessions(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """(sessions root, oracle) for sessions written by Pi itself; one run per test module.

    Example (with the fixture imported into a conftest.py):
        def test_selected(pi_sessions):
            root, oracle = pi_sessions
            rec = by_scenario(oracle, "b-core-concepts")
            assert rec["selected"] == [rec["marks"][k] for k in "ABEF"]
    """
    root = tmp_path_factory.mktemp("pi-sessions") / "sessions"
    return root, write_pi_sessions(root)


def open_with_pi(files: list[Path], out: Path) -> list[dict[str, Any]]:
    """What Pi's SessionManager.open() makes of session files of any version (it migrates a copy
    of each; lines it cannot parse it skips, and positions count only the entries it loaded): per file,
    the selected path and the context as 0-based positions in file order (tests/piwriter/
    open-v1.mjs). Skips the calling test when Pi's writer is unavailable."""
    reason = piwriter_unavailable()
    if reason is not None:
        pytest.skip(reason)
    proc = subprocess.run(["node", str(PIWRITER_DIR / "open-v1.mjs"), str(out),
                           *map(str, files)], cwd=PIWRITER_DIR, capture_output=True, text=True,
                          timeout=120, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"open-v1.mjs failed ({proc.returncode}):\n{proc.stderr}")
    result: list[dict[str, Any]] = json.loads(out.read_text(encoding="utf-8"))["files"]
    return result
