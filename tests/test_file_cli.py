"""`pi-event-search file` and `pi-event-search blame` (issue 18 on the command line): the same
answers as piEvents/fileHistory and piEvents/lineOrigin, with 1-based lines."""

from __future__ import annotations

from builder import SessionBuilder
from engine_support import cli, cli_json


def test_file_and_blame(pi_home, tmp_path):
    proj = tmp_path / "proj"
    (proj / "src").mkdir(parents=True)
    f = proj / "src" / "ws.ts"
    f.write_text("export function reconnect(attempt) {\n  return backoff(attempt);\n}\n// mine\n")
    sb = SessionBuilder(pi_home.sessions, str(proj))
    sb.user("write it")
    write = sb.assistant(tool_calls=[("w", "write", {
        "path": "src/ws.ts", "content": "export function reconnect(attempt) {\n}\n"})])
    sb.tool_result("w", "write", "ok")
    edit = sb.assistant(tool_calls=[("e", "edit", {"path": str(f), "edits": [
        {"oldText": "}", "newText": "  return backoff(attempt);\n}"}]})])
    sb.tool_result("e", "edit", "ok")
    read = sb.assistant(tool_calls=[("r", "read", {"path": "src/ws.ts"})])
    sb.tool_result("r", "read", "...")
    ref = lambda e: f"pi-event:{sb.session_id}/{e}"  # noqa: E731
    root = ["--root", str(proj)]

    history = cli_json("file", str(f), *root)
    assert [(h["ref"], h["relation"]) for h in history["hits"]] == [
        (ref(edit), "file-changed"), (ref(write), "file-changed"), (ref(read), "file-read")]
    assert history["counts"] == {"changed": 2, "read": 1}
    assert cli_json("file", str(f), "--root", str(tmp_path / "elsewhere"))["hits"] == []

    assert cli_json("blame", f"{f}:1", *root)["hit"]["ref"] == ref(write)
    assert cli_json("blame", f"{f}:2", *root)["hit"]["ref"] == ref(edit)
    assert cli_json("blame", f"{f}:4", *root) == {"hit": None, "candidates": [],
                                                  "reason": "trivial"}
    rc, out, _ = cli("blame", f"{f}:2", *root)
    assert rc == 0 and out.startswith(f"{f}:2: written by {ref(edit)}")
    rc, out, _ = cli("file", str(f), *root)
    assert rc == 0 and out.startswith(f"{f}: changed in 2 events, read in 1")
    for bad in (f"{f}:0", f"{f}:9", str(f), f"{tmp_path}/missing.ts:1"):
        assert cli("blame", bad, *root)[0] == 2, bad
