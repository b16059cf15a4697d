from __future__ import annotations

from lsprotocol import types as t

from builder import sample_session


async def test_search_symbol_hover(start, pi_home, tmp_path):
    sb = sample_session(pi_home.sessions, cwd=str(tmp_path / "proj"))
    (tmp_path / "proj").mkdir()
    client = await start([str(tmp_path / "proj")])
    res = await client.protocol.send_request_async("piEvents/search", {"query": "TypeError undefined"})
    assert res["hits"][0]["sessionId"] == sb.session_id
    syms = await client.workspace_symbol_async(t.WorkspaceSymbolParams(query="reconnect"))
    assert syms and all("reconnect" in s.name.lower() for s in syms)
