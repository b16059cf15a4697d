"""One `pi install` of a clean copy of the repository is all a person runs: with no server
anywhere and a fresh HOME, the first headless turn's event_search installs the extension's own
server (a private venv, from the checkout) and finds an earlier session's event.

Needs the Python package index (pip fetches the server's dependencies and its build backend), as
a person's first use does; skipped, saying why, when `git` or Python 3.11 is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from pihelp import EXT, FAKE_MODEL, REPO, WORD, Rpc, pi_cli, pi_node

from builder import SessionBuilder, encoded_dir
from support import closed_index_env

INSTALL_TURN_TIMEOUT = 600  # the whole first turn, install included


def clean_path() -> str:
    """PATH without any pi-event-search (this checkout's venv, ~/.local/bin)."""
    keep = [d for d in os.environ.get("PATH", "").split(os.pathsep)
            if d and not (Path(d) / "pi-event-search").exists()]
    return os.pathsep.join(keep)


def first_search(cli: Path, agent: Path, proj: Path, env: dict[str, str],
                 tmp_path: Path) -> str:
    """A scripted first turn in `proj` whose event_search (which installs the server first) finds
    an earlier session's event; that event's reference."""
    earlier = SessionBuilder(agent / "sessions", str(proj))
    earlier.user(f"how do we deploy {WORD}?")
    hit = earlier.assistant(f"Deploy {WORD} with make ship.")
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [
        {"calls": [{"name": "event_search", "args": {"query": WORD}}]}, {"text": "done"}]}))
    env.update(PI_FAKE_SCRIPT=str(script))
    # Our extension comes from the installed package; only the scripted model is added.
    node = pi_node()
    turn = subprocess.run([node, str(cli), "-p", "--offline", "-nc", "-e", str(FAKE_MODEL),
                           "--provider", "fake", "--model", "fake-1", "what about deploys?"],
                          env=env, cwd=proj, capture_output=True, text=True,
                          timeout=INSTALL_TURN_TIMEOUT)
    assert turn.returncode == 0, turn.stdout[-3000:] + turn.stderr[-3000:]
    files = sorted((agent / "sessions" / encoded_dir(str(proj))).glob("*.jsonl"),
                   key=lambda f: f.stat().st_mtime)
    entries = [json.loads(line) for line in files[-1].read_text().splitlines()]
    results = [e["message"] for e in entries
               if (e.get("message") or {}).get("role") == "toolResult"]
    assert len(results) == 1, results
    text = "\n".join(c.get("text", "") for c in results[0]["content"])
    assert not results[0]["isError"], text
    ref = f"pi-event:{earlier.session_id}/{hit}"
    assert ref in text, text
    return ref


@pytest.mark.timeout(INSTALL_TURN_TIMEOUT + 120)
def test_pi_install_of_the_repository_then_the_first_search_installs_the_server(
        tmp_path: Path) -> None:
    cli = pi_cli()
    if shutil.which("git") is None:
        pytest.skip("git not found")
    clone = tmp_path / "pi-event-search"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    home, proj = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    proj.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PI_", "XDG_", "VIRTUAL_ENV"))}
    env.update(HOME=str(home), PATH=clean_path())
    assert shutil.which("pi-event-search", path=env["PATH"]) is None
    node = pi_node()

    installed = subprocess.run([node, str(cli), "install", str(clone)], env=env, cwd=tmp_path,
                               capture_output=True, text=True, timeout=120)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    agent = home / ".pi" / "agent"
    assert json.loads((agent / "settings.json").read_text())["packages"], "not in settings"

    ref = first_search(cli, agent, proj, env, tmp_path)

    data = home / ".local" / "share" / "pi-event-search" / "pi-extension"
    record = json.loads((data / "installed.json").read_text())
    assert record["identity"].startswith("checkout:") and record["source"] == str(clone)
    assert (data / record["venv"] / "bin" / "pi-event-search").exists()
    print(f"first-use install: {record['seconds']} s (Python {record['pythonVersion']})")

    # A newer server arrives with the extension (as `pi update` pulls the clone): the next Pi
    # installs it into a new venv, with progress in the status line (`/events` in RPC mode here),
    # and keeps the previous venv for Pis still running it.
    with (clone / "server" / "pi_event_search" / "__init__.py").open("a") as fh:
        fh.write("\n# a newer server\n")
    proc = subprocess.Popen([node, str(cli), "--mode", "rpc", "--offline", "-nc"], env=env,
                            cwd=proj, text=True, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    rpc = Rpc(proc, wait=INSTALL_TURN_TIMEOUT)
    try:
        rpc.send({"id": "p1", "type": "prompt", "message": f"/events {WORD}"})
        ask = rpc.wait_for({"type": "extension_ui_request", "method": "select"})
        assert any(o.endswith(ref) for o in ask["options"])
        rpc.send({"type": "extension_ui_response", "id": ask["id"], "cancelled": True})
        rpc.wait_for({"type": "response", "id": "p1"})
    finally:
        rpc.close()
    steps = [m.get("statusText") for m in rpc.seen
             if m.get("method") == "setStatus" and m.get("statusKey") == "pi-event-search"]
    assert any("installing server" in (s or "") for s in steps), steps
    assert steps[-1] is None, "the status line is cleared after the install"
    updated = json.loads((data / "installed.json").read_text())
    assert updated["identity"] != record["identity"] and updated["venv"] != record["venv"]
    assert {p.name for p in data.glob("venv-*")} == {record["venv"], updated["venv"]}
    print(f"update install: {updated['seconds']} s")


@pytest.mark.timeout(INSTALL_TURN_TIMEOUT + 300)
def test_the_packed_npm_package_installs_its_server_without_the_package_index(tmp_path: Path) -> None:
    """`npm pack` builds the wheelhouse into the package (prepack: scripts/build-wheelhouse); on a
    machine whose package index is unreachable, the first event_search installs from it alone."""
    cli = pi_cli()
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm not found")
    packed = subprocess.run([npm, "pack", "--pack-destination", str(tmp_path)], cwd=EXT,
                            env={**os.environ, "PYTHON": sys.executable},
                            capture_output=True, text=True, timeout=600)
    assert packed.returncode == 0, packed.stdout[-3000:] + packed.stderr[-3000:]
    tarball = next(tmp_path.glob("pi-event-search-pi-*.tgz"))
    with tarfile.open(tarball) as tar:
        names = tar.getnames()
        tar.extractall(tmp_path / "unpacked", filter="data")
    wheels = [n for n in names if n.startswith("package/bootstrap/wheelhouse/") and n.endswith(".whl")]
    assert "package/bootstrap/bootstrap.py" in names, names
    for py in ("cp311", "cp312", "cp313"):
        assert any("orjson-" in w and f"-{py}-" in w for w in wheels), (py, wheels)
    pkg = tmp_path / "unpacked" / "package"

    home, proj = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    proj.mkdir()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PI_", "XDG_", "VIRTUAL_ENV", "PIP_"))}
    env.update(HOME=str(home), PATH=clean_path(), **closed_index_env())
    node = pi_node()
    installed = subprocess.run([node, str(cli), "install", str(pkg)], env=env, cwd=tmp_path,
                               capture_output=True, text=True, timeout=120)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    first_search(cli, home / ".pi" / "agent", proj, env, tmp_path)
    record = json.loads((home / ".local" / "share" / "pi-event-search" / "pi-extension"
                         / "installed.json").read_text())
    assert record["offline"] is True and record["identity"].startswith("wheel:"), record
    assert record["source"].startswith(str(pkg / "bootstrap" / "wheelhouse")), record
    print(f"offline first-use install: {record['seconds']} s (Python {record['pythonVersion']}), "
          f"wheelhouse {len(wheels)} wheels, tarball {tarball.stat().st_size} bytes")
