"""Issue 32 in real headless Neovim against the real server: `:PiEvents sessions` (the sessions list;
with a query, the search grouped by session) through vim.ui.select, the sessions finder and preview
that `:Telescope pi_events sessions` wraps, and the telescope picker itself when telescope is there.
Scripts in tests/nvim/scripts, run as in test_neovim.py; expected values come from the sessions
built here and from the server's own answers (piEvents/sessions, piEvents/search)."""

from __future__ import annotations

import os
from datetime import timedelta
from typing import Any

import pytest
from test_neovim import World, needs_nvim, ok, run_script, server_cmd, telescope_checkouts

from builder import BASE_TIME, SessionBuilder

pytestmark = pytest.mark.editor
__all__ = ["server_cmd"]  # the module-scoped fixture, shared with test_neovim.py

KEY = "sk-proj-Qx7vR2mN8kL4pT6wY1zB3cD5fG9hJ0aS"


@pytest.fixture(scope="module")
def sessions_world(tmp_path_factory: pytest.TempPathFactory) -> World:
    tmp = tmp_path_factory.mktemp("nvim-sessions").resolve()
    proj = tmp / "proj"
    (proj / ".git").mkdir(parents=True)
    sessions = tmp / "agent" / "sessions"
    # Oldest: named, one strong zebrafish hit and a weaker one.
    a = SessionBuilder(sessions, str(proj), start=BASE_TIME)
    a_first = a.user("fix the flaky websocket reconnect test")
    a_strong = a.assistant("zebrafish zebrafish zebrafish: the retry now backs off.")
    a.assistant("one more zebrafish note, among " + " ".join(f"word{i}" for i in range(40)))
    a.session_info("websocket reconnect fix")
    # Unnamed: titled by its first prompt, which holds a key (masked) and escapes (stripped).
    b = SessionBuilder(sessions, str(proj), start=BASE_TIME + timedelta(hours=1))
    b_first = b.user(f"why does the zebrafish build fail \x1b[2J\x1b]0;pwned\x07 with {KEY}?")
    b.assistant("Because the zebrafish module is missing.")
    # Newest: no zebrafish at all; a name with a control sequence.
    c = SessionBuilder(sessions, str(proj), start=BASE_TIME + timedelta(hours=2))
    c_first = c.user("deploy the app")
    c.assistant("Deployed.")
    c.session_info("deploy \x1b[31mnotes")
    # Another project: never listed.
    x = SessionBuilder(sessions, str(tmp / "elsewhere"), start=BASE_TIME + timedelta(hours=3))
    x.user("zebrafish in another project")
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
        "a": a.session_id, "b": b.session_id, "c": c.session_id, "other": x.session_id,
        "a_first": f"pi-event:{a.session_id}/{a_first}", "a_strong": f"pi-event:{a.session_id}/{a_strong}",
        "b_first": f"pi-event:{b.session_id}/{b_first}", "c_first": f"pi-event:{c.session_id}/{c_first}",
        "key": KEY,
    }
    return World(tmp=tmp, proj=proj, notes=proj, env=env, facts=facts)


@pytest.fixture(scope="module")
def sessions_run(sessions_world: World, server_cmd: list[str]) -> dict[str, Any]:
    """One run of the script serves both tests below (one Neovim, one server)."""
    return ok(run_script("sessions", sessions_world, server_cmd))


def read_buffer(ref: str) -> str:
    return f"pi-event://read/{ref.removeprefix('pi-event:')}"


def tops_in_event_order(hits: list[dict[str, str]]) -> list[str]:
    """The first hit of each session in the event-level order: what grouping must give."""
    seen: dict[str, str] = {}
    for h in hits:
        seen.setdefault(h["sessionId"], h["ref"])
    return list(seen.values())


@needs_nvim
def test_sessions_command_list_and_grouped_search(sessions_world: World,
                                                   sessions_run: dict[str, Any]) -> None:
    out = sessions_run
    f = sessions_world.facts
    assert out["has_telescope"] is False

    # :PiEvents sessions: every visible session, newest first, a row each; a row opens its first event.
    listed = out["list"]
    assert listed["kind"] == "pi_events" and "newest first" in listed["prompt"]
    assert listed["refs"] == [f["c_first"], f["b_first"], f["a_first"]]
    assert listed["refs"] == out["raw_list"]
    lines = listed["items"]
    assert lines[0].startswith("deploy notes") and lines[2].startswith("websocket reconnect fix")
    assert "3 events" in lines[0]  # the name entry is an event too
    assert "2026-05-01 12:00" in lines[0]
    assert "why does the zebrafish build fail" in lines[1] and "[redacted" in lines[1]
    assert all(f["key"][8:20] not in line and "\x1b" not in line and "pwned" not in line
               for line in lines)
    assert out["list_opened"] == read_buffer(f["b_first"])

    # :PiEvents sessions QUERY: the grouped search; each row's event is its session's strongest hit.
    grouped = out["grouped"]
    assert "strongest hit first" in grouped["prompt"]
    assert grouped["refs"] == out["raw_grouped"] == tops_in_event_order(out["raw_hits"])
    assert grouped["refs"][0] == f["a_strong"] and len(grouped["refs"]) == 2
    assert f["other"] not in " ".join(grouped["refs"])
    assert "2 of 4" in grouped["items"][0] and "2 of 2" in grouped["items"][1]
    # and the strongest hit's kind and snippet
    assert "assistant.text  zebrafish zebrafish zebrafish: the retry" in grouped["items"][0]
    # (the short answer outranks the longer question: a word once in fewer words counts more)
    assert "assistant.text  Because the zebrafish module is missing" in grouped["items"][1]
    assert all(f["key"][8:20] not in line and "\x1b" not in line for line in grouped["items"])
    assert not any("assistant.text" in line or "user.text" in line for line in lines), "list rows"
    assert out["grouped_opened"] == read_buffer(f["a_strong"])
    assert out["none_note"] and "no session has events matching" in out["none_note"]


@needs_nvim
def test_sessions_finder_and_preview(sessions_world: World, sessions_run: dict[str, Any]) -> None:
    """What `:Telescope pi_events sessions` shows, without telescope: its finder's entries for an
    empty prompt (the list) and a typed prefix (grouped), their display, and the preview."""
    out = sessions_run
    f = sessions_world.facts
    empty = out["finder_empty"]
    assert [e["ref"] for e in empty] == [f["c_first"], f["b_first"], f["a_first"]]
    typed = out["finder_typed"]
    # "zebraf" searches as a prefix: the same tops as the server's grouped prefix search.
    assert [e["ref"] for e in typed] == out["raw_grouped_prefix"]
    assert typed[0]["ref"] == f["a_strong"] and typed[0]["session"] == f["a"]
    assert typed[0]["display"].startswith("websocket reconnect fix")
    assert {"PiEventsLabel", "PiEventsKind", "PiEventsMeta"} <= set(typed[0]["groups"])
    rows = out["grouped_rows"]
    assert rows[0]["display"] == out["grouped"]["items"][0]
    assert rows[0]["matched"] == ["zebrafish"] * 3 and rows[1]["matched"] == ["zebrafish"]
    assert out["finder_requests"] >= 2
    # The preview: the session's summary, then the read view of its strongest hit.
    preview = out["preview"]
    assert preview[0] == "# websocket reconnect fix"
    assert any(line.startswith("events:") and "2 of 4 match" in line for line in preview)
    assert any(line == f"# {f['a_strong']}" for line in preview)
    assert any("zebrafish zebrafish zebrafish" in line for line in preview)
    unnamed = out["preview_unnamed"]
    assert unnamed[0] == "# (unnamed session)"
    assert any(line.startswith("first:") and "[redacted" in line for line in unnamed)
    assert not any(f["key"][8:20] in line or "\x1b" in line for line in unnamed)


@needs_nvim
def test_telescope_sessions_picker(sessions_world: World, server_cmd: list[str]) -> None:
    rtp = telescope_checkouts()
    if rtp is None:
        pytest.skip("set TELESCOPE_RTP and PLENARY_RTP to checkouts of telescope.nvim and "
                    "plenary.nvim (or let scripts/setup.d/30-neovim.sh clone them into "
                    "$PI_EVENT_SEARCH_TOOLS) to run the telescope sessions picker test")
    out = ok(run_script("telescope_sessions", sessions_world, server_cmd, **rtp))
    f = sessions_world.facts
    assert out["listed"] == [f["c_first"], f["b_first"], f["a_first"]]
    assert out["grouped"] == out["raw_grouped"] and out["grouped"][0] == f["a_strong"]
    assert out["opened"] == read_buffer(f["a_strong"])
