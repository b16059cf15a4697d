"""Issue 5, authorization, through the real language server over stdio.

The same random worlds as tests/test_authz.py (fewer of them), checked through every method that
returns session data: piEvents/search, workspace/symbol, piEvents/read, piEvents/trace,
textDocument/hover, textDocument/definition, textDocument/documentLink and piEvents/status.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import converters
from lsprotocol import types as t
from pygls.exceptions import JsonRpcException

from builder import SessionBuilder
from lsp.conftest import Start
from support import PiHome
from test_authz import (
    SHARED,
    TOKEN,
    Plan,
    Tokens,
    World,
    _cutoff_session,
    fill,
    leaks,
    materialize,
    not_found_message,
    plans,
)

NOT_FOUND = -32001
_plain = converters.get_converter()


async def request(client: Any, method: str, params: dict[str, Any]) -> Any:
    return await client.protocol.send_request_async(method, params)


async def not_found(client: Any, method: str, params: dict[str, Any]) -> tuple[int, str]:
    with pytest.raises(JsonRpcException) as info:
        await request(client, method, params)
    return info.value.code, info.value.message


def open_note(client: Any, path: Path, refs: list[tuple[str, str]]) -> str:
    """A Markdown note with one reference per line, at column 5."""
    text = "".join(f"see pi-event:{sid}/{eid} here\n" for sid, eid in refs)
    path.write_text(text)
    client.text_document_did_open(t.DidOpenTextDocumentParams(t.TextDocumentItem(
        uri=path.as_uri(), language_id="markdown", version=1, text=text)))
    return path.as_uri()


def current_param(world: World) -> dict[str, Any]:
    if world.current is None:
        return {}
    return {"currentSession": {"sessionId": world.current[0], "cutoff": world.current[1]}}


async def check_world_lsp(client: Any, world: World, note: Path) -> None:
    cur = current_param(world)
    res = await request(client, "piEvents/search", {"query": SHARED, "limit": 200, **cur})
    assert {h["sessionId"] for h in res["hits"]} == world.listed
    assert not leaks(res, world)
    for b in world.sessions:
        res = await request(client, "piEvents/search", {
            "query": SHARED, "limit": 200, "filters": {"sessionId": b.sid}, **cur})
        assert {h["entryId"] for h in res["hits"]} == {
            e for e, ln in b.entries if (b.sid, e) in world.exposable and SHARED.encode() in ln}
        assert not leaks(res, world)
    listed_files = {b.path.as_uri() for b in world.sessions if b.sid in world.listed}
    symbols = await client.workspace_symbol_async(t.WorkspaceSymbolParams(query=SHARED))
    uris = {s.location.uri for s in symbols or []}
    assert uris <= listed_files and (len(symbols or []) == 50 or uris == listed_files)
    assert not leaks(_plain.unstructure(symbols), world)
    for secret in world.secrets:
        if TOKEN.fullmatch(secret):
            assert not await client.workspace_symbol_async(t.WorkspaceSymbolParams(query=secret))
    refs = list(world.refs())
    uri = open_note(client, note, refs)
    links = await client.text_document_document_link_async(t.DocumentLinkParams(
        t.TextDocumentIdentifier(uri)))
    assert len(links) == len(refs)
    for line, ((sid, eid), link) in enumerate(zip(refs, links, strict=True)):
        params = {"ref": f"pi-event:{sid}/{eid}"}
        doc = t.TextDocumentIdentifier(uri)
        hover = await client.text_document_hover_async(t.HoverParams(doc, t.Position(line, 8)))
        definition = await client.text_document_definition_async(t.DefinitionParams(
            doc, t.Position(line, 8)))
        if (sid, eid) in world.exposable:
            read = await request(client, "piEvents/read", {**params, "before": 5, "after": 5})
            assert read["event"]["entryId"] == eid and not leaks(read, world)
            traced = await request(client, "piEvents/trace", params)
            assert not leaks(traced, world), leaks(traced, world)
            path = world.by_sid(sid).path
            assert hover is not None and not leaks(hover.contents.value, world)
            assert definition is not None and definition.uri == path.as_uri()
            assert link.target is not None and link.target.startswith(path.as_uri())
        else:
            for method in ("piEvents/read", "piEvents/trace"):
                assert await not_found(client, method, params) == (
                    NOT_FOUND, not_found_message(sid, eid))
            assert hover is None and definition is None and link.target is None
    status = await request(client, "piEvents/status", {})
    assert status["sessions"] == len(world.visible)
    assert not leaks({k: v for k, v in status.items() if k != "events"}, world)


@pytest.mark.parametrize("start", ["neovim"], indirect=True)  # one client is enough here
@settings(max_examples=5, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(plan=plans, roots_in_settings=st.booleans())
async def test_property_through_the_server(start: Start, plan: Plan,
                                           roots_in_settings: bool) -> None:
    base = Path(os.path.realpath(tempfile.mkdtemp(prefix="authz-lsp-")))
    try:
        world, live, archive = materialize(plan, base)
        options: dict[str, Any] = {"indexPath": str(base / "index.sqlite3"), "watch": False,
                                   "sessionDirs": [str(live), str(archive)],
                                   **current_param(world)}
        if roots_in_settings:
            options["roots"] = world.roots
        client = await start([] if roots_in_settings else world.roots, options)
        try:
            await check_world_lsp(client, world, base / "note.md")
        finally:
            await client.shutdown_session()
    finally:
        shutil.rmtree(base, ignore_errors=True)


# -- named cases ------------------------------------------------------------------------------

def _session(home: PiHome, cwd: Path, tok: Tokens) -> SessionBuilder:
    sb = SessionBuilder(home.sessions, str(cwd), name_seed=f"{cwd}#{tok()}")
    fill(sb, tok)
    return sb


async def test_current_session_cutoff_in_search_requests(start: Start, pi_home: PiHome,
                                                         tmp_path: Path) -> None:
    tok = Tokens()
    proj = tmp_path / "proj"
    proj.mkdir()
    other = _session(pi_home, proj, tok)
    sb, (first, second, cutoff) = _cutoff_session(pi_home, str(proj), tok)
    after = sb.ids[sb.ids.index(cutoff):]
    late = {t for ln in sb.path.read_text().splitlines()[1:]
            if json.loads(ln)["id"] in after for t in TOKEN.findall(ln)}
    client = await start([str(proj)])
    me = {"currentSession": {"sessionId": sb.session_id, "cutoff": cutoff}}
    # without currentSession the caller's session is an ordinary visible one
    res = await request(client, "piEvents/search", {"query": SHARED, "limit": 200})
    assert {h["sessionId"] for h in res["hits"]} == {other.session_id, sb.session_id}
    # with it: excluded by default
    res = await request(client, "piEvents/search", {"query": SHARED, "limit": 200, **me})
    assert {h["sessionId"] for h in res["hits"]} == {other.session_id}
    # targeted: strictly before the cutoff, nothing written from the cutoff on
    for query in (SHARED, ""):
        res = await request(client, "piEvents/search", {
            "query": query, "limit": 200, "filters": {"sessionId": sb.session_id}, **me})
        assert {h["entryId"] for h in res["hits"]} == {first, second}
        text = json.dumps(res)
        assert not [x for x in late if x in text]
    for word in late:
        res = await request(client, "piEvents/search", {
            "query": word, "filters": {"sessionId": sb.session_id}, **me})
        assert res["hits"] == []


async def test_current_session_cutoff_in_settings_and_read_requests(
        start: Start, pi_home: PiHome, tmp_path: Path) -> None:
    tok = Tokens()
    proj = tmp_path / "proj"
    proj.mkdir()
    sb, (first, second, cutoff) = _cutoff_session(pi_home, str(proj), tok)
    after = sb.ids[sb.ids.index(cutoff):]
    me = {"currentSession": {"sessionId": sb.session_id, "cutoff": cutoff}}
    by_settings = await start([str(proj)], me)
    plain = await start([str(proj)])
    for entry in after:
        params = {"ref": f"pi-event:{sb.session_id}/{entry}"}
        for method in ("piEvents/read", "piEvents/trace"):
            expected = (NOT_FOUND, not_found_message(sb.session_id, entry))
            assert await not_found(by_settings, method, params) == expected
            assert await not_found(plain, method, {**params, **me}) == expected
            assert await request(plain, method, params)  # there without a cutoff
    for client, extra in ((by_settings, {}), (plain, me)):
        read = await request(client, "piEvents/read", {
            "ref": f"pi-event:{sb.session_id}/{second}", "after": 50, "order": "branch", **extra})
        assert read["neighbours"]["after"] == [] and read["event"]["sessionName"] is None
        traced = await request(client, "piEvents/trace",
                               {"ref": f"pi-event:{sb.session_id}/{first}", **extra})
        assert traced["labels"] == [] and [c["entryId"] for c in traced["children"]] == [second]
    symbols = await by_settings.workspace_symbol_async(t.WorkspaceSymbolParams(query=SHARED))
    assert symbols == []


async def test_invisible_and_missing_give_the_same_error(start: Start, pi_home: PiHome,
                                                         tmp_path: Path) -> None:
    tok = Tokens()
    (tmp_path / "proj").mkdir()
    visible = _session(pi_home, tmp_path / "proj", tok)
    hidden = _session(pi_home, tmp_path / "proj2", tok)
    fake = hidden.session_id[:-4] + ("0000" if not hidden.session_id.endswith("0000") else "1111")
    cases = [(hidden.session_id, hidden.ids[1]), (fake, hidden.ids[1]),
             (visible.session_id, "0badc0de"), (visible.session_id, hidden.ids[1])]
    client = await start([str(tmp_path / "proj")])
    for method in ("piEvents/read", "piEvents/trace"):
        for variant in ({}, {"order": "branch"}, {"fragment": "user.text:7"}):
            if method == "piEvents/trace" and variant:
                continue
            answers = set()
            for sid, eid in cases:
                for params in ({"ref": f"pi-event:{sid}/{eid}"}, {"ref": f"{sid}/{eid}"},
                               {"sessionId": sid, "entryId": eid}):
                    code, message = await not_found(client, method, {**params, **variant})
                    answers.add((code, message.replace(f"{sid}/{eid}", "REF")))
            assert answers == {(NOT_FOUND, "Event not found: pi-event:REF")}, (method, variant)
    uri = open_note(client, tmp_path / "proj" / "note.md", [*cases, (visible.session_id,
                                                                      visible.ids[1])])
    doc = t.TextDocumentIdentifier(uri)
    for line in range(len(cases)):
        assert await client.text_document_hover_async(t.HoverParams(doc, t.Position(line, 8))
                                                      ) is None
        assert await client.text_document_definition_async(t.DefinitionParams(
            doc, t.Position(line, 8))) is None
    assert await client.text_document_hover_async(t.HoverParams(
        doc, t.Position(len(cases), 8))) is not None
    links = await client.text_document_document_link_async(t.DocumentLinkParams(doc))
    assert [link.target is not None for link in links] == [False] * len(cases) + [True]


async def test_workspace_folders_are_roots(start: Start, pi_home: PiHome, tmp_path: Path) -> None:
    tok = Tokens()
    for name in ("a", "b", "a2", "c"):
        (tmp_path / name).mkdir()
    sbs = {name: _session(pi_home, tmp_path / name, tok) for name in ("a", "b", "a2", "c")}
    folders = await start([str(tmp_path / "a"), str(tmp_path / "b") + "/"])
    explicit = await start([str(tmp_path / "a")], {"roots": [str(tmp_path / "c")]})
    for client, names in ((folders, {"a", "b"}), (explicit, {"c"})):
        res = await request(client, "piEvents/search", {"query": SHARED, "limit": 200})
        assert {h["sessionId"] for h in res["hits"]} == {sbs[n].session_id for n in names}
        status = await request(client, "piEvents/status", {})
        assert status["sessions"] == len(names)
        assert status["events"] == sum(len(sbs[n].ids) for n in names)


async def test_fork_parent_outside_the_root_is_masked(start: Start, pi_home: PiHome,
                                                      tmp_path: Path) -> None:
    tok = Tokens()
    (tmp_path / "proj").mkdir()
    parent = _session(pi_home, tmp_path / "outside", tok)
    child = parent.fork(pi_home.sessions, str(tmp_path / "proj"), name_seed="child")
    own = child.user(f"{tok()} after the fork")
    client = await start([str(tmp_path / "proj")])
    traced = await request(client, "piEvents/trace", {"ref": f"pi-event:{child.session_id}/{own}"})
    assert traced["lineage"] == [{"relation": "session-parent", "masked": True}]
    assert parent.session_id not in json.dumps(traced)
    assert await not_found(client, "piEvents/trace", {
        "ref": f"pi-event:{parent.session_id}/{parent.ids[0]}"}) == (
        NOT_FOUND, not_found_message(parent.session_id, parent.ids[0]))


async def test_roots_follow_folder_and_setting_changes(start: Start, pi_home: PiHome,
                                                      tmp_path: Path) -> None:
    tok = Tokens()
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    a, b = (_session(pi_home, tmp_path / n, tok) for n in ("a", "b"))
    ref_a = {"ref": f"pi-event:{a.session_id}/{a.ids[0]}"}

    async def seen(client: Any) -> set[str]:
        res = await request(client, "piEvents/search", {"query": SHARED, "limit": 200})
        return {h["sessionId"] for h in res["hits"]}

    nothing = await start([])  # no folder, no rootUri, no roots setting: nothing at all
    assert await seen(nothing) == set()
    assert (await request(nothing, "piEvents/status", {}))["sessions"] == 0
    assert await not_found(nothing, "piEvents/read", ref_a) == (
        NOT_FOUND, not_found_message(a.session_id, a.ids[0]))
    client = await start([str(tmp_path / "a")])
    assert await seen(client) == {a.session_id}
    client.workspace_did_change_workspace_folders(t.DidChangeWorkspaceFoldersParams(
        t.WorkspaceFoldersChangeEvent(added=[], removed=[t.WorkspaceFolder(
            f"file://{tmp_path / 'a'}", "a")])))
    await wait_for_answer(lambda: seen(client), set())
    assert await not_found(client, "piEvents/read", ref_a) == (
        NOT_FOUND, not_found_message(a.session_id, a.ids[0]))
    client.workspace_did_change_configuration(t.DidChangeConfigurationParams(
        settings={"piEvents": {"roots": [str(tmp_path / "b")]}}))
    await wait_for_answer(lambda: seen(client), {b.session_id})


async def wait_for_answer(ask: Any, expected: Any, tries: int = 100) -> None:
    got = None
    for _ in range(tries):
        got = await ask()
        if got == expected:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{got!r} != {expected!r}")


async def test_current_session_without_a_cutoff_is_invalid_params(
        start: Start, pi_home: PiHome, tmp_path: Path) -> None:
    """Without its cutoff the caller's own session would show everything written after the
    call: a request naming it without one is refused, and such a setting is ignored."""
    tok = Tokens()
    proj = tmp_path / "proj"
    proj.mkdir()
    sb, _ = _cutoff_session(pi_home, str(proj), tok)
    client = await start([str(proj)], {"currentSession": {"sessionId": sb.session_id}})
    for cur in ({"sessionId": sb.session_id}, {"sessionId": sb.session_id, "cutoff": ""},
                {"sessionId": sb.session_id, "cutoff": None}):
        for method, params in (("piEvents/search", {"query": SHARED}),
                                ("piEvents/read", {"ref": f"{sb.session_id}/{sb.ids[0]}"})):
            with pytest.raises(JsonRpcException) as err:
                await request(client, method, {**params, "currentSession": cur})
            assert err.value.code == -32602 and "cutoff" in str(err.value), (method, cur)
    # the setting without a cutoff was ignored (logged): the session is an ordinary visible one
    res = await request(client, "piEvents/search", {"query": SHARED, "limit": 200})
    assert sb.session_id in {h["sessionId"] for h in res["hits"]}
    assert any("currentSession" in m.message for m in client.log_messages)
