"""The language server end to end over stdio, as VS Code and as Neovim (see docs/protocol.md)."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types as t
from pygls.exceptions import JsonRpcException

from builder import SessionBuilder, sample_session
from lsp.conftest import wait_for


@pytest.fixture
def project(pi_home, tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    inside = sample_session(pi_home.sessions, str(proj))
    outside = sample_session(pi_home.sessions, str(tmp_path / "elsewhere"))
    return proj, inside, outside


async def request(client, method, params):
    return await client.protocol.send_request_async(method, params)


async def test_methods(start, project, tmp_path):
    proj, inside, outside = project
    client = await start([str(proj)])
    # progress during the initial index
    await wait_for(lambda: any(v.kind == "end" for vs in client.progress_reports.values()
                               for v in vs))
    res = await request(client, "piEvents/search", {"query": "reconnect websocket", "limit": 2})
    assert res["hits"] and {h["sessionId"] for h in res["hits"]} == {inside.session_id}
    page1 = await request(client, "piEvents/search", {"query": "ws", "limit": 2})
    assert page1["nextCursor"]
    page2 = await request(client, "piEvents/search", {"query": "ws", "limit": 2,
                                                      "cursor": page1["nextCursor"]})
    assert page2["hits"]
    assert not {h["entryId"] for h in page2["hits"]} & {h["entryId"] for h in page1["hits"]}
    prefix = await request(client, "piEvents/search", {"query": "reconn", "prefixLast": True})
    assert prefix["hits"]
    syms = await client.workspace_symbol_async(t.WorkspaceSymbolParams(query="push force"))
    assert syms and syms[0].name.startswith("[bash]") and "push" in syms[0].name
    assert syms[0].location.uri == inside.path.as_uri()
    ref = res["hits"][0]["ref"]
    read = await request(client, "piEvents/read", {"ref": ref, "order": "branch"})
    assert read["event"]["ref"] == ref and read["fragments"]
    trace = await request(client, "piEvents/trace", {"ref": ref})
    assert trace["event"]["ref"] == ref and trace["parent"]
    status = await request(client, "piEvents/status", {})
    assert status["sessions"] == 1 and status["roots"] == [str(proj.resolve())]
    assert (await request(client, "piEvents/reindex", {}))["generation"] >= 1


async def test_references_in_a_markdown_note(start, project, tmp_path):
    proj, inside, outside = project
    client = await start([str(proj)])
    target = inside.ids[6]
    note = proj / "notes.md"
    text = (f"# Notes\n\nThe failing run: pi-event:{inside.session_id}/{target}.\n"
            f"Elsewhere: pi-event:{outside.session_id}/{outside.ids[6]}\n")
    note.write_text(text)
    uri = note.as_uri()
    client.text_document_did_open(t.DidOpenTextDocumentParams(t.TextDocumentItem(
        uri=uri, language_id="markdown", version=1, text=text)))
    hover = await client.text_document_hover_async(t.HoverParams(
        t.TextDocumentIdentifier(uri), t.Position(2, 20)))
    assert hover is not None and "TypeError" in hover.contents.value
    assert f"{inside.path.as_uri()}#L" in hover.contents.value
    definition = await client.text_document_definition_async(t.DefinitionParams(
        t.TextDocumentIdentifier(uri), t.Position(2, 30)))
    line = next(i for i, raw in enumerate(inside.path.read_text().splitlines())
                if f'"id":"{target}"' in raw)
    assert definition.uri == inside.path.as_uri() and definition.range.start.line == line
    # the reference to a session outside the root: nothing at all
    assert await client.text_document_hover_async(t.HoverParams(
        t.TextDocumentIdentifier(uri), t.Position(3, 20))) is None
    links = await client.text_document_document_link_async(t.DocumentLinkParams(
        t.TextDocumentIdentifier(uri)))
    assert len(links) == 2 and links[0].target and links[1].target is None


async def test_folders_change_and_live_append(start, project, tmp_path):
    proj, inside, outside = project
    client = await start([str(proj)])
    res = await request(client, "piEvents/search", {"query": "websocket"})
    assert {h["sessionId"] for h in res["hits"]} == {inside.session_id}
    client.workspace_did_change_workspace_folders(t.DidChangeWorkspaceFoldersParams(
        t.WorkspaceFoldersChangeEvent(added=[t.WorkspaceFolder(
            (tmp_path / "elsewhere").as_uri(), "elsewhere")], removed=[])))
    await asyncio.sleep(0.2)
    res = await request(client, "piEvents/search", {"query": "websocket"})
    assert {h["sessionId"] for h in res["hits"]} == {inside.session_id, outside.session_id}
    inside.user("freshly appended zebra question")

    async def found():
        r = await request(client, "piEvents/search", {"query": "zebra"})
        return r["hits"]

    for _ in range(100):
        if await found():
            break
        await asyncio.sleep(0.1)
    assert await found()


async def test_bad_params_and_errors(start, project):
    proj, inside, _ = project
    client = await start([str(proj)])
    cases = [
        ("piEvents/search", {"query": 5}, -32602),
        ("piEvents/search", {"query": "x", "limit": "many"}, -32602),
        ("piEvents/search", {"query": "x", "filters": {"since": "yesterday"}}, -32602),
        ("piEvents/search", {"query": "x" * 5000}, -32003),
        ("piEvents/search", {"query": "x", "cursor": "garbage"}, -32002),
        ("piEvents/read", {"ref": "not a ref"}, -32602),
        ("piEvents/read", {"ref": f"pi-event:{inside.session_id}/00000000"}, -32001),
        ("piEvents/trace", {"sessionId": "nope"}, -32602),
        ("piEvents/nonsense", {}, -32601),
    ]
    for method, params, code in cases:
        with pytest.raises(JsonRpcException) as info:
            await request(client, method, params)
        assert info.value.code == code, (method, params, info.value)
    assert (await request(client, "piEvents/search", {"query": "websocket"}))["hits"]


async def test_cancellation_and_two_servers(start, project, pi_home):
    proj, inside, _ = project
    for i in range(30):
        s = SessionBuilder(pi_home.sessions, str(proj))
        s.user(f"bulk message {i} about sockets")
    first = await start([str(proj)])
    second = await start([str(proj)])
    # a storm of requests cancelled mid-flight: each ends (answer or cancelled error), and the
    # server keeps serving
    futures = []
    for i in range(20):
        msg_id = f"storm-{i}"
        futures.append(first.protocol.send_request("piEvents/search", {"query": "sockets"},
                                                   msg_id=msg_id))
        first.protocol.notify("$/cancelRequest", t.CancelParams(id=msg_id))
    for fut in futures:
        try:
            await asyncio.wait_for(asyncio.wrap_future(fut), 10)
        except JsonRpcException as exc:
            assert exc.code == -32800
    for client in (first, second):
        res = await request(client, "piEvents/search", {"query": "bulk sockets", "limit": 100})
        ids = [h["entryId"] for h in res["hits"]]
        assert len(ids) == len(set(ids)) == 30


async def test_bad_settings_are_logged_once_and_ignored(start, project):
    proj, inside, _ = project
    client = await start([str(proj)], options={"roots": "not a list", "watch": "yes",
                                               "currentSession": 5})
    await wait_for(lambda: len([m for m in client.log_messages if "settings" in m.message]) >= 3)
    res = await request(client, "piEvents/search", {"query": "websocket"})
    assert {h["sessionId"] for h in res["hits"]} == {inside.session_id}
    client.workspace_did_change_configuration(t.DidChangeConfigurationParams(
        settings={"piEvents": {"roots": ["relative/path"]}}))
    await wait_for(lambda: any("absolute" in m.message for m in client.log_messages))
    assert (await request(client, "piEvents/search", {"query": "websocket"}))["hits"]


async def test_inflections_exact_first_and_phrases_exact(start, pi_home, tmp_path):
    proj = tmp_path / "infl"
    proj.mkdir()
    sb = SessionBuilder(pi_home.sessions, str(proj))
    fails = sb.user("the build fails after the lockfile bump")
    failed = sb.user("the build failed again")
    other = SessionBuilder(pi_home.sessions, str(tmp_path / "elsewhere"))
    other.user("the build failed outside the roots")
    client = await start([str(proj)])
    res = await request(client, "piEvents/search", {"query": "build failed"})
    assert [h["entryId"] for h in res["hits"]] == [failed, fails]  # exact first, then inflected
    assert res["hits"][1]["snippet"][slice(*res["hits"][1]["matches"][-1])] == "fails"
    res = await request(client, "piEvents/search", {"query": '"build fail"'})
    assert res["hits"] == []
    res = await request(client, "piEvents/search", {"query": "failing lockfiles", "match": "all"})
    assert [h["entryId"] for h in res["hits"]] == [fails]
    res = await request(client, "piEvents/search", {"query": "failing lockfiles"})  # then partial
    assert [(h["entryId"], h["missing"]) for h in res["hits"]] == [(fails, []),
                                                                   (failed, ["lockfiles"])]
