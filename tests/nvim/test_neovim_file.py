"""Issue 18 in real headless Neovim against the real server: `:PiEvents blame` (a floating preview
whose `o` opens the event), `:PiEvents file` and `:Telescope pi_events file`. Scripts in
tests/nvim/scripts, run as in test_neovim.py; the sessions are built here with tests/builder.py."""

from __future__ import annotations

import os
from datetime import timedelta

import pytest
from test_neovim import World, needs_nvim, ok, run_script, server_cmd, telescope_checkouts

from builder import BASE_TIME, SessionBuilder

pytestmark = pytest.mark.editor
__all__ = ["server_cmd"]  # the module-scoped fixture, shared with test_neovim.py

FILE = [
    "export function reconnect(attempt) {",  # 1: the write
    "  const delay = backoff(attempt);",  # 2: the newest edit, after an older one
    "  // adjusted by hand",  # 3: nobody
    "}",  # 4: trivial
]


@pytest.fixture(scope="module")
def file_world(tmp_path_factory: pytest.TempPathFactory) -> World:
    tmp = tmp_path_factory.mktemp("nvim-file").resolve()
    proj = tmp / "proj"
    (proj / ".git").mkdir(parents=True)
    (proj / "src").mkdir()
    ws = proj / "src" / "ws.ts"
    ws.write_text("\n".join(FILE) + "\n")
    sessions = tmp / "agent" / "sessions"
    s1 = SessionBuilder(sessions, str(proj), start=BASE_TIME)
    s1.user("write the reconnect helper")
    write = s1.assistant(tool_calls=[("w1", "write", {
        "path": "src/ws.ts", "content": "export function reconnect(attempt) {\n"
                                        "  const delay = 1000;\n}\n"})])
    s1.tool_result("w1", "write", "Successfully wrote 58 bytes to src/ws.ts")
    read = s1.assistant(tool_calls=[("r1", "read", {"path": "src/ws.ts"})])
    s1.tool_result("r1", "read", "export function reconnect(attempt) {")
    edits = []
    for n, (old, hours) in enumerate((("  const delay = 1000;", 1), ("  const delay = 5;", 2))):
        s = SessionBuilder(sessions, str(proj), start=BASE_TIME + timedelta(hours=hours))
        s.user("use backoff")
        eid = s.assistant(tool_calls=[(f"e{n}", "edit", {"path": "src/ws.ts", "edits": [
            {"oldText": old, "newText": "  const delay = backoff(attempt);"}]})])
        s.tool_result(f"e{n}", "edit", "Successfully replaced 1 block(s) in src/ws.ts.")
        edits.append(f"pi-event:{s.session_id}/{eid}")
    env = dict(os.environ)
    xdg = tmp / "xdg"
    env.update({
        "PI_CODING_AGENT_DIR": str(tmp / "agent"), "PI_EVENT_SEARCH_INDEX": str(tmp / "index.sqlite3"),
        "XDG_CONFIG_HOME": str(xdg / "config"), "XDG_DATA_HOME": str(xdg / "data"),
        "XDG_STATE_HOME": str(xdg / "state"), "XDG_CACHE_HOME": str(xdg / "cache"),
    })
    env.pop("NVIM", None)
    env.pop("VIMINIT", None)
    facts = {
        "file": str(ws), "written_line": 2, "hand_line": 3, "trivial_line": 4,
        "write": f"pi-event:{s1.session_id}/{write}", "read": f"pi-event:{s1.session_id}/{read}",
        "older_edit": edits[0], "newer_edit": edits[1],
    }
    return World(tmp=tmp, proj=proj, notes=ws, env=env, facts=facts)


def read_buffer(ref: str) -> str:
    return f"pi-event://read/{ref.removeprefix('pi-event:')}"


@needs_nvim
def test_blame_and_file_history(file_world: World, server_cmd: list[str]) -> None:
    out = ok(run_script("blame", file_world, server_cmd))
    f = file_world.facts
    float_ = out["float"]
    assert float_["relative"] != "" and float_["entered"] is True
    assert float_["hit"] == f["newer_edit"] and float_["candidates"] == [f["older_edit"]]
    assert float_["lines"][0] == f"Line 2 was written by {f['newer_edit']}"
    assert any(f["older_edit"] in line for line in float_["lines"])
    assert out["read_buffer"] == read_buffer(f["newer_edit"]) and out["float_closed"] is True
    assert out["said"] == [
        "pi_events: no Pi event is known to have written line 3",
        "pi_events: line 4 is too short to tell (blank, a brace, or under 8 characters)"]
    history = out["history"]
    assert history["refs"] == [f["newer_edit"], f["older_edit"], f["write"], f["read"]]
    assert history["prompt"] == "Pi history of ws.ts (changed in 3 · read in 1)"
    assert [line.split()[0] for line in history["lines"]] == ["changed"] * 3 + ["read"]
    assert out["history_read"] == read_buffer(f["read"])


@needs_nvim
def test_telescope_file_history(file_world: World, server_cmd: list[str]) -> None:
    rtp = telescope_checkouts()
    if rtp is None:
        pytest.skip("set TELESCOPE_RTP and PLENARY_RTP to checkouts of telescope.nvim and "
                    "plenary.nvim to run the telescope picker test")
    out = ok(run_script("telescope_file", file_world, server_cmd, **rtp))
    f = file_world.facts
    assert out["entries"] == [f["newer_edit"], f["older_edit"], f["write"], f["read"]]
    assert out["read_buffer"] == read_buffer(f["newer_edit"])

