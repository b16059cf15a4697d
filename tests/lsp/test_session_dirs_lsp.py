"""Session directories through the real language server over stdio (issues 38 and 39): Pi's
`sessionDir` from the environment (flat), the directory the Pi extension's own Pi writes to
(`piSessionDir`), a workspace's `.pi/settings.json` `sessionDir` only where Pi trusts it, status
naming each directory; and two servers on one index, each answering only from its own
directories."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from lsprotocol import types as t

from builder import SessionBuilder
from lsp.conftest import Start
from support import PiHome

WORD = "wombatique"


async def request(client: Any, method: str, params: dict[str, Any]) -> Any:
    return await client.protocol.send_request_async(method, params)


async def refs(client: Any) -> list[str]:
    await request(client, "piEvents/reindex", {})
    found = await request(client, "piEvents/search", {"query": WORD, "limit": 50})
    return sorted(h["ref"] for h in found["hits"])


def flat(folder: Path, cwd: Path, text: str) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    s = SessionBuilder(folder, str(cwd), flat=True)
    return f"pi-event:{s.session_id}/{s.user(text)}"


async def test_the_environments_session_dir_and_status(start: Start, pi_home: PiHome,
                                                       tmp_path: Path, monkeypatch) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    chosen = tmp_path / "chosen"
    ref = flat(chosen, proj, f"{WORD} written where the environment said")
    monkeypatch.setenv("PI_CODING_AGENT_SESSION_DIR", str(chosen))
    client = await start([str(proj)])
    assert await refs(client) == [ref]
    status = await request(client, "piEvents/status", {})
    assert [(d["path"], d["layout"], d["origin"], d["sessions"]) for d in status["directories"]] \
        == [(os.path.realpath(pi_home.sessions), "per-project", "default", 0),
            (os.path.realpath(chosen), "flat", "PI_CODING_AGENT_SESSION_DIR", 1)]


async def test_each_server_answers_only_from_its_own_directories(start: Start, pi_home: PiHome,
                                                                 tmp_path: Path) -> None:
    """The Pi extension's server reads its Pi's folder; an editor's server on the same index,
    with the same roots, never shows those sessions, though the index holds them."""
    proj = tmp_path / "proj"
    proj.mkdir()
    own = SessionBuilder(pi_home.sessions, str(proj))
    own_ref = f"pi-event:{own.session_id}/{own.user(f'{WORD} in the default directory')}"
    chosen = tmp_path / "pi-run-folder"
    ref = flat(chosen, proj, f"{WORD} from a Pi started with --session-dir")
    pi_server = await start([str(proj)], {"piSessionDir": str(chosen)})
    assert await refs(pi_server) == sorted([own_ref, ref])
    editor = await start([str(proj)], {})
    assert await refs(editor) == [own_ref]
    status = await request(editor, "piEvents/status", {})
    assert status["sessions"] == 1
    assert [d["path"] for d in status["directories"]] == [os.path.realpath(pi_home.sessions)]
    assert await refs(pi_server) == sorted([own_ref, ref])


async def test_a_workspaces_session_dir_counts_where_pi_trusts_it(start: Start, pi_home: PiHome,
                                                                  tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    (proj / ".pi").mkdir(parents=True)
    (proj / ".pi" / "settings.json").write_text(json.dumps({"sessionDir": "history"}))
    ref = flat(proj / "history", proj, f"{WORD} in the project's own folder")
    untrusted = await start([str(proj)])
    assert await refs(untrusted) == []
    (pi_home.agent / "trust.json").write_text(json.dumps({os.path.realpath(proj): True}))
    trusted = await start([str(proj)])
    assert await refs(trusted) == [ref]
    status = await request(trusted, "piEvents/status", {})
    assert status["directories"][-1]["origin"] == \
        f"sessionDir in {proj / '.pi' / 'settings.json'} (a project Pi trusts)"


async def test_a_changed_setting_changes_the_directories(start: Start, pi_home: PiHome,
                                                         tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    archive = tmp_path / "archive"
    ref = flat(archive, proj, f"{WORD} in an archive named later")
    client = await start([str(proj)])
    assert await refs(client) == []
    client.workspace_did_change_configuration(t.DidChangeConfigurationParams(
        settings={"piEvents": {"sessionDirs": [str(archive)]}}))
    assert await refs(client) == [ref]
    status = await request(client, "piEvents/status", {})
    assert [d["origin"] for d in status["directories"]] == ["default", "sessionDirs"]
    client.workspace_did_change_configuration(t.DidChangeConfigurationParams(
        settings={"piEvents": {"sessionDirs": []}}))
    assert await refs(client) == []
