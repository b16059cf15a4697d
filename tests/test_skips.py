"""The skip check (tests/skips.py) on real pytest reports: a skip not on the allow-list fails the
run, an allowed one passes with its reason shown, a run without tests fails."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from pathlib import Path

import skips

TELESCOPE = ("set TELESCOPE_RTP and PLENARY_RTP to checkouts of telescope.nvim and plenary.nvim "
             "(git clone failed)")
VSCODE = "clients/vscode/node_modules missing: run scripts/setup.d/40-vscode.sh"


def _junit(tmp_path: Path, body: str) -> Path:
    """pytest's own junit report of a test file holding `body`."""
    (tmp_path / "test_sample.py").write_text("import pytest\n\n" + body)
    out = tmp_path / "junit.xml"
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                    f"--junitxml={out}", "--rootdir", str(tmp_path), str(tmp_path)],
                   cwd=tmp_path, capture_output=True, check=False)
    return out


def _check(tmp_path: Path, body: str) -> tuple[int, str]:
    """The skip check's exit code and output on pytest's report of `body`."""
    junit = _junit(tmp_path, body)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = skips.main([str(junit)])
    return rc, out.getvalue()


def test_a_skip_not_on_the_list_fails_the_run(tmp_path: Path) -> None:
    rc, out = _check(tmp_path, "def test_runs():\n    pass\n\n\n"
                               f"def test_skips():\n    pytest.skip({VSCODE!r})\n")
    assert rc == 1
    assert "== skips: 1 (2 tests in the report)" in out
    assert f"NOT ALLOWED test_sample::test_skips: {VSCODE}" in out


def test_an_allowed_skip_passes_and_says_why(tmp_path: Path) -> None:
    rc, out = _check(tmp_path, "@pytest.mark.parametrize('n', [1, 2])\n"
                               f"def test_picker(n):\n    pytest.skip({TELESCOPE!r})\n")
    assert rc == 0
    assert out.count("allowed     test_sample::test_picker") == 2
    assert "github.com" in out


def test_a_module_skipped_at_collection_is_checked_too(tmp_path: Path) -> None:
    assert _check(tmp_path, f"pytest.skip({VSCODE!r}, allow_module_level=True)\n")[0] == 1


def test_a_run_without_tests_fails(tmp_path: Path) -> None:
    rc, out = _check(tmp_path, "# nothing to collect\n")
    assert rc == 1
    assert "no test ran" in out


def test_lint_tools_skipped_by_other_steps(tmp_path: Path) -> None:
    junit = _junit(tmp_path, "def test_runs():\n    pass\n")
    lines = tmp_path / "other.txt"
    lines.write_text("lua lint: lua-language-server: on no registry this project reaches\n")
    assert skips.main([str(junit), str(lines)]) == 0
    lines.write_text("lua lint: luacheck: not installed\n")
    assert skips.main([str(junit), str(lines)]) == 1


def test_every_allowed_entry_says_why() -> None:
    assert 1 <= len(skips.ALLOWED) <= 5
    assert all(len(a.why) > 40 for a in skips.ALLOWED)
