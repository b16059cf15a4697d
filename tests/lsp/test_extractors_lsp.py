"""The extractor registry (issue 32) through real servers over stdio: initializationOptions.extractors
and the user file, bad entries as a warning, masking, a reader that never shows a type its own
registry lacks (whatever the writer indexed), and a changed setting projecting again only the
sessions holding the types concerned (the others' rows keep their row ids)."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

from lsprotocol import types as t

from builder import SessionBuilder
from lsp.conftest import wait_for
from support import PiHome

TODO_STATE = {"customType": "todo-state", "fields": ["title", "items.*.text"], "label": "Todos"}
NOTE = {"customType": "note-state", "fields": ["body", "tags.*"], "label": "Notes"}
KEY = "AKIAQYLPMN5HHHFPZAM2"


class Corpus:
    def __init__(self, sessions: Path, cwd: str) -> None:
        self.todo = SessionBuilder(sessions, cwd)
        self.todo.user("plan the week")
        self.todo_entry = self.todo.custom("todo-state", {
            "title": "groceries quokkaplan",
            "items": [{"text": "buy wombatmilk"}, {"text": f"deploy key {KEY} zebrakey"}]})
        self.note = SessionBuilder(sessions, cwd)
        self.note_user = self.note.user("a note session")
        self.note_entry = self.note.custom("note-state", {
            "body": "remember platypusnote", "tags": {"a": "dingotag", "b": 3}})
        self.plain = SessionBuilder(sessions, cwd)
        self.plain.user("nothing custom here, only echidnaword")

    def ref(self, sb: SessionBuilder, entry: str) -> str:
        return f"{sb.session_id}/{entry}"


async def _ask(client: Any, method: str, params: Any) -> Any:
    return await client.protocol.send_request_async(method, params)


async def _search(client: Any, query: str, **filters: Any) -> list[dict[str, Any]]:
    res = await _ask(client, "piEvents/search", {"query": query, "limit": 200, "filters": filters})
    return list(res["hits"])


async def _until(client: Any, query: str, want: int, **filters: Any) -> list[dict[str, Any]]:
    """The hits once there are `want` of them (a reader sees the writer's commits a little later;
    a writer projects a changed registry in a pass of its own)."""
    for _ in range(400):
        found = await _search(client, query, **filters)
        if len(found) == want:
            return found
        await asyncio.sleep(0.05)
    raise AssertionError(f"{query!r}: {len(found)} hits, not {want}")


def _rows(index: Path, session_id: str) -> list[tuple[Any, ...]]:
    """A session's rows with their row ids: equal only if nothing rewrote them."""
    conn = sqlite3.connect(f"file:{index}?mode=ro", uri=True)
    try:
        return conn.execute(
            "SELECT e.eid, e.entry_id, f.fid, f.frag, f.kind FROM events e "
            "JOIN sessions s ON s.sid = e.sid LEFT JOIN fragments f ON f.eid = e.eid "
            "WHERE s.session_id = ? ORDER BY e.eid, f.fid", (session_id,)).fetchall()
    finally:
        conn.close()


async def test_registered_types_are_found_labelled_and_masked(start, pi_home, tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    c = Corpus(pi_home.sessions, str(proj))
    client = await start([str(proj)], options={"piEvents": {"extractors": [
        TODO_STATE, NOTE, {"customType": "broken-state", "fields": []}]}})
    await wait_for(lambda: any("broken-state" in m.message and "ignored" in m.message
                               for m in client.log_messages))
    [hit] = await _search(client, "wombatmilk")
    assert (hit["kind"], hit["entryId"], hit["fragmentId"], hit["snippet"]) == (
        "custom.entry", c.todo_entry, "custom.entry:1", "Todos: buy wombatmilk")
    # `*` over an object's values: strings only.
    [tag] = await _search(client, "dingotag")
    assert (tag["fragmentId"], tag["snippet"]) == ("custom.entry:1", "Notes: dingotag")
    read = await _ask(client, "piEvents/read", {"ref": c.ref(c.todo, c.todo_entry)})
    assert [(f["fragmentId"], f["text"]) for f in read["fragments"]] == [
        ("custom.entry:0", "Todos: groceries quokkaplan"), ("custom.entry:1", "Todos: buy wombatmilk"),
        ("custom.entry:2", "Todos: deploy key [redacted: aws-access-key-id] zebrakey")]
    [secret] = await _search(client, "zebrakey")
    symbols = await client.workspace_symbol_async(t.WorkspaceSymbolParams(query="zebrakey"))
    assert symbols and symbols[0].name.startswith("[entry] ")
    answers = json.dumps([secret, read, [s.name for s in symbols]])
    assert KEY not in answers and "[redacted: aws-access-key-id]" in answers


async def test_a_server_never_shows_a_type_its_registry_lacks(start, pi_home, tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    c = Corpus(pi_home.sessions, str(proj))
    writer = await start([str(proj)], options={"piEvents": {"extractors": [TODO_STATE, NOTE]}})
    assert await _search(writer, "platypusnote")
    # Another process on the same index: the writer indexed the note's text, this one's registry
    # does not name its type.
    todo_only = await start([str(proj)], options={"extractors": [TODO_STATE]}, wait_indexed=False)
    assert len(await _until(todo_only, "wombatmilk", 1)) == 1
    assert await _search(todo_only, "platypusnote") == []
    assert await _search(todo_only, "remember", kind=["custom.entry"]) == []
    entries = await _search(todo_only, "", kind=["custom.entry"])
    assert entries and all(h["snippet"].startswith("Todos: ") for h in entries)
    assert await todo_only.workspace_symbol_async(t.WorkspaceSymbolParams(query="platypusnote")) == []
    read = await _ask(todo_only, "piEvents/read", {"ref": c.ref(c.note, c.note_entry)})
    assert read["fragments"] == []
    # Nor in a node's preview (read neighbours, trace): nodes never show a custom entry's text.
    around = await _ask(todo_only, "piEvents/read", {"ref": c.ref(c.note, c.note_user), "after": 2})
    assert [n["preview"] for n in around["neighbours"]["after"]] == ["custom"]
    trace = await _ask(todo_only, "piEvents/trace", {"ref": c.ref(c.note, c.note_entry)})
    assert "platypusnote" not in json.dumps([read, around, trace])
    # A server without the option reads the user file (here: the note type only).
    user_file = Path(pi_home.env()["XDG_CONFIG_HOME"]) / "pi-event-search" / "extractors.json"
    user_file.parent.mkdir(parents=True)
    user_file.write_text(json.dumps({"extractors": [NOTE]}))
    from_file = await start([str(proj)], wait_indexed=False)
    assert len(await _until(from_file, "platypusnote", 1)) == 1
    assert await _search(from_file, "wombatmilk") == []


async def test_a_changed_setting_projects_again_only_the_sessions_concerned(
        start, pi_home: PiHome, tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    c = Corpus(pi_home.sessions, str(proj))
    client = await start([str(proj)], options={"piEvents": {"extractors": [TODO_STATE]}})
    assert await _search(client, "platypusnote") == []
    before = {s.session_id: _rows(pi_home.index, s.session_id) for s in (c.todo, c.note, c.plain)}
    client.workspace_did_change_configuration(t.DidChangeConfigurationParams(
        settings={"piEvents": {"extractors": [TODO_STATE, NOTE]}}))
    [hit] = await _until(client, "platypusnote", 1)
    assert hit["snippet"] == "Notes: remember platypusnote"
    after = {s: _rows(pi_home.index, s) for s in before}
    assert after[c.todo.session_id] == before[c.todo.session_id]
    assert after[c.plain.session_id] == before[c.plain.session_id]
    assert after[c.note.session_id] != before[c.note.session_id]
    # A setting with nothing valid in it changes nothing (a warning); null: the user file's
    # (none here: nothing registered, so the writer drops both types' text).
    client.workspace_did_change_configuration(t.DidChangeConfigurationParams(
        settings={"piEvents": {"extractors": [{"customType": "todo-state"}]}}))
    await wait_for(lambda: any("no valid entry" in m.message for m in client.log_messages))
    assert len(await _search(client, "platypusnote")) == 1
    client.workspace_did_change_configuration(t.DidChangeConfigurationParams(
        settings={"piEvents": {"extractors": None}}))
    await _until(client, "platypusnote", 0)
    await _until(client, "", 0, kind=["custom.entry"])
    assert _rows(pi_home.index, c.plain.session_id) == before[c.plain.session_id]
    assert os.path.exists(pi_home.index)
