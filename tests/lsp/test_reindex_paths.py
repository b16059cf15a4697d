"""`piEvents/reindex` with `paths`: the files a client saw grow (the Pi extension's own session after
each turn) are refreshed alone; a path the index does not know yet makes it a full refresh."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from builder import SessionBuilder
from lsp.conftest import Start
from support import PiHome


async def _found(client: Any, word: str) -> set[str]:
    res = await client.protocol.send_request_async("piEvents/search", {"query": word})
    return {h["entryId"] for h in res["hits"]}


async def test_reindex_of_grown_and_new_files(start: Start, pi_home: PiHome,
                                              tmp_path: Path) -> None:
    sb = SessionBuilder(pi_home.sessions, str(tmp_path))
    sb.user("first wombat")
    client = await start([str(tmp_path)], {"watch": False})
    grown = sb.user("second numbat")
    assert await _found(client, "numbat") == set()
    answer = await client.protocol.send_request_async("piEvents/reindex", {"paths": [str(sb.path)]})
    assert answer["changedSessions"] == 1
    assert await _found(client, "numbat") == {grown}

    other = SessionBuilder(pi_home.sessions, str(tmp_path))
    new = other.user("a fresh dingo")
    await client.protocol.send_request_async("piEvents/reindex", {"paths": [str(other.path)]})
    assert await _found(client, "dingo") == {new}  # unknown to the index: everything was refreshed

    with pytest.raises(JsonRpcException) as info:
        await client.protocol.send_request_async("piEvents/reindex", {"paths": ["relative.jsonl"]})
    assert info.value.code == -32602 and "paths must be a list of absolute paths" in info.value.message


@pytest.mark.parametrize("params", [None, {}, []], ids=["none", "object", "lua-empty-table"])
async def test_reindex_without_paths(start: Start, pi_home: PiHome, tmp_path: Path,
                                     params: Any) -> None:
    """Neovim encodes an empty Lua table as `[]`: that too means "no parameters"."""
    client = await start([str(tmp_path)], {"watch": False})
    sb = SessionBuilder(pi_home.sessions, str(tmp_path))
    new = sb.user("a quokka appears")
    answer = await client.protocol.send_request_async("piEvents/reindex", params)
    assert answer["changedSessions"] == 1
    assert await _found(client, "quokka") == {new}
