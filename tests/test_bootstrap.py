"""The one installer every client runs (server/pi_event_search/bootstrap.py), as a process: its
JSON lines, its choice of Python and what it says when there is none, its lock, its record of
earlier installers' venvs, and the packaged wheelhouse that makes the package index unnecessary.

Interpreters other than this test's are stand-ins (shell scripts answering the probe), since a
machine with only an old Python cannot be had here; everything else is real: venvs, pip, wheels.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from support import closed_index_env

REPO = Path(__file__).resolve().parents[1]
BOOTSTRAP = REPO / "server" / "pi_event_search" / "bootstrap.py"
INSTALL_TIMEOUT = 600


def bootstrap(*args: str, env: dict[str, str] | None = None, script: Path = BOOTSTRAP,
              python: str = sys.executable) -> tuple[int, list[dict[str, Any]], str]:
    proc = subprocess.run([python, str(script), *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=INSTALL_TIMEOUT)
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    return proc.returncode, events, proc.stderr


def fake_python(bin_dir: Path, name: str, version: list[int], venv: bool) -> None:
    """An interpreter on PATH that answers the bootstrap's probe (and nothing else)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    answer = json.dumps({"executable": str(bin_dir / name), "version": version, "venv": venv})
    (bin_dir / name).write_text(f"#!/bin/sh\necho '{answer}'\n")
    (bin_dir / name).chmod(0o755)


def only_fakes_env(bin_dir: Path) -> dict[str, str]:
    """PATH with the stand-ins only (they are /bin/sh scripts): no real Python on it."""
    return {"PATH": str(bin_dir)}


def test_python_choice_says_what_is_missing(tmp_path: Path) -> None:
    from pi_event_search.bootstrap import Failure, choose_python

    fakes = tmp_path / "bin"
    fake_python(fakes, "python3", [3, 10, 12], venv=True)
    fake_python(fakes, "python3.9", [3, 9, 2], venv=True)
    old_path = os.environ["PATH"]
    os.environ["PATH"] = str(fakes)
    try:
        with pytest.raises(Failure) as old:
            choose_python(["python3", "python3.9", "python3.12"])
        fake_python(fakes, "python3.12", [3, 12, 1], venv=False)
        with pytest.raises(Failure) as no_venv:
            choose_python(["python3", "python3.12"])
        with pytest.raises(Failure) as none:
            choose_python(["python3.13"])
        fake_python(fakes, "python3.13", [3, 13, 0], venv=True)
        chosen = choose_python(["python3", "python3.12", "python3.13"])
    finally:
        os.environ["PATH"] = old_path
    assert old.value.code == "python-too-old"
    assert f"found only 3.10.12 ({fakes}/python3), 3.9.2 ({fakes}/python3.9)" in old.value.message
    assert "sudo apt install python3 python3-venv" in old.value.message
    assert no_venv.value.code == "no-venv" and no_venv.value.fix == "sudo apt install python3.12-venv"
    assert none.value.code == "no-python" and "tried python3.13" in none.value.message
    assert chosen.executable == f"{fakes}/python3.13" and chosen.version == [3, 13, 0]


def fake_launcher(bin_dir: Path, name: str, flag: str, version: list[int]) -> None:
    """Windows' py launcher as a stand-in: it answers the probe only when given `flag` first."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    answer = json.dumps({"executable": str(bin_dir / f"python{version[0]}{version[1]}.exe"),
                         "version": version, "venv": True})
    (bin_dir / name).write_text(f"#!/bin/sh\n[ \"$1\" = '{flag}' ] || exit 1\necho '{answer}'\n")
    (bin_dir / name).chmod(0o755)


def choose_on(platform: str, fakes: Path, **kw: Any) -> Any:
    """choose_python over the platform's own candidates, with only the stand-ins on PATH."""
    from pi_event_search.bootstrap import candidates, choose_python

    old_path = os.environ["PATH"]
    os.environ["PATH"] = str(fakes)
    try:
        return choose_python(candidates(platform, **kw.pop("candidates", {})), platform, **kw)
    finally:
        os.environ["PATH"] = old_path


def test_windows_takes_the_py_launcher_and_says_winget(tmp_path: Path) -> None:
    from pi_event_search.bootstrap import Failure

    fakes = tmp_path / "bin"
    fake_python(fakes, "python", [3, 10, 11], venv=True)
    with pytest.raises(Failure) as old:
        choose_on("win32", fakes)
    assert old.value.code == "python-too-old" and old.value.fix == "winget install Python.Python.3.13"
    assert "apt" not in old.value.message and "python.org/downloads/windows" in old.value.message
    fake_launcher(fakes, "py", "-3", [3, 12, 4])
    chosen = choose_on("win32", fakes)
    assert chosen.version == [3, 12, 4] and chosen.executable == str(fakes / "python312.exe")
    (fakes / "py").unlink()
    (fakes / "python").unlink()
    with pytest.raises(Failure) as none:
        choose_on("win32", fakes)
    assert none.value.code == "no-python" and "tried py -3, python, python3" in none.value.message


def test_macos_passes_over_the_system_python_for_a_newer_one(tmp_path: Path) -> None:
    """The system's python3 (3.9) is first on PATH; Homebrew's, off PATH as for an editor started
    from the Dock, is found in its own directory. With none, the message names brew, not apt."""
    from pi_event_search.bootstrap import Failure

    system, brew, path = tmp_path / "usr-bin", tmp_path / "homebrew-bin", tmp_path / "path"
    fake_python(system, "python3", [3, 9, 6], venv=True)
    path.mkdir()
    (path / "python3").symlink_to(system / "python3")
    dirs = {"macos_dirs": (str(brew),)}
    last = (str(system / "python3"),)
    with pytest.raises(Failure) as old:
        choose_on("darwin", path, candidates=dirs, last=last)
    assert old.value.code == "python-too-old" and old.value.fix == "brew install python@3.13"
    assert f"found only 3.9.6 ({system}/python3)" in old.value.message
    assert "/usr/bin/python3 is 3.9" in old.value.message and "apt" not in old.value.message
    fake_python(brew, "python3", [3, 13, 1], venv=True)
    chosen = choose_on("darwin", path, candidates=dirs, last=last)
    assert chosen.executable == f"{brew}/python3" and chosen.version == [3, 13, 1]

    # Named first (a client's --python, the script's own interpreter), the system's comes last.
    from pi_event_search.bootstrap import candidates, choose_python

    old_path = os.environ["PATH"]
    os.environ["PATH"] = str(path)
    try:
        fake_python(system, "python3", [3, 11, 2], venv=True)  # a newer Xcode's, still last
        chosen = choose_python([[str(system / "python3")], *candidates("darwin", **dirs)], "darwin", last)
    finally:
        os.environ["PATH"] = old_path
    assert chosen.executable == f"{brew}/python3"


def test_an_old_interpreter_runs_it_and_reports_too_old(tmp_path: Path) -> None:
    """Run by Python 3.8-3.10 (the syntax stays parseable there), it says so as JSON, exit 1."""
    fakes = tmp_path / "bin"
    fake_python(fakes, "python3", [3, 10, 12], venv=True)
    # This interpreter is 3.11+: it would be chosen; a stand-in runs the script's choice alone.
    code = ("import sys, runpy; sys.executable = sys.argv[1]; "
            "sys.argv = [sys.argv[2], '--home', sys.argv[3], '--from', sys.argv[4]]; "
            "runpy.run_path(sys.argv[0], run_name='__main__')")
    proc = subprocess.run([sys.executable, "-c", code, str(fakes / "python3"), str(BOOTSTRAP),
                           str(tmp_path / "home"), str(REPO)],
                          capture_output=True, text=True, env={**os.environ, **only_fakes_env(fakes)},
                          timeout=60)
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    assert proc.returncode == 1, proc.stderr
    assert events[-1]["event"] == "error" and events[-1]["code"] == "python-too-old", events
    assert "needs Python 3.11 or newer; found only 3.10.12" in events[-1]["message"]
    assert not (tmp_path / "home" / "install.lock").exists()


def test_records_of_earlier_installers_keep_working(tmp_path: Path) -> None:
    """VS Code's record before the bootstrap (a wheel hash, no identity) and Neovim's or the CLI's
    venv without a record are what --check reports as installed."""
    vscode = tmp_path / "vscode"
    (vscode / "venv-0.1.0-1" / "bin").mkdir(parents=True)
    (vscode / "venv-0.1.0-1" / "bin" / "python").touch()
    (vscode / "installed.json").write_text(json.dumps(
        {"version": "0.1.0", "wheel": "pi_event_search-0.1.0-py3-none-any.whl", "sha256": "ab12",
         "venv": "venv-0.1.0-1"}))
    code, events, _ = bootstrap("--home", str(vscode), "--check")
    assert code == 0 and events[-1]["record"]["identity"] == "wheel:ab12", events
    assert events[-1]["server"] == str(vscode / "venv-0.1.0-1" / "bin" / "pi-event-search")
    assert events[-1]["current"] is False  # this checkout is not that wheel

    nvim = tmp_path / "nvim"
    (nvim / "venv" / "bin").mkdir(parents=True)
    (nvim / "venv" / "bin" / "python").touch()
    code, events, _ = bootstrap("--home", str(nvim), "--check")
    assert code == 0 and events[-1]["record"]["venv"] == "venv", events
    assert events[-1]["python"] == str(nvim / "venv" / "bin" / "python")


def test_a_missing_source_is_an_error_not_a_pip_run(tmp_path: Path) -> None:
    code, events, _ = bootstrap("--home", str(tmp_path / "h"), "--from", str(tmp_path / "nothing"))
    assert code == 1 and events[-1]["code"] == "no-source"
    assert events[-1]["message"] == f"{tmp_path / 'nothing'}: no such wheel or checkout"
    assert not any(e["event"] == "step" and e["step"] == "venv" for e in events)


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """scripts/build-wheelhouse's output (dependency wheels cached under the tools directory)."""
    out = tmp_path_factory.mktemp("packaged") / "bootstrap"
    built = subprocess.run([sys.executable, str(REPO / "scripts" / "build-wheelhouse"), str(out)],
                           capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
    assert built.returncode == 0, built.stdout + built.stderr
    return out


def test_with_a_wheelhouse_it_installs_without_the_index(wheelhouse: Path, tmp_path: Path) -> None:
    names = sorted(p.name for p in (wheelhouse / "wheelhouse").glob("*.whl"))
    for py in ("cp311", "cp312", "cp313"):
        assert any(n.startswith("orjson-") and f"-{py}-" in n for n in names), names
    offline = closed_index_env()
    code, events, log = bootstrap("--home", str(tmp_path / "home"), env=offline,
                                  script=wheelhouse / "bootstrap.py")
    assert code == 0, (events, log[-3000:])
    done = events[-1]
    assert done["event"] == "done" and done["installed"] is True and done["record"]["offline"] is True
    assert "--no-index" in log and str(wheelhouse / "wheelhouse") in log
    steps = [e["message"] for e in events if e["event"] == "step"]
    assert steps[0] == "looking for Python 3.11 or newer"
    assert any("from the bundled wheelhouse" in s for s in steps), steps
    version = subprocess.run([done["server"], "--version"], capture_output=True, text=True, timeout=60)
    assert version.returncode == 0 and version.stdout.strip() == done["record"]["version"]

    # The same checkout without a wheelhouse needs the index: with none reachable, pip fails, the
    # error says where it looked, and the half-made venv is gone.
    code, events, _ = bootstrap("--home", str(tmp_path / "online"), env=offline)
    assert code == 1 and events[-1]["code"] == "pip-failed", events[-1]
    assert "is the Python package index reachable?" in events[-1]["message"]
    assert not list((tmp_path / "online").glob("venv-*"))


def test_one_install_at_a_time(wheelhouse: Path, tmp_path: Path) -> None:
    """Two clients starting at once: one installs, the other waits for it and then uses it."""
    home = tmp_path / "home"
    results: list[tuple[int, list[dict[str, Any]], str]] = []

    def one() -> None:
        results.append(bootstrap("--home", str(home), env=closed_index_env(),
                                 script=wheelhouse / "bootstrap.py"))

    threads = [threading.Thread(target=one) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r[0] for r in results] == [0, 0], results
    done = [r[1][-1] for r in results]
    assert sorted(d["installed"] for d in done) == [False, True], done
    assert done[0]["server"] == done[1]["server"]
    assert any(e["event"] == "waiting" for r in results for e in r[1]), results
    assert len(list(home.glob("venv-*"))) == 1 and not (home / "install.lock").exists()
