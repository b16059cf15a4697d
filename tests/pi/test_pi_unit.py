"""The Pi extension's own checks: ESLint (typescript-eslint, type-checked) then its unit tests
(`node --test`, loaded with jiti as Pi loads the extension), both in `npm test`, and the strict
type-check. Installed by scripts/setup.d/50-pi.sh; skipped, saying why, when it could not be.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXT = Path(__file__).resolve().parents[2] / "clients" / "pi"


def need_node_modules() -> None:
    if shutil.which("node") is None:
        pytest.skip("node not found")
    for package in ("jiti", "eslint", "typescript-eslint"):
        if not (EXT / "node_modules" / package).exists():
            pytest.skip(f"clients/pi/node_modules/{package} missing: run scripts/setup.d/50-pi.sh")


def test_unit_tests_pass() -> None:
    need_node_modules()
    # The EventServer tests run against this checkout's server.
    env = {**os.environ, "PIES_TEST_SERVER": f"{sys.executable} -m pi_event_search"}
    out = subprocess.run(["npm", "test", "--silent"], cwd=EXT, capture_output=True, text=True,
                         timeout=300, env=env)
    summary = "\n".join(line for line in out.stdout.splitlines() if line.startswith("# "))
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    m = re.search(r"^# pass (\d+)$", out.stdout, re.M)
    assert m and int(m[1]) >= 25, summary
    assert re.search(r"^# fail 0$", out.stdout, re.M), summary
    assert re.search(r"^# skipped 0$", out.stdout, re.M), summary


def test_npm_test_lints_first() -> None:
    # The house habit: lint problems fail `npm test` before any unit test runs.
    manifest = json.loads((EXT / "package.json").read_text())
    assert manifest["scripts"]["test"].startswith("eslint && ")
    assert {"eslint", "typescript-eslint", "@eslint/js"} <= set(manifest["devDependencies"])


def test_typecheck_strict() -> None:
    need_node_modules()
    config = json.loads((EXT / "tsconfig.json").read_text())
    assert config["compilerOptions"]["strict"] is True
    out = subprocess.run(["npx", "tsc", "--noEmit"], cwd=EXT, capture_output=True, text=True,
                         timeout=180)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]


def test_package_is_a_pi_package() -> None:
    manifest = json.loads((EXT / "package.json").read_text())
    assert "pi-package" in manifest["keywords"]
    assert manifest["pi"]["extensions"] == ["./src/index.ts"]
    assert not manifest.get("dependencies"), "runtime dependencies would need an install step"
    assert set(manifest["peerDependencies"]) >= {"@mariozechner/pi-coding-agent", "typebox"}


def test_the_repository_is_a_pi_package_for_pi_install() -> None:
    """`pi install <clone>` reads the root package.json: it names the extension and nothing else
    (no dependencies for the `npm install` Pi runs after a git clone, no scripts, no "type" that
    would change how Node reads the repository's other .js files)."""
    root = EXT.parents[1]
    manifest = json.loads((root / "package.json").read_text())
    assert manifest["private"] is True and "pi-package" in manifest["keywords"]
    assert manifest["pi"] == {"extensions": ["./clients/pi/src/index.ts"]}
    assert (root / manifest["pi"]["extensions"][0]).exists()
    for key in ("dependencies", "devDependencies", "scripts", "type", "workspaces"):
        assert key not in manifest, key
    assert "/package-lock.json" in (root / ".gitignore").read_text().splitlines()
