"""Issue 18 in a real VS Code (code-server in headless Chromium, as tests/vscode/test_vscode_e2e.py):
the CodeLens on a workspace file Pi changed, "Pi Events: History of This File" and "Pi Events:
Which Event Wrote This Line" (from the editor's context menu), driven by
clients/vscode/test/e2e/drive-file-history.mjs. The workspace's sessions are the fixture of
test_vscode_e2e.py: its first session reads src/ws.ts, then edits it."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_vscode_e2e import ARTIFACTS, EXT, check_readable, run_driver, running_code_server

pytestmark = pytest.mark.editor
DRIVER = EXT / "test" / "e2e" / "drive-file-history.mjs"
FILE = [
    "export function reconnect() {",
    "  setTimeout(connect, backoff())",  # the edit's new text
    "}",
    "// this line was written by hand",
]


def test_file_history_and_line_origin(tmp_path: Path) -> None:
    with running_code_server(tmp_path, "-file-history") as (fx, url, tmp):
        (fx.ws / "src").mkdir()
        (fx.ws / "src" / "ws.ts").write_text("\n".join(FILE) + "\n")
        out = run_driver(DRIVER, tmp, "file", {"url": url, "fileName": "ws.ts", "writtenLine": 2,
                                                "handLine": 4})
    a = fx.a
    edit = f"pi-event:{a.session_id}/{a.ids[7]}"
    read = f"pi-event:{a.session_id}/{a.ids[3]}"

    assert out["lens"] == "Pi: changed in 1 event · read in 1", out["lens"]

    history = out["history"]
    assert history["uri"] == (fx.ws / "src" / "ws.ts").as_uri()
    assert history["refs"] == [edit, read] and history["relations"] == ["file-changed",
                                                                        "file-read"]
    assert "History of ws.ts" in out["historyTitle"] and "changed in 1" in out["historyTitle"]
    # As shown (aria-labels) = as made from the server's answer, in its order, plainly readable.
    # (VS Code appends the section's name to the aria-label of a section's first row.)
    shown = [r["aria"].removesuffix(f", {r['separator']}") if r["separator"] else r["aria"]
             for r in out["historyRows"]]
    assert shown == history["rows"], (shown, history["rows"])
    check_readable(out["historyRows"])
    assert out["historyRead"]["ref"] == edit  # Enter opened the first (newest change)

    assert out["menuHasItem"] is True
    assert out["origin"]["line"] == 1 and out["origin"]["hit"] == edit
    assert out["originRead"]["uri"].split("?")[0] == edit
    assert out["noOrigin"]["hit"] is None and out["noOrigin"]["reason"] == "unknown"
    assert "no Pi event is known to have written line 4" in out["noOriginToast"]
    assert out["explorerHistory"]["refs"] == [edit, read]  # from the Explorer's context menu
    for name in ("file-lens", "file-history", "line-origin", "line-origin-none"):
        assert (ARTIFACTS / f"{name}.png").exists(), name
