"""The extractor registry (issue 32): which custom entries become `custom.entry` text, the index's
record of its registry, a changed registry projecting again only the sessions it concerns, the
query-time filter of each process's own registry, masking, and bad registries (warnings only)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from builder import SessionBuilder
from engine_support import ALL, cli, engine, hits
from pi_event_search.index import registry
from pi_event_search.lsp import settings
from pi_event_search.service.engine import Engine
from pi_event_search.source import extractors
from pi_event_search.source.projection import project

TODO_STATE = {"customType": "todo-state", "fields": ["title", "items.*.text"], "label": "Todos"}
NOTE = {"customType": "note-state", "fields": ["body"], "label": "Notes"}
KEY = "AKIAQYLPMN5HHHFPZAM2"


def reg(*entries: dict[str, Any]) -> extractors.Registry:
    found, warnings = extractors.parse(list(entries))
    assert found is not None and not warnings, warnings
    return found


class Corpus:
    """Two sessions with todo-state entries, one with a note-state entry, one with none."""

    def __init__(self, sessions: Path) -> None:
        self.todo1 = SessionBuilder(sessions, "/home/dev/a")
        self.todo1.user("plan the week")
        self.todo1_entry = self.todo1.custom("todo-state", {
            "title": "groceries quokkaplan", "done": 3,
            "items": [{"text": "buy wombatmilk"}, {"text": f"deploy key {KEY} \x1b[31mzebrakey"},
                      {"text": "   "}, {"other": "numbatfield"}]})
        self.todo1.custom_message("todo-state", "a wombatmilk reminder shown to the model")
        self.todo2 = SessionBuilder(sessions, "/home/dev/b")
        self.todo2.user("second project")
        self.todo2.custom("todo-state", {"title": "second list", "items": []})
        self.note = SessionBuilder(sessions, "/home/dev/c")
        self.note.user("a note session")
        self.note_entry = self.note.custom("note-state", {"body": "remember platypusnote"})
        self.plain = SessionBuilder(sessions, "/home/dev/d")
        self.plain.user("nothing custom here, only echidnaword")
        self.plain.assistant("right, echidnaword")


def rows(e: Engine, session_id: str) -> list[tuple[Any, ...]]:
    """A session's rows as stored, row ids included: equal only if they were never rewritten."""
    conn = e.reader()
    return [tuple(r) for r in conn.execute(
        "SELECT e.eid, e.entry_id, e.kinds, e.preview, e.facts, f.fid, f.frag, f.kind, f.meta, "
        "fragment_text(f.text) FROM events e JOIN sessions s ON s.sid = e.sid "
        "LEFT JOIN fragments f ON f.eid = e.eid WHERE s.session_id = ? ORDER BY e.eid, f.fid",
        (session_id,))]


def custom_rows(e: Engine) -> list[tuple[str, str]]:
    return [(r["meta"], r["t"]) for r in e.reader().execute(
        "SELECT meta, fragment_text(text) AS t FROM fragments WHERE kind = 'custom.entry' "
        "ORDER BY fid")]


# -- the registry itself ---------------------------------------------------------------------
def test_parse_keeps_good_entries_and_names_every_bad_one():
    found, warnings = extractors.parse([
        NOTE, TODO_STATE, {"customType": "todo-state", "fields": ["x"]}, "todo", {"customType": ""},
        {"customType": "a", "fields": []}, {"customType": "b", "fields": ["x..y"]},
        {"customType": "c", "fields": ["x"], "label": 7}, {"customType": "d", "fields": ["x"], "z": 1},
        {"customType": "plain", "fields": ["*"]}])
    assert found is not None
    assert found.types == ("note-state", "plain", "todo-state")  # in customType order
    assert found.get("plain") == extractors.Extractor("plain", ("*",), "plain")  # label: the type
    assert len(warnings) == 7 and all(w.endswith("ignored") for w in warnings), warnings
    assert "second entry" in warnings[0] and "[3]" in warnings[1] and "x..y" in warnings[4]
    # Nothing valid at all is no registry (None), unlike an empty one.
    assert extractors.parse([{"customType": 1}])[0] is None
    assert extractors.parse({"customType": "x"})[0] is None
    assert extractors.parse([]) == (extractors.EMPTY, [])
    # The record round-trips, whatever order the entries came in.
    assert extractors.from_json(reg(TODO_STATE, NOTE).to_json()) == reg(NOTE, TODO_STATE)
    assert extractors.from_json("not json") == extractors.EMPTY


def test_paths_take_strings_only_through_lists_and_objects():
    ext = reg({"customType": "t", "fields": ["a.*.b", "list.1", "obj.*", "missing.x", "n"]}).get("t")
    assert ext is not None
    data = {"a": [{"b": "one"}, {"b": 2}, {"c": "no"}, {"b": "two"}], "list": ["x", "second"],
            "obj": {"k": "v1", "j": ["nested"], "l": "v2"}, "n": 5}
    assert ext.strings(data) == ["one", "two", "second", "v1", "v2"]
    assert ext.strings("a plain string") == [] and ext.strings(None) == []
    assert len(reg({"customType": "t", "fields": ["*"]}).get("t").strings(  # type: ignore[union-attr]
        ["s"] * 5000)) == extractors.MAX_STRINGS


def test_changed_names_added_removed_and_changed_types():
    relabelled = {**TODO_STATE, "label": "Tasks"}
    assert reg(TODO_STATE).changed(reg(TODO_STATE)) == set()
    assert reg(TODO_STATE, NOTE).changed(reg(TODO_STATE)) == {"note-state"}
    assert reg(relabelled).changed(reg(TODO_STATE, NOTE)) == {"todo-state", "note-state"}


def test_projection_labels_masks_and_keeps_the_type():
    entry = {"type": "custom", "id": "c1", "customType": "todo-state",
             "data": {"title": "t\x1b[2Jitle", "items": [{"text": f"key {KEY}"}]}}
    event = project(entry, "/p", extractors=reg(TODO_STATE))
    assert [(f.fragment_id, f.kind, f.text, f.meta) for f in event.fragments] == [
        ("custom.entry:0", "custom.entry", "Todos: title", "todo-state"),
        ("custom.entry:1", "custom.entry", "Todos: key [redacted: aws-access-key-id]", "todo-state")]
    assert event.secrets == {"aws-access-key-id": 1}
    assert event.tree["customType"] == "todo-state"
    assert [o.reason for o in event.omissions] == ["payload"]  # the data as a whole is not shown
    unregistered = project(entry, "/p")
    assert unregistered.fragments == [] and unregistered.tree["customType"] == "todo-state"
    assert project(entry, "/p", reveal=True, extractors=reg(TODO_STATE)).fragments[1].text.endswith(KEY)


def test_the_setting_replaces_keeps_or_goes_back_to_the_user_file():
    first = settings.parse({"piEvents": {"extractors": [TODO_STATE]}})
    assert first.extractors == reg(TODO_STATE) and first.warnings == ()
    assert settings.parse({"watch": False}, first).extractors == reg(TODO_STATE)  # absent: as before
    assert settings.parse({"extractors": []}, first).extractors == extractors.EMPTY
    assert settings.parse({"extractors": None}, first).extractors is None  # the user file's
    kept = settings.parse({"extractors": [{"customType": "x"}]}, first)  # nothing valid in it
    assert kept.extractors == reg(TODO_STATE) and "no valid entry" in kept.warnings[-1]
    part = settings.parse({"extractors": [NOTE, {"customType": "x", "fields": ["a..b"]}]}, first)
    assert part.extractors == reg(NOTE) and len(part.warnings) == 1
    assert settings.parse({"extractors": "todo-state"}).extractors is None


# -- the index -------------------------------------------------------------------------------
def test_registered_type_is_found_and_unregistered_is_not(pi_home):
    c = Corpus(pi_home.sessions)
    e = Engine.open(pi_home.index, [], reg(TODO_STATE))
    e.refresh()
    found = hits(e, "wombatmilk", kinds=["custom.entry"])
    assert [(h["entryId"], h["fragmentId"], h["snippet"]) for h in found] == [
        (c.todo1_entry, "custom.entry:1", "Todos: buy wombatmilk")]
    assert hits(e, "quokkaplan")[0]["fragmentId"] == "custom.entry:0"
    assert hits(e, "todos second list")[0]["sessionId"] == c.todo2.session_id  # the label too
    assert hits(e, "platypusnote") == [], "an unregistered type is never searchable"
    assert hits(e, "numbatfield") == [], "a field not named is not indexed"
    # A custom message of the same type stays what it was.
    assert {h["kind"] for h in hits(e, "wombatmilk")} == {"custom.entry", "custom.message"}
    read = e.read(f"{c.todo1.session_id}/{c.todo1_entry}", ALL)
    assert [f["text"] for f in read["fragments"]] == [
        "Todos: groceries quokkaplan", "Todos: buy wombatmilk",
        "Todos: deploy key [redacted: aws-access-key-id] zebrakey"]
    assert read["event"]["kinds"] == ["custom.entry"]
    assert registry.recorded(e.reader()) == reg(TODO_STATE)
    e.close()


def test_planted_credential_is_masked_in_the_index_hits_and_reads(pi_home):
    c = Corpus(pi_home.sessions)
    e = Engine.open(pi_home.index, [], reg(TODO_STATE))
    e.refresh()
    [hit] = hits(e, "zebrakey")
    assert hit["snippet"] == "Todos: deploy key [redacted: aws-access-key-id] zebrakey"
    stored = " ".join(t for _, t in custom_rows(e))
    assert KEY not in stored and "\x1b" not in stored
    assert [h["entryId"] for h in hits(e, "", secrets=True)] == [c.todo1_entry]
    assert [h["entryId"] for h in hits(e, "redacted aws")] == [c.todo1_entry]
    ref = f"{c.todo1.session_id}/{c.todo1_entry}"
    assert KEY not in json.dumps(e.read(ref, ALL))
    revealed = json.dumps(e.read(ref, ALL, reveal_secrets=True))  # a person asked
    assert KEY in revealed and "\\u001b" not in revealed
    e.close()


def test_a_changed_registry_projects_again_only_the_sessions_holding_its_types(pi_home):
    c = Corpus(pi_home.sessions)
    e = Engine.open(pi_home.index, [], reg(TODO_STATE))
    e.refresh()
    sessions = {"todo1": c.todo1, "todo2": c.todo2, "note": c.note, "plain": c.plain}
    before = {k: rows(e, s.session_id) for k, s in sessions.items()}

    def changed(new: extractors.Registry, expect: set[str]) -> None:
        nonlocal before
        e.extractors = new
        report = e.refresh()
        after = {k: rows(e, s.session_id) for k, s in sessions.items()}
        assert {k for k in sessions if after[k] != before[k]} == expect
        assert report.changed.get("rebuilt", 0) == len(expect), report
        assert registry.recorded(e.reader()) == new
        before = after

    changed(reg(TODO_STATE, NOTE), {"note"})  # added: only its session
    assert hits(e, "platypusnote")[0]["snippet"] == "Notes: remember platypusnote"
    changed(reg({**TODO_STATE, "label": "Tasks"}, NOTE), {"todo1", "todo2"})  # changed
    assert hits(e, "wombatmilk", kinds=["custom.entry"])[0]["snippet"] == "Tasks: buy wombatmilk"
    changed(reg({**TODO_STATE, "label": "Tasks"}, NOTE), set())  # the same: nothing written
    changed(reg(NOTE), {"todo1", "todo2"})  # removed
    assert hits(e, "wombatmilk", kinds=["custom.entry"]) == []
    assert {m for m, _ in custom_rows(e)} == {"note-state"}
    changed(extractors.EMPTY, {"note"})
    assert custom_rows(e) == []
    e.close()


def test_a_writer_killed_after_marking_leaves_the_marks_for_the_next_pass(pi_home):
    c = Corpus(pi_home.sessions)
    e = Engine.open(pi_home.index, [], reg(TODO_STATE))
    e.refresh()
    assert e.conn is not None
    _, marked = registry.reconcile(e.conn, reg(TODO_STATE, NOTE))  # recorded, then no pass
    assert marked == [str(c.note.path)]
    assert hits(e, "platypusnote") == []
    e.close()
    again = Engine.open(pi_home.index, [], reg(TODO_STATE, NOTE))
    again.refresh()
    assert hits(again, "platypusnote")[0]["sessionId"] == c.note.session_id
    again.close()


def test_rows_from_before_types_were_kept_count_as_holding_every_type(pi_home):
    c = Corpus(pi_home.sessions)
    e = Engine.open(pi_home.index, [], extractors.EMPTY)
    e.refresh()
    conn = e.conn
    assert conn is not None
    # As an index written before the registry: no record, no type in the facts.
    conn.execute("UPDATE events SET facts = NULL WHERE entry_type = 'custom'")
    conn.execute("DELETE FROM meta WHERE key = ?", (registry.META_KEY,))
    plain = rows(e, c.plain.session_id)
    e.extractors = reg(NOTE)
    e.refresh()
    assert hits(e, "platypusnote")[0]["sessionId"] == c.note.session_id
    assert rows(e, c.plain.session_id) == plain
    # Their new rows keep the type: the next change concerns the note session alone.
    todo = rows(e, c.todo1.session_id)
    e.extractors = extractors.EMPTY
    e.refresh()
    assert rows(e, c.todo1.session_id) == todo and hits(e, "platypusnote") == []
    e.close()


def test_a_watcher_refresh_of_paths_projects_a_changed_registry_first(pi_home):
    c = Corpus(pi_home.sessions)
    e = Engine.open(pi_home.index, [], reg(TODO_STATE))
    e.refresh()
    c.note.user("appended after")
    e.extractors = reg(TODO_STATE, NOTE)
    e.refresh_paths({str(c.note.path)})  # the registry concerns it: a full refresh
    assert hits(e, "platypusnote") and hits(e, "appended after")
    e.close()


def test_each_process_shows_custom_entries_of_its_own_registry_only(pi_home):
    c = Corpus(pi_home.sessions)
    e = Engine.open(pi_home.index, [], reg(TODO_STATE, NOTE))
    e.refresh()
    note_ref = f"{c.note.session_id}/{c.note_entry}"
    assert hits(e, "platypusnote")
    assert [f["kind"] for f in e.read(note_ref, ALL)["fragments"]] == ["custom.entry"]
    # Another process's registry (no pass here: the index still holds the note's text).
    e.extractors = reg(TODO_STATE)
    assert ("note-state", "Notes: remember platypusnote") in custom_rows(e)
    assert hits(e, "platypusnote") == [] and hits(e, "", kinds=["custom.entry"]) != []
    assert all(h["snippet"].startswith("Todos") for h in hits(e, "", kinds=["custom.entry"]))
    assert e.read(note_ref, ALL)["fragments"] == []
    # A process whose registry holds nothing usable shows what the index records.
    e.extractors = None
    assert hits(e, "platypusnote")[0]["snippet"] == "Notes: remember platypusnote"
    e.close()


# -- the CLI and the user file ---------------------------------------------------------------
def user_file(pi_home: Any, content: Any) -> Path:
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "pi-event-search" / "extractors.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def test_cli_reads_the_user_file(pi_home):
    c = Corpus(pi_home.sessions)
    user_file(pi_home, {"extractors": [TODO_STATE]})
    env = {**pi_home.env(), "XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"]}

    def search(query: str) -> list[dict[str, Any]]:
        done = subprocess.run([sys.executable, "-m", "pi_event_search", "search", query, "--all",
                               "--exact", "--json"], env=env, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0 and done.stderr == "", done.stderr
        return list(json.loads(done.stdout)["hits"])

    [hit] = search("buy wombatmilk")
    assert (hit["kind"], hit["entryId"], hit["snippet"]) == (
        "custom.entry", c.todo1_entry, "Todos: buy wombatmilk")
    assert search("platypusnote") == []


@pytest.mark.parametrize("bad", [
    "{not json", '{"extractors": "todo-state"}', '[{"customType": "note-state"}]',
    json.dumps({"extractors": [{"customType": "note-state", "fields": "body"}]})])
def test_a_bad_user_file_is_a_warning_and_changes_nothing(pi_home, bad):
    c = Corpus(pi_home.sessions)
    user_file(pi_home, {"extractors": [TODO_STATE]})
    rc, _, err = cli("index")
    assert rc == 0, err
    e = engine(pi_home.index)
    before = {s.session_id: rows(e, s.session_id) for s in (c.todo1, c.todo2, c.note, c.plain)}
    e.close()
    path = user_file(pi_home, bad)
    rc, out, err = cli("search", "wombatmilk", "--all", "--kind", "custom.entry", "--json")
    assert rc == 0 and str(path) in err and "ignored" in err, err
    assert [h["entryId"] for h in json.loads(out)["hits"]] == [c.todo1_entry]
    e = engine(pi_home.index)
    assert {s: rows(e, s) for s in before} == before
    assert registry.recorded(e.reader()) == reg(TODO_STATE)
    e.close()


def test_a_user_file_with_some_bad_entries_keeps_the_good_ones(pi_home):
    c = Corpus(pi_home.sessions)
    user_file(pi_home, {"extractors": [TODO_STATE, {"customType": "note-state", "fields": []}]})
    rc, out, err = cli("search", "wombatmilk", "--all", "--kind", "custom.entry", "--json")
    assert rc == 0 and "note-state" in err and "ignored" in err, err
    assert [h["entryId"] for h in json.loads(out)["hits"]] == [c.todo1_entry]
