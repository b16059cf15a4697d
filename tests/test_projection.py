"""Projection: one row per entry shape (every type, role and legacy form) -> kinds, texts, facts."""

from __future__ import annotations

import base64

import pytest

from pi_event_search.source.projection import project

IMG = {"type": "image", "data": base64.b64encode(b"\x89PNG" * 300).decode(), "mimeType": "image/png"}


def msg(message):
    return {"type": "message", "id": "a1", "parentId": None, "timestamp": "2026-05-01T10:00:00Z",
            "message": message}


CASES = [
    (msg({"role": "user", "content": "plain string prompt"}), ["user.text"], "plain string prompt"),
    (msg({"role": "user", "content": [{"type": "text", "text": "look"}, IMG]}), ["user.text"], "look"),
    (msg({"role": "assistant", "content": [
        {"type": "thinking", "thinking": "secret plan", "thinkingSignature": "sig"},
        {"type": "text", "text": "visible answer"},
        {"type": "toolCall", "id": "t1", "name": "bash", "arguments": {"command": "ls -la"}}]}),
     ["assistant.text", "tool.call"], "visible answer"),
    (msg({"role": "toolResult", "toolCallId": "t1", "toolName": "bash", "isError": True,
          "content": [{"type": "text", "text": "boom"}, IMG], "details": {"x": 1}}),
     ["tool.result"], "boom"),
    (msg({"role": "bashExecution", "command": "make", "output": "ok", "exitCode": 2,
          "cancelled": False, "truncated": False}), ["bash.command", "bash.output"], "make"),
    (msg({"role": "bashExecution", "command": "true", "output": "", "exitCode": None}),
     ["bash.command"], "true"),
    (msg({"role": "hookMessage", "customType": "hook", "content": "legacy v2 hook"}),
     ["custom.message"], "legacy v2 hook"),
    (msg({"role": "custom", "customType": "x", "content": [{"type": "text", "text": "v3 custom"}],
          "display": True}), ["custom.message"], "v3 custom"),
    (msg({"role": "developer", "content": "opaque role"}), [], None),
    ({"type": "compaction", "summary": "compacted text", "firstKeptEntryId": "b2",
      "tokensBefore": 1}, ["summary.compaction"], "compacted text"),
    ({"type": "compaction", "summary": "v1 compaction", "firstKeptEntryIndex": 3,
      "tokensBefore": 1}, ["summary.compaction"], "v1 compaction"),
    ({"type": "branch_summary", "fromId": "root", "summary": "abandoned path"},
     ["summary.branch"], "abandoned path"),
    ({"type": "custom_message", "customType": "enriched-prompt", "content": "injected",
      "display": False}, ["custom.message"], "injected"),
    ({"type": "session_info", "name": "  my\nsession  "}, ["session.name"], "my session"),
    ({"type": "model_change", "provider": "anthropic", "modelId": "claude"}, [], None),
    ({"type": "thinking_level_change", "thinkingLevel": "high"}, [], None),
    ({"type": "label", "targetId": "a1", "label": "start"}, [], None),
    ({"type": "custom", "customType": "ext", "data": {"secret": "never searchable"}}, [], None),
    ({"type": "mode_change", "mode": "plan", "text": "unknown types stay opaque"}, [], None),
    ({"type": "event", "event": {"type": "agent_start"}}, [], None),
]


@pytest.mark.parametrize("entry, kinds, first_text", CASES,
                         ids=[f"{c[0]['type']}-{i}" for i, c in enumerate(CASES)])
def test_projection_table(entry, kinds, first_text):
    ev = project(entry, "/home/dev/proj")
    assert [f.kind for f in ev.fragments] == kinds
    if first_text is not None:
        assert ev.fragments[0].text == first_text
    assert all("secret" not in f.text for f in ev.fragments)


def test_omissions_and_errors():
    ev = project(CASES[2][0], "/p")
    assert {o.reason for o in ev.omissions} == {"thinking", "signature"}
    ev = project(CASES[3][0], "/p")
    assert ev.is_error and ev.tool_name == "bash"
    image = next(o for o in ev.omissions if o.reason == "image")
    assert image.mime_type == "image/png" and image.size == 1200
    assert project(CASES[4][0], "/p").is_error
    assert not project(CASES[5][0], "/p").is_error


@pytest.mark.parametrize("name, args, op, path", [
    ("read", {"path": "src/a.ts"}, "read", "/home/dev/proj/src/a.ts"),
    ("read", {"path": "@src/b.ts"}, "read", "/home/dev/proj/src/b.ts"),
    ("write", {"path": "/abs/c.ts", "content": "x"}, "changed", "/abs/c.ts"),
    ("edit", {"path": "d.ts", "oldText": "a", "newText": "b"}, "changed", "/home/dev/proj/d.ts"),
    ("edit", {"path": "e.ts", "edits": [{"oldText": "a", "newText": "b"}]}, "changed",
     "/home/dev/proj/e.ts"),
    ("grep", {"pattern": "x", "path": "../other"}, "read", "/home/dev/other"),
    ("find", {"pattern": "*.ts"}, "read", "/home/dev/proj"),
    ("ls", {}, "read", "/home/dev/proj"),
    ("mcp__fs__read", {"file_path": "x"}, None, None),
])
def test_file_evidence(name, args, op, path):
    entry = msg({"role": "assistant", "content": [
        {"type": "toolCall", "id": "c", "name": name, "arguments": args}]})
    files = project(entry, "/home/dev/proj").files
    assert files == ([(op, path, "derived")] if op else [])


def test_summary_details_are_recorded_file_evidence():
    entry = {"type": "compaction", "summary": "s", "firstKeptEntryId": "x", "tokensBefore": 1,
             "details": {"readFiles": ["a.ts"], "modifiedFiles": ["/abs/b.ts"]}}
    assert project(entry, "/p").files == [("read", "/p/a.ts", "recorded"),
                                          ("changed", "/abs/b.ts", "recorded")]


@pytest.mark.parametrize("entry", [
    {"type": "message", "message": "not an object"},
    {"type": "message", "message": {"role": "user", "content": 42}},
    {"type": "message", "message": {"role": "assistant", "content": [None, 3, {"type": "text"}]}},
    {"type": "compaction", "summary": ["wrong"], "firstKeptEntryId": 5},
    {"type": "label", "targetId": None},
    {"type": 7},
    {},
])
def test_wrong_types_never_raise(entry):
    ev = project(entry, None)
    assert isinstance(ev.fragments, list)
