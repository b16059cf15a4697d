"""`/events` end to end with the real Pi 1.6 in RPC mode (no model, no key: commands run
first). RPC has no custom components, so the extension falls back to `select`; the test answers
it as a client would, and reads what reaches the editor (`set_editor_text`).
"""

from __future__ import annotations

import subprocess

from pihelp import EXT, WORD, Project, Rpc, pi_argv

from builder import SessionBuilder


def test_events_lists_this_projects_hit_and_inserts_its_reference(project: Project) -> None:
    # The session this Pi continues: it mentions the word too, and must not be listed.
    current = SessionBuilder(project.agent / "sessions", str(project.root))
    current.user(f"the current {WORD} question")
    argv = [*pi_argv(), "--mode", "rpc", "--offline",
            "-nc", "-e", str(EXT / "src" / "index.ts"), "--session", str(current.path)]
    proc = subprocess.Popen(argv, cwd=project.root / "sub", env=project.env(), text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    rpc = Rpc(proc)
    try:
        rpc.send({"id": "p1", "type": "prompt", "message": f"/events {WORD}"})
        ask = rpc.wait_for({"type": "extension_ui_request", "method": "select"})
        options: list[str] = ask["options"]
        wanted = f"pi-event:{project.earlier.session_id}/{project.earlier_hit}"
        assert any(o.endswith(wanted) for o in options), options
        assert not any(project.elsewhere.session_id in o for o in options), "another project leaked"
        assert not any(current.session_id in o for o in options), "the current session is listed"
        chosen = next(o for o in options if o.endswith(wanted))
        assert "fix the build" in chosen and "npm ERR!" in chosen  # session name, snippet
        rpc.send({"type": "extension_ui_response", "id": ask["id"], "value": chosen})
        edit = rpc.wait_for({"type": "extension_ui_request", "method": "set_editor_text"})
        assert edit["text"].strip() == wanted
        done = rpc.wait_for({"type": "response", "id": "p1"})
        assert done.get("success") is True, done
    finally:
        rpc.close()


def test_events_with_no_hit_says_so_and_leaves_the_editor_alone(project: Project) -> None:
    argv = [*pi_argv(), "--mode", "rpc", "--offline",
            "-nc", "-e", str(EXT / "src" / "index.ts")]
    proc = subprocess.Popen(argv, cwd=project.root, env=project.env(), text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    rpc = Rpc(proc)
    try:
        rpc.send({"id": "p1", "type": "prompt", "message": "/events nosuchwordanywhere"})
        note = rpc.wait_for({"type": "extension_ui_request", "method": "notify"})
        assert "No events match" in note["message"], note
        rpc.wait_for({"type": "response", "id": "p1"})
        assert not any(m.get("method") in ("select", "set_editor_text") for m in rpc.seen)
    finally:
        rpc.close()
