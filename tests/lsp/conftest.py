"""A real server over stdio (pytest-lsp), initialised with VS Code's or Neovim's capabilities."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types as t
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import register_lsp_features

from pi_event_search.lsp.protocol import plain_dicts
from support import PiHome

CLIENTS = ["visual-studio-code", "neovim"]


def make_client() -> LanguageClient:
    """pytest-lsp's client, with custom results as plain dicts (as editors see them)."""
    client = LanguageClient(converter_factory=plain_dicts)
    register_lsp_features(client)
    return client
Start = Callable[..., Awaitable[LanguageClient]]


def index_changed(client: LanguageClient) -> list[Any]:
    return [m for m in getattr(client, "_pie_notes", [])]


async def wait_for(cond: Callable[[], Any], timeout: float = 20.0) -> Any:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while loop.time() < end:
        value = cond()
        if value:
            return value
        await asyncio.sleep(0.05)
    raise AssertionError("condition not met in time")


@pytest_asyncio.fixture(params=CLIENTS)
async def start(request: pytest.FixtureRequest, pi_home: PiHome) -> AsyncIterator[Start]:
    """Start servers on demand: `await start(roots=[...], options={...})`; all stopped after."""
    clients: list[LanguageClient] = []

    async def _start(folders: list[str] | None = None, options: dict[str, Any] | None = None,
                     wait_indexed: bool = True) -> LanguageClient:
        config = ClientServerConfig(server_command=[sys.executable, "-m", "pi_event_search",
                                                    "serve"], server_env=pi_home.env(),
                                    client_factory=make_client)
        client = await config.start()
        notes: list[Any] = []
        client._pie_notes = notes  # type: ignore[attr-defined]

        @client.feature("piEvents/indexChanged")
        def _changed(params: Any) -> None:
            notes.append(params)

        caps = client_capabilities(request.param)
        ws = [t.WorkspaceFolder(uri=f"file://{f}", name=f.rsplit("/", 1)[-1])
              for f in (folders or [])]
        await client.initialize_session(t.InitializeParams(
            capabilities=caps, root_uri=ws[0].uri if ws else None, workspace_folders=ws or None,
            initialization_options=options or {}))
        clients.append(client)
        if wait_indexed:
            await wait_for(lambda: notes)
        return client

    yield _start
    for client in clients:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(client.shutdown_session(), 10)
