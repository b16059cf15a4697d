"""The language server's roots without folders (issue 47), as the MCP server's: no roots setting
and no workspace folder take the server's Git root or working directory, but never `/`, a home
directory or a folder above one (then nothing shows, and a warning says how to give a root)."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest_asyncio
from lsprotocol import types as t
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from builder import SessionBuilder
from lsp.conftest import make_client
from support import PiHome

# `serve` run in a directory of the test's choosing (pytest-lsp starts servers in its own).
IN_DIR = ("import os, runpy, sys; os.chdir(sys.argv.pop(1)); sys.argv[1:] = ['serve']; "
          "runpy.run_module('pi_event_search', run_name='__main__', alter_sys=True)")


@pytest_asyncio.fixture
async def started(pi_home: PiHome) -> AsyncIterator[Any]:
    clients: list[LanguageClient] = []

    async def _start(cwd: Path, env: dict[str, str] | None = None) -> LanguageClient:
        config = ClientServerConfig(server_command=[sys.executable, "-c", IN_DIR, str(cwd)],
                                    server_env={**pi_home.env(), **(env or {})},
                                    client_factory=make_client)
        client = await config.start()
        await client.initialize_session(t.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"), initialization_options={}))
        clients.append(client)
        return client

    yield _start
    for client in clients:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(client.shutdown_session(), 10)


async def _seen(client: Any) -> set[str]:
    for _ in range(100):  # the first pass may still run
        res = await client.protocol.send_request_async("piEvents/search",
                                                       {"query": "quillwort", "limit": 50})
        if res["hits"] or res.get("indexing") is None:
            return {h["sessionId"] for h in res["hits"]}
        await asyncio.sleep(0.1)
    return set()


def _two(home: PiHome, tmp: Path) -> tuple[Path, SessionBuilder, SessionBuilder]:
    proj, other = tmp / "proj", tmp / "other"
    proj.mkdir()
    other.mkdir()
    a = SessionBuilder(home.sessions, str(proj))
    a.user("quillwort in the project")
    b = SessionBuilder(home.sessions, str(other))
    b.user("quillwort elsewhere")
    return proj.resolve(), a, b


async def test_no_folder_takes_the_working_directory(started: Any, pi_home: PiHome,
                                                     tmp_path: Path) -> None:
    proj, a, _b = _two(pi_home, tmp_path)
    client = await started(proj)
    assert await _seen(client) == {a.session_id}


async def test_no_folder_in_slash_or_a_home_shows_nothing(started: Any, pi_home: PiHome,
                                                          tmp_path: Path) -> None:
    _proj, _a, _b = _two(pi_home, tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    for cwd in (Path("/"), home, tmp_path):
        client = await started(cwd, {"HOME": str(home)})
        assert await _seen(client) == set()
        logged = [m.message for m in client.log_messages]
        assert any("no root" in m and "roots" in m for m in logged), logged
