"""The extension installs its own server, in a real VS Code (code-server in headless Chromium, as
tests/vscode/test_vscode_e2e.py): from a clean profile whose PATH has no pi-event-search and with
no piEvents.serverCommand, the install offer is accepted with a click on its button, the server is
installed into a venv in the extension's global storage by the bootstrap the .vsix carries, from
its wheelhouse alone (the package index is a closed local port), and the
whole search / read / trace / hover flow of test_vscode_e2e.py then passes on it. The update test
installs a .vsix whose wheel is one patch version newer over the same profile."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from test_vscode_e2e import ARTIFACTS, REPO, VSIX, check_full_run, drive, running_code_server

from support import closed_index_env

pytestmark = pytest.mark.editor


def path_without_server() -> str:
    """PATH without this test's venv and without any directory holding a pi-event-search."""
    venv_bin = Path(sys.executable).parent.resolve()
    dirs = [d for d in os.environ.get("PATH", "").split(os.pathsep)
            if d and Path(d).resolve() != venv_bin and not (Path(d) / "pi-event-search").exists()]
    return os.pathsep.join(dirs)


def no_server_env() -> dict[str, str]:
    """Environment overrides for a machine without the server (skips when that cannot be had)."""
    clean = path_without_server()
    assert shutil.which("pi-event-search", path=clean) is None
    python3 = shutil.which("python3", path=clean)
    # No route to any package index: the .vsix's wheelhouse is all the install may use.
    env = {"PATH": clean, "VIRTUAL_ENV": "", **closed_index_env()}
    if python3 and subprocess.run([python3, "-c", "import pi_event_search"], env={**os.environ, **env},
                                  capture_output=True).returncode == 0:
        pytest.skip(f"{python3} (python3 on PATH) has pi_event_search: cannot play a machine without one")
    return env


def vsix_wheel_version() -> str:
    with zipfile.ZipFile(VSIX) as z:
        wheels = [n for n in z.namelist() if n.startswith("extension/bootstrap/wheelhouse/pi_event_search-")]
    assert len(wheels) == 1, wheels
    return wheels[0].split("/")[-1].split("-")[1]


@pytest.mark.timeout(1200)
def test_installs_its_own_server_then_search_read_trace_hover(tmp_path: Path) -> None:
    """A clean profile, no server on PATH, no serverCommand: accept the offer, then everything works."""
    env = no_server_env()
    if not VSIX.exists():
        pytest.skip("clients/vscode/pi-event-search.vsix not built (scripts/setup.d/40-vscode.sh)")
    wheel_version = vsix_wheel_version()
    with running_code_server(tmp_path, "-install", env, **{"piEvents.serverCommand": None}) as (fx, url, tmp):
        out = drive(url, tmp, fx, mode="install")
    assert "Install pi-event-search" in out["offer"] and "Python" in out["offer"], out["offer"]
    assert {"Install Server", "Use My Own Server…"} <= set(out["offerButtons"]), out["offerButtons"]
    assert out["install"]["version"] == wheel_version, out["install"]
    assert "installing server" in out["progress"], out["progress"]  # the progress notification
    assert "Pi Events: installing the server" in out["statusWhileInstalling"], out
    # The venv is in the extension's global storage and has the server.
    storage = tmp / "cs" / "user" / "User" / "globalStorage" / "pi-event-search.pi-event-search" / "server"
    record = json.loads((storage / "installed.json").read_text())
    assert record["version"] == wheel_version and record["venv"] == out["install"]["venv"]
    assert record["offline"] is True, record  # from the wheelhouse, with no index reachable
    venv_python = storage / record["venv"] / "bin" / "python"
    probe = subprocess.run([str(venv_python), "-c", "import pi_event_search, sys; print(sys.prefix)"],
                           capture_output=True, text=True)
    assert probe.returncode == 0 and probe.stdout.strip() == str(storage / record["venv"]), probe
    log = (ARTIFACTS / "pi-events-install.log").read_text()
    started = f"starting {venv_python} -m pi_event_search serve (from the server installed by this extension"
    assert started in log, log[-3000:]
    (ARTIFACTS / "install-figures.json").write_text(json.dumps(
        {"installSeconds": out["install"]["seconds"], "clickToInstalledMs": out["installClickToDone"],
         "steps": out["steps"], "python": record["basePython"], "pythonVersion": record["pythonVersion"],
         "vsixBytes": VSIX.stat().st_size}, indent=1))
    check_full_run(fx, out)
    for name in ("install-offer", "install-progress"):
        assert (ARTIFACTS / f"{name}.png").exists(), name


def newer_vsix(work: Path) -> tuple[Path, str]:
    """The .vsix with its server wheel rebuilt one patch version up (from a copy of this checkout)."""
    src = work / "src"
    shutil.copytree(REPO / "server" / "pi_event_search", src / "server" / "pi_event_search",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "README.md", src / "README.md")
    pyproject = (REPO / "pyproject.toml").read_text()
    m = re.search(r'^version = "(\d+)\.(\d+)\.(\d+)"', pyproject, re.M)
    assert m, "pyproject.toml: no x.y.z version"
    newer = f"{m[1]}.{m[2]}.{int(m[3]) + 1}"
    (src / "pyproject.toml").write_text(pyproject.replace(m[0], f'version = "{newer}"', 1))
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
                            "-w", str(work / "wheel"), str(src)], capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr[-2000:]
    wheel = next((work / "wheel").glob("pi_event_search-*.whl"))
    out = work / "newer.vsix"
    with zipfile.ZipFile(VSIX) as old, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as new:
        for item in old.infolist():
            if not item.filename.startswith("extension/bootstrap/wheelhouse/pi_event_search-"):
                new.writestr(item, old.read(item.filename))
        new.write(wheel, f"extension/bootstrap/wheelhouse/{wheel.name}")
    return out, newer


@pytest.mark.timeout(1500)
def test_offers_the_newer_bundled_server_as_an_update(tmp_path: Path) -> None:
    """Install from the offer, then a .vsix with a newer wheel: the update is offered, accepted,
    the server restarts on it, and the old environment goes."""
    env = no_server_env()
    if not VSIX.exists():
        pytest.skip("clients/vscode/pi-event-search.vsix not built (scripts/setup.d/40-vscode.sh)")
    old_version = vsix_wheel_version()
    newer, new_version = newer_vsix(tmp_path / "newer")
    profile = tmp_path / "profile"
    unset = {"piEvents.serverCommand": None}
    (tmp_path / "first").mkdir()
    with running_code_server(tmp_path / "first", "-update-1", env, data_dir=profile,
                             **unset) as (fx, url, tmp):
        first = drive(url, tmp, fx, mode="install", stopAfterReady=True, resultName="result-update-1.json")
    assert first["install"]["version"] == old_version
    (tmp_path / "second").mkdir()
    with running_code_server(tmp_path / "second", "-update-2", env, data_dir=profile, vsix=newer,
                             **unset) as (fx, url, tmp):
        out = drive(url, tmp, fx, mode="update", stopAfterReady=True, resultName="result-update-2.json")
        steps = [json.loads(line) for line in (tmp / "e2e.jsonl").read_text().splitlines()]
    assert f"brings server {new_version}; the installed one is {old_version}" in out["offer"], out["offer"]
    assert {"Update Server", "Later"} <= set(out["offerButtons"]), out["offerButtons"]
    assert out["install"]["version"] == new_version
    storage = profile / "user" / "User" / "globalStorage" / "pi-event-search.pi-event-search" / "server"
    record = json.loads((storage / "installed.json").read_text())
    assert record["version"] == new_version and record["venv"] == out["install"]["venv"]
    started = [s["command"][0] for s in steps if s["event"] == "serverStarted"]
    assert len(started) == 2 and started[0] == str(storage / first["install"]["venv"] / "bin" / "python")
    assert started[1] == str(storage / record["venv"] / "bin" / "python"), started
    # The old environment is gone once the new server runs; only the new one is left.
    assert sorted(p.name for p in storage.glob("venv-*")) == [record["venv"]]
    (ARTIFACTS / "update-figures.json").write_text(json.dumps(
        {"from": old_version, "to": new_version, "updateSeconds": out["install"]["seconds"],
         "clickToInstalledMs": out["installClickToDone"]}, indent=1))
