"""The rendered read view in a real VS Code (code-server in headless Chromium, as
tests/vscode/test_vscode_e2e.py), driven by clients/vscode/test/e2e/drive-read-view.mjs: the page's
DOM inside the webview's iframes has the event's heading, facts and content, landmarks and a
focus order for screen readers, theme colours, only its own script under a strict CSP; a
neighbour's link opens that event's page, Alt+Up and the Next button step through them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_vscode_e2e import ARTIFACTS, EXT, run_driver, running_code_server

pytestmark = pytest.mark.editor
DRIVER = EXT / "test" / "e2e" / "drive-read-view.mjs"


def rgb(hex_colour: str) -> str:
    """`#005fb8` as a computed style says it: `rgb(0, 95, 184)`."""
    h = hex_colour.lstrip("#")
    assert len(h) == 6, hex_colour
    return "rgb({}, {}, {})".format(*(int(h[i:i + 2], 16) for i in (0, 2, 4)))


def test_rendered_read_view(tmp_path: Path) -> None:
    with running_code_server(tmp_path, "-read-view", **{"piEvents.read.view": "rendered"}) as (fx, url, tmp):
        b = fx.b
        ref, before, after = (f"pi-event:{b.session_id}/{b.ids[i]}" for i in (2, 1, 3))
        out = run_driver(DRIVER, tmp, "read-view", {
            "url": url, "screenshot": str(ARTIFACTS / "read-view-page.png"), "ref": ref})

    first = out["first"]
    # A page, not Markdown source: the event's heading, its facts, its content in monospace.
    assert first["headings"][0] == "h1 Tool result: bash", first["headings"]
    assert first["headings"][1:] == ["h2 Content", "h3 tool.result:0", "h2 Neighbours (append order)",
                                     "h3 Before", "h3 After"], first["headings"]
    assert first["ref"] == ref and first["title"] == "Tool result: bash" and first["lang"] == "en"
    assert first["facts"]["Session"].endswith(b.session_id)
    assert first["facts"]["Source"].endswith(".jsonl:4"), first["facts"]
    assert first["fragments"][0]["text"] == "src/websocket/client.ts:42: reconnect()"
    assert first["fragments"][0]["focusable"] is True, first["fragments"]
    assert "mono" in first["fragments"][0]["font"].lower(), first["fragments"]  # the editor's font
    assert "**" not in json.dumps(first) and "## Content" not in json.dumps(first)
    # Landmarks, labelled buttons with their keys, and a focus order that starts at the buttons.
    assert first["landmarks"][:3] == ["nav:Event", "main", "header"], first["landmarks"]
    buttons = {b_["label"]: b_ for b_ in first["buttons"]}
    assert buttons["↑ Previous"]["keys"] == "Alt+ArrowUp" and not buttons["↑ Previous"]["disabled"]
    assert buttons["Next ↓"]["keys"] == "Alt+ArrowDown" and not buttons["Next ↓"]["disabled"]
    assert {"Trace", "Copy reference", "Markdown source"} <= set(buttons)
    assert first["tabOrder"][:2] == ["previous", "next"], first["tabOrder"]
    # The neighbours are links to their own views.
    links = [(link["ref"], link["list"]) for link in first["links"]]
    assert links == [(before, "n-before"), (after, "n-after")], links
    # Theme colours: the page paints with VS Code's variables.
    colours = first["colours"]
    assert colours["background"] == rgb(colours["themeBackground"]), colours
    assert colours["link"] == rgb(colours["themeLink"]), colours
    # Recorded text is untrusted: only the page's own nonce'd script, a CSP that forbids the rest.
    assert first["csp"].startswith("default-src 'none';") and "script-src 'nonce-" in first["csp"]
    ours = [x for x in first["scripts"] if x["nonce"]]
    assert len(ours) == 1 and ours[0]["src"] is None and "acquireVsCodeApi()" in ours[0]["text"], ours
    # VS Code adds its own host script to every webview (the one that defines acquireVsCodeApi).
    assert all("acquireVsCodeApi" in x["text"] for x in first["scripts"] if not x["nonce"]), first["scripts"]
    assert first["inlineHandlers"] == []

    # The neighbour's link opened its page; Alt+Up came back; Next went forward again.
    assert out["linkRead"]["ref"] == after and out["second"]["ref"] == after
    assert out["second"]["headings"][0] == "h1 Assistant message"
    assert out["keyRead"]["ref"] == ref and out["third"]["ref"] == ref
    assert out["buttonRead"]["ref"] == after
    assert "Event" in (out["tab"] or ""), out["tab"]
    # The trace page in the same panel: sections as headings; the parent's link opens its page.
    assert out["traced"]["ref"] == after
    assert out["trace"]["headings"][:3] == ["h1 Trace", "h2 Event", "h2 Parent"], out["trace"]
    assert out["trace"]["parent"] == ref and out["parentRead"]["ref"] == ref
    for name in ("read-view", "read-view-next", "trace-view"):
        assert (ARTIFACTS / f"{name}.png").exists(), name
