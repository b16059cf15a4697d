"""Issue 32 in a real VS Code (code-server in headless Chromium, as tests/vscode/test_vscode_e2e.py),
driven by clients/vscode/test/e2e/drive-sessions.mjs: the Pi Sessions view lists every session of
the workspace, newest first; the search picker's "Group by session" toggle gives one row per session
(its strongest event first, in the event-level order), Enter opens that event and the choice stays
for the window; the view then shows that search (the query in its title), a session's matching
events under it (the same ranking, narrowed to the session), and a click opens one's read view;
back to every session, a session's events come in file order, and its Open button reads its
first event. Recorded text stays plain text and masked: a session named with markup shows the
markup as typed, a credential in a first prompt shows as `[redacted: …]`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_vscode_e2e import ARTIFACTS, EXT, QUERY, Fixture, run_driver, running_code_server

from builder import SessionBuilder

pytestmark = pytest.mark.editor
DRIVER = EXT / "test" / "e2e" / "drive-sessions.mjs"
MARKUP = "<b>bold</b> **not bold** $(zap) <img src=x onerror=alert(1)>"
TOKEN = "ghp_" + "Zq8" * 12  # a GitHub token's shape: masked by the server everywhere


class Plant:
    """Two more sessions in the workspace, neither matching the query: one named with markup, one
    whose first prompt holds a credential."""

    markup: SessionBuilder
    secret: SessionBuilder

    def __call__(self, fx: Fixture) -> None:
        sessions = fx.agent / "sessions"
        self.markup = SessionBuilder(sessions, str(fx.ws), name_seed="markup")
        self.markup.user("rename the release notes file")
        self.markup.assistant("Renamed it.")
        self.markup.session_info(MARKUP)
        self.secret = SessionBuilder(sessions, str(fx.ws), name_seed="secret")
        self.secret.user(f"use the token {TOKEN} to push the tag")
        self.secret.assistant("Pushed the tag.")


def refs_of(sb: SessionBuilder) -> list[str]:
    return [f"pi-event:{sb.session_id}/{i}" for i in sb.ids]


def test_sessions_picker_and_view(tmp_path: Path) -> None:
    plant = Plant()
    with running_code_server(tmp_path, "-sessions", plant=plant) as (fx, url, tmp):
        out = run_driver(DRIVER, tmp, "sessions", {
            "url": url, "query": QUERY, "sessionCount": 4,
            "expand": fx.b.session_id, "expandList": fx.a.session_id})
    a, b = fx.a, fx.b
    visible = {a.session_id, b.session_id, plant.markup.session_id, plant.secret.session_id}

    # 1. The list: every session of the workspace once (never the other project's), newest first.
    listed = out["list"]
    assert set(listed["sessions"]) == visible and len(listed["sessions"]) == 4, listed
    assert fx.hidden.session_id not in json.dumps(out)
    shown = [r["aria"] for r in out["listView"]["rows"]]
    assert shown == listed["rows"], (shown, listed["rows"])  # as shown = as made from the answer
    labels = dict(zip(listed["sessions"], listed["labels"], strict=True))
    assert labels[a.session_id] == "websocket reconnect fix"  # the name
    assert labels[b.session_id].startswith("the websocket keeps dropping")  # no name: first prompt
    # Recorded text is plain text: the markup as typed, no element made from it; a credential masked.
    markup_row = next(r for r in out["listView"]["rows"] if r["label"] == MARKUP)
    assert markup_row["markup"] == 0, markup_row
    assert "[redacted" in labels[plant.secret.session_id] and TOKEN not in json.dumps(out)
    counts = dict(zip(listed["sessions"], listed["counts"], strict=True))
    assert counts[plant.secret.session_id] == [2], counts

    # 2. The toggle: one row per session, in the order of their strongest events.
    assert out["toggleLabel"] == "Group by session: off" and out["toggleLabelOn"] == "Group by session: on"
    assert "by session" in out["groupedTitle"]
    events, grouped = out["events"], out["grouped"]
    assert grouped["sessions"] == [a.session_id, b.session_id] or grouped["sessions"] == [
        b.session_id, a.session_id], grouped
    assert len(set(grouped["sessions"])) == len(grouped["sessions"])
    # Each session's top is its first hit in the event-level order (the first page already has
    # the first session's top).
    first = events["refs"][0]
    assert grouped["refs"][0] == first, (grouped["refs"], events["refs"])
    for sid, top in zip(grouped["sessions"], grouped["refs"], strict=True):
        assert top.removeprefix("pi-event:").split("/")[0] == sid
    picker_rows = [r["aria"] for r in out["groupedRows"]]
    assert picker_rows == grouped["rows"], (picker_rows, grouped["rows"])
    assert all(" events match" in r or " event matches" in r for r in picker_rows), picker_rows
    # Enter: the first session's strongest event, in the read view. The choice is remembered.
    assert out["groupedRead"]["ref"] == first
    assert "by session" in out["rememberedTitle"], out["rememberedTitle"]

    # 3. The view shows that search: the query in its title, the same sessions in the same order.
    view = out["searchView"]
    assert QUERY in view["title"], view["title"]
    searched = out["searchLogged"]
    assert searched["query"] == QUERY and searched["sessions"] == grouped["sessions"]
    assert [r["aria"] for r in view["rows"]] == searched["rows"]
    # b's matching events: the same search narrowed to b, b's top first, as many as it matches.
    b_events = out["searchEvents"]
    i = grouped["sessions"].index(b.session_id)
    matches, total = searched["counts"][i]
    assert b_events["refs"][0] == grouped["refs"][i], (b_events["refs"], grouped["refs"])
    assert len(b_events["refs"]) == matches and not b_events["more"], (b_events, matches)
    assert set(b_events["refs"]) <= set(refs_of(b)) and total >= matches
    children = [r for r in out["searchExpanded"]["rows"] if r["level"] == 2]
    assert [r["aria"] for r in children] == b_events["rows"]
    assert any(h.lower() in QUERY for r in children for h in r["highlights"]), children
    # A click on one of them opens its read view.
    clicked = b_events["refs"][b_events["rows"].index(out["childClicked"])]
    assert out["childRead"]["ref"] == clicked

    # 4. Back to every session: a's events in file order, all of them; a click opens one.
    assert out["back"]["sessions"] == listed["sessions"]
    a_events = out["listEvents"]
    a_refs = refs_of(a)
    assert set(a_events["refs"]) <= set(a_refs)
    positions = [a_refs.index(r) for r in a_events["refs"]]
    assert positions == sorted(positions), positions
    assert len(a_events["refs"]) == counts[a.session_id][0] and not a_events["more"]
    clicked = a_events["refs"][a_events["rows"].index(out["listChildClicked"])]
    assert out["listChildRead"]["ref"] == clicked
    # Opening a session reads its first event in branch order (the list's `first`).
    assert out["sessionOpened"]["ref"] == a_refs[0] == a_events["refs"][0], out["sessionOpened"]
    assert out["sessionRead"]["ref"] == a_refs[0]
    for name in ("sessions-list", "sessions-picker", "sessions-view", "sessions-list-events",
                 "readme-sessions"):
        assert (ARTIFACTS / f"{name}.png").exists(), name
