"""The extractor registry (issue 32) with the real Pi 1.6: eventSearch.extractors in Pi's global
settings reach the server (initializationOptions.extractors); a project's .pi/settings.json can
neither add types nor change the user's (issue 38: a project file only narrows roots); an
unregistered type is not found; a credential in custom data is masked in what the model gets."""

from __future__ import annotations

import json
from typing import Any

from pihelp import Project
from test_pi_extension import Transcript, run_pi, text_of

TODO_STATE = {"customType": "todo-state", "fields": ["title", "items.*.text"], "label": "Todos"}
NOTE = {"customType": "note-state", "fields": ["body"], "label": "Notes"}
KEY = "AKIAQYLPMN5HHHFPZAM2"


def test_pi_settings_name_the_extractors(project: Project) -> None:
    sb = project.earlier
    todo = sb.custom("todo-state", {"title": "groceries", "items": [
        {"text": "buy wombatmilk"}, {"text": f"deploy key {KEY} zebrakey"}]})
    note = sb.custom("note-state", {"body": "remember platypusnote"})
    sb.custom("diary-state", {"body": "unregistered kangaroonote"})
    (project.agent / "settings.json").write_text(json.dumps({"eventSearch": {"extractors": [
        TODO_STATE, NOTE]}}))
    (project.root / ".pi").mkdir()
    # Trusted by the person (Pi reads its settings), the project would add a type and change the
    # user's (this entry would index `title` only).
    (project.agent / "trust.json").write_text(json.dumps({str(project.root.resolve()): True}))
    (project.root / ".pi" / "settings.json").write_text(json.dumps({"eventSearch": {"extractors": [
        {"customType": "diary-state", "fields": ["body"]},
        {"customType": "todo-state", "fields": ["title"], "label": "Project"}]}}))
    queries = ("wombatmilk", "platypusnote", "kangaroonote", "zebrakey")
    turns = [{"calls": [{"name": "event_search", "args": {"query": q}} for q in queries]},
             {"text": "done"}]
    done, entries = run_pi(project, turns, "what was on my lists?")
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"eventSearch.extractors in {project.root / '.pi' / 'settings.json'} is ignored" \
        in done.stderr
    t = Transcript(entries)
    results: dict[str, dict[str, Any]] = {}
    for i, q in enumerate(queries):
        _, _, result = t.result(i)
        assert not result["isError"], text_of(result)
        results[q] = result
    hits = {q: r["details"]["result"]["hits"] for q, r in results.items()}
    assert [(h["entryId"], h["kind"], h["fragmentId"], h["snippet"]) for h in hits["wombatmilk"]] == [
        (todo, "custom.entry", "custom.entry:1", "Todos: buy wombatmilk")]
    assert [(h["entryId"], h["snippet"]) for h in hits["platypusnote"]] == [
        (note, "Notes: remember platypusnote")]
    assert hits["kangaroonote"] == []
    assert [h["snippet"] for h in hits["zebrakey"]] == [
        "Todos: deploy key [redacted: aws-access-key-id] zebrakey"]
    assert "Todos: buy «wombatmilk»" in text_of(results["wombatmilk"])
    assert KEY not in json.dumps(entries)
