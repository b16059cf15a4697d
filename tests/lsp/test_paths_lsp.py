"""Paths through the real language server over stdio (issues 47 and 48): a workspace's roots
narrow after the server resolves them (a link to `/` in the workspace widens nothing), and a
session Pi recorded on Windows is visible to that folder's root however the root is spelled."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from builder import SessionBuilder, encoded_dir
from lsp.conftest import Start
from support import PiHome

WORD = "quokkaroo"
WINDOWS_CWD = "C:\\Users\\Me\\proj"


async def request(client: Any, method: str, params: dict[str, Any]) -> Any:
    return await client.protocol.send_request_async(method, params)


async def visible(client: Any) -> set[str]:
    found = await request(client, "piEvents/search", {"query": WORD, "limit": 50})
    return {h["sessionId"] for h in found["hits"]}


def session(pi_home: PiHome, cwd: str) -> str:
    s = SessionBuilder(pi_home.sessions, cwd)
    s.user(f"{WORD} recorded in {cwd}")
    return s.session_id


@pytest.mark.parametrize("start", ["visual-studio-code"], indirect=True)
async def test_a_link_in_the_workspace_does_not_widen_its_roots(start: Start, pi_home: PiHome,
                                                                 tmp_path: Path) -> None:
    """VS Code's workspace `piEvents.workspaceRoots: ["evil", "pkg-link"]`, `evil -> /`: the
    extension sends them as configured (projectRoots) and the server keeps only what lies inside
    the workspace folder once resolved: pkg-link (to ws/pkg), not evil (/)."""
    ws = Path(os.path.realpath(tmp_path)) / "ws"
    (ws / "pkg").mkdir(parents=True)
    (ws / "other").mkdir()
    (ws / "evil").symlink_to("/")
    (ws / "pkg-link").symlink_to(ws / "pkg")
    outside = Path(os.path.realpath(tmp_path)) / "outside"
    outside.mkdir()
    in_pkg, in_other, beyond = (session(pi_home, str(ws / "pkg")),
                                session(pi_home, str(ws / "other")), session(pi_home, str(outside)))
    client = await start([str(ws)], {"projectRoots": [str(ws / "evil"), str(ws / "pkg-link")]})
    assert await visible(client) == {in_pkg}
    status = await request(client, "piEvents/status", {})
    assert status["roots"] == [str(ws / "pkg")]
    # Only the link out: the workspace's roots give nothing, the folder applies.
    alone = await start([str(ws)], {"projectRoots": [str(ws / "evil")]})
    assert await visible(alone) == {in_pkg, in_other}
    assert beyond not in await visible(alone)
    # The person's own roots are theirs: `/` there is `/`.
    own = await start([str(ws)], {"roots": ["/"], "projectRoots": [str(ws / "evil")]})
    assert await visible(own) == {in_pkg, in_other, beyond}


@pytest.mark.parametrize("start", ["neovim"], indirect=True)
@pytest.mark.parametrize(("folders", "options", "shown"), [
    (["/c%3A/Users/Me/proj"], {}, True),  # VS Code's folder URI: file:///c%3A/Users/Me/proj
    ([], {"roots": ["c:/users/me/proj"]}, True),
    ([], {"roots": ["file:///C:/Users/Me/"]}, True),
    ([], {"roots": ["\\\\?\\C:\\USERS\\ME\\PROJ\\"]}, True),
    ([], {"roots": ["c:/users/me/projx"]}, False),
    ([], {"roots": ["/"]}, False),
])
async def test_a_session_recorded_on_windows(start: Start, pi_home: PiHome, folders: list[str],
                                             options: dict[str, Any], shown: bool) -> None:
    """A header cwd `C:\\Users\\Me\\proj` in Pi's folder `--C--Users-Me-proj--`."""
    sid = session(pi_home, WINDOWS_CWD)
    assert (pi_home.sessions / "--C--Users-Me-proj--").is_dir()
    assert encoded_dir(WINDOWS_CWD) == "--C--Users-Me-proj--"
    elsewhere = session(pi_home, "/home/me/proj")
    client = await start(folders, options)
    assert await visible(client) == ({sid} if shown else set()) | (
        {elsewhere} if options.get("roots") == ["/"] else set())
    if shown:
        found = await request(client, "piEvents/search", {
            "query": WORD, "filters": {"cwd": "C:/Users/Me/proj"}})
        assert {h["sessionId"] for h in found["hits"]} == {sid}


@pytest.mark.parametrize("start", ["neovim"], indirect=True)
async def test_file_history_of_a_session_recorded_on_windows(start: Start, pi_home: PiHome) -> None:
    """Tool paths of a Windows session (relative, backslashed, another case) name one file, asked
    for by its Windows URI, its Windows path or a path relative to the root."""
    s = SessionBuilder(pi_home.sessions, WINDOWS_CWD)
    edit = s.assistant(tool_calls=[("c1", "edit", {"path": "src\\app.ts", "oldText": "a",
                                                     "newText": "b"})])
    s.tool_result("c1", "edit", "edited")
    read = s.assistant(tool_calls=[("c2", "read", {"path": "C:\\USERS\\me\\Proj\\src\\App.ts"})])
    s.tool_result("c2", "read", "export const app = 1")
    other = s.assistant(tool_calls=[("c3", "read", {"path": "src\\apps.ts"})])
    s.tool_result("c3", "read", "x")
    client = await start([], {"roots": ["c:/users/me/proj"]})
    history = await request(client, "piEvents/fileHistory",
                            {"uri": "file:///c%3A/Users/Me/proj/src/app.ts"})
    found = {h["entryId"] for h in history["hits"]}
    assert found == {edit, read} and other not in found
    for path in ("src/app.ts", "C:\\Users\\Me\\proj\\src\\app.ts"):
        hits = await request(client, "piEvents/search", {"query": "", "filters": {"file": path}})
        assert {h["entryId"] for h in hits["hits"]} >= {edit, read}, path
        assert other not in {h["entryId"] for h in hits["hits"]}
