"""Session files written by Pi's own SessionManager, plus Pi's view of them (an oracle).

`write_pi_sessions(dir, pi="1.6")` runs tests/piwriter/write-sessions.mjs with Pi 1.6
(@earendil-works/pi-coding-agent, on Node >= 22.19: tests/support.py node22_env) or, with
`pi="0.73"`, the oldest supported Pi, 0.73.1 (@mariozechner/pi-coding-agent); both are installed
by scripts/setup.d/10-piwriter.sh. It writes scenario sessions under `dir/<encoded cwd>/` and
returns the oracle it wrote:

    {"pi": "1.6", "pi_version": "1.6.0", "sessions": [
        {"path", "scenario", "sessionId", "cwd", "parentSession",
         "entries": [ids in file order], "leafId",
         "selected": [getBranch() ids, root..leaf], "context": [entry id per context message],
         "contextRoles", "thinkingLevel", "model", "roots", "labels", "name",
         "marks": {symbolic name: entry id},
         "states": {entry id: [branchState, selectionState] as Pi's answers give them}, "notes"?},
        ...]}

Scenarios of both versions: a-linear, b-core-concepts, c-compaction,
c2-compaction-unknown-first-kept, c3-rewind-past-compaction,
c4-compaction-keeps-earlier-compaction, d-branch-summary, d2-root-and-empty-branch-summary,
e-second-root, f-fork-source, f-fork, f2-fork-from, g-long-5mib-tool-result. Pi 1.6 only
(write-sessions-16.mjs): h1-context-edits-leaf-a, h1-context-edits-leaf-b,
h2-edits-after-compaction, h3-retain-none-compaction, h4-multiple-roots, h5-custom-id. Ids and
timestamps come from Pi (random, clock); texts are fixed.

`states_by_pi(files, out)` gives the same `states` for any session file (tests/piwriter/
states-of.mjs), e.g. one a real Pi turn wrote.

Use the `pi_sessions` fixture (module-scoped, Pi 1.6; make it visible with
`from piwriter import pi_sessions  # noqa: F401` in a conftest.py), or call `write_pi_sessions`
from a fixture of your own, as tests/test_piwriter_oracle.py does. Both skip the test, saying
why, when node or the npm install is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from support import NODE22_MISSING, node22_env

PIWRITER_DIR = Path(__file__).resolve().parent / "piwriter"
SCRIPT = PIWRITER_DIR / "write-sessions.mjs"
PACKAGES = {"1.6": "@earendil-works/pi-coding-agent", "0.73": "@mariozechner/pi-coding-agent"}
VERSIONS = {"1.6": "1.6.0", "0.73": "0.73.1"}  # what package-lock.json pins


def pi_package(pi: str = "1.6") -> Path:
    return PIWRITER_DIR / "node_modules" / PACKAGES[pi] / "package.json"


def piwriter_env(pi: str = "1.6") -> dict[str, str] | str:
    """The environment the writer scripts run in for this Pi (Node 22 first on PATH for 1.6),
    or why they cannot run here."""
    env = node22_env() if pi == "1.6" else dict(os.environ)
    if env is None:
        return NODE22_MISSING
    if shutil.which("node", path=env["PATH"]) is None:
        return "node is not installed; Pi's session writer needs it"
    if not pi_package(pi).is_file():
        return (
            "tests/piwriter/node_modules is missing; run scripts/setup.d/10-piwriter.sh "
            "(npm ci in tests/piwriter)"
        )
    return {**env, "PIWRITER_PI": pi}


def piwriter_unavailable(pi: str = "1.6") -> str | None:
    """Why Pi's writer cannot run here, or None when it can."""
    env = piwriter_env(pi)
    return env if isinstance(env, str) else None


def run_piwriter(script: str, *args: str, pi: str = "1.6") -> subprocess.CompletedProcess[str]:
    """node tests/piwriter/SCRIPT ARGS... with this Pi; skips the calling test when it cannot run."""
    env = piwriter_env(pi)
    if isinstance(env, str):
        pytest.skip(env)
    proc = subprocess.run(["node", str(PIWRITER_DIR / script), *args], cwd=PIWRITER_DIR, env=env,
                          capture_output=True, text=True, timeout=180, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{script} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def write_pi_sessions(sessions_dir: Path, pi: str = "1.6") -> dict[str, Any]:
    """Write all scenario sessions into `sessions_dir` (a Pi sessions root) with Pi's own
    SessionManager and return the parsed oracle. Skips the calling test when unavailable."""
    sessions_dir.mkdir(parents=True, exist_ok=True)
    out = sessions_dir.parent / f"{sessions_dir.name}.oracle.json"
    run_piwriter("write-sessions.mjs", str(sessions_dir), str(out), pi=pi)
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


def states_by_pi(files: list[Path], out: Path, pi: str = "1.6") -> dict[str, dict[str, Any]]:
    """Pi's view of any session files (tests/piwriter/states-of.mjs, on copies): per path, its
    session id and every entry's [branchState, selectionState] from Pi's own answers, as
    write_pi_sessions records them. Skips the calling test when Pi's writer is unavailable."""
    run_piwriter("states-of.mjs", str(out), *map(str, files), pi=pi)
    return {f["path"]: f for f in json.loads(out.read_text(encoding="utf-8"))["files"]}


def open_with_pi(files: list[Path], out: Path, pi: str = "1.6") -> list[dict[str, Any]]:
    """What Pi's SessionManager.open() makes of session files of any version (it migrates a copy
    of each; lines it cannot parse it skips, and positions count only the entries it loaded): per
    file, the selected path and the context as 0-based positions in file order (tests/piwriter/
    open-v1.mjs). Skips the calling test when Pi's writer is unavailable."""
    run_piwriter("open-v1.mjs", str(out), *map(str, files), pi=pi)
    result: list[dict[str, Any]] = json.loads(out.read_text(encoding="utf-8"))["files"]
    return result
