"""scripts/apt-install, which ./scripts/test and scripts/setup.d use for system packages: it says
what it installs and why before it runs apt-get, as root directly and otherwise with sudo, and says
what to run when it cannot (issue 38: `./scripts/test` worked only as root). apt-get and sudo are
stand-ins that record how they were called; the script runs as a user who is not root."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parents[1] / "scripts" / "apt-install"
NOBODY = 65534


@pytest.fixture
def tools_dir():
    """A directory the other user can reach (pytest's tmp_path is root's alone)."""
    path = Path(tempfile.mkdtemp(prefix="apt-install-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path)


def _tools(tmp_path: Path, sudo: bool) -> Path:
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "apt-get").write_text('#!/bin/sh\necho "apt-get($(id -u)) $*" >&2\n')
    if sudo:  # a sudo that lets this user run anything without a password, as a CI's often does
        (bin_ / "sudo").write_text('#!/bin/sh\necho "sudo $*" >&2\n[ "$1" = -n ] && shift\n'
                                   '[ "$1" = true ] && exit 0\nexec "$@"\n')
    for tool in bin_.iterdir():
        tool.chmod(0o755)
    return bin_


def _run(tmp_path: Path, *, sudo: bool, user: int | None) -> subprocess.CompletedProcess[str]:
    bin_ = _tools(tmp_path, sudo)
    # A copy the other user can reach wherever the checkout lies (issue 47: a clone under a
    # private directory, `mktemp -d` or /root, is not theirs to enter).
    script = bin_ / SCRIPT.name
    shutil.copyfile(SCRIPT, script)
    script.chmod(0o755)
    prefix = [] if user is None else ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups"]
    env = {"PATH": f"{bin_}:/usr/bin:/bin", "HOME": str(tmp_path)}
    return subprocess.run([*prefix, str(script), "the read-only check", "strace", "lua-check"], env=env,
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=60, start_new_session=True)  # no terminal to ask on


needs_root = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                                reason="runs the script as another user: needs root and setpriv")


@needs_root
def test_not_root_uses_sudo_and_says_so_first(tools_dir):
    out = _run(tools_dir, sudo=True, user=NOBODY)
    assert out.returncode == 0, out.stdout
    lines = out.stdout.splitlines()
    said = lines.index("apt-install: installing strace lua-check (the read-only check), with sudo")
    installs = [n for n, line in enumerate(lines) if line.startswith("apt-get(")]
    assert installs and said < installs[0], lines  # said before apt-get runs
    assert f"apt-get({NOBODY}) -qq update" not in out.stdout  # never apt-get as the user itself
    assert any(line.startswith("sudo -n env DEBIAN_FRONTEND=noninteractive apt-get install") and
               line.endswith("strace lua-check") for line in lines), lines


@needs_root
def test_not_root_without_sudo_says_what_to_run(tools_dir):
    out = _run(tools_dir, sudo=False, user=NOBODY)
    assert out.returncode == 1
    assert out.stdout.strip() == (
        "apt-install: cannot install strace lua-check (the read-only check): not root, and sudo cannot "
        "run here; run: sudo apt-get install strace lua-check")


@needs_root
def test_root_runs_apt_get_itself(tools_dir):
    out = _run(tools_dir, sudo=True, user=None)
    assert out.returncode == 0, out.stdout
    assert "sudo" not in out.stdout
    assert out.stdout.splitlines()[0] == "apt-install: installing strace lua-check (the read-only check)"
    assert out.stdout.splitlines()[-1] == ("apt-get(0) install -y -qq --no-install-recommends strace "
                                           "lua-check")


def test_scripts_test_installs_through_it():
    """./scripts/test names what is missing, then installs it through apt-install (never apt-get
    itself), before anything else."""
    test = (SCRIPT.parent / "test").read_text()
    assert "apt-get" not in test
    assert test.index("(scripts/apt-missing)") < test.index("scripts/apt-install \"") < test.index("-m venv")
    for setup in (SCRIPT.parent / "setup.d").glob("*.sh"):
        assert "apt-get install" not in setup.read_text(), setup.name
