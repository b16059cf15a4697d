"""LSP feature handlers: parse params, call one engine function, render. Nothing else.

Domain errors become JSON-RPC errors with the stable codes of docs/protocol.md.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from functools import wraps
from typing import Any, TypeVar

from lsprotocol import types as t
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcServerError
from pygls.workspace.position_codec import ServerTextPosition, ServerTextRange

from pi_event_search.core import eventref, secrets, wire
from pi_event_search.core.authz import MissingCutoff
from pi_event_search.core.errors import EngineError, InvalidRef, NotFound, SourceUnreadable
from pi_event_search.core.eventref import Ref
from pi_event_search.lsp import render as lsp_render
from pi_event_search.lsp.params import (
    BadParams,
    current_session,
    event_at_params,
    event_ref,
    file_params,
    read_params,
    reindex_paths,
    search_params,
    sessions_params,
)
from pi_event_search.lsp.server import PiEventServer
from pi_event_search.query.groups import GroupPage
from pi_event_search.query.parse import QueryTooLong
from pi_event_search.query.search import Filters, Page, StaleCursor
from pi_event_search.service.engine import REINDEX_WAIT

NOT_FOUND, STALE_CURSOR, QUERY_TOO_LONG, INDEX_UNAVAILABLE = -32001, -32002, -32003, -32004
SYMBOL_LIMIT = 50
R = TypeVar("R")


def _server_error(message: str, code: int) -> JsonRpcServerError:
    return JsonRpcServerError(message, code)  # type: ignore[no-untyped-call]


def errors(fn: Callable[..., Awaitable[R]]) -> Callable[..., Awaitable[R]]:
    """Map domain exceptions to JSON-RPC errors; every string of an answer scrubbed (recorded
    text reaches the editor in names, paths and ids too: core/secrets.py `clean`)."""

    @wraps(fn)
    async def wrapper(*args: Any) -> R:
        try:
            return secrets.clean(await fn(*args), reveal=args[0].settings.reveal_secrets)
        except (BadParams, InvalidRef, MissingCutoff) as exc:
            raise JsonRpcInvalidParams(f"Invalid params: {exc}") from exc
        except NotFound as exc:
            raise _server_error(str(exc), NOT_FOUND) from exc
        except StaleCursor as exc:
            raise _server_error(f"Stale cursor: {exc}", STALE_CURSOR) from exc
        except QueryTooLong as exc:
            raise _server_error(f"Query too long: {exc}", QUERY_TOO_LONG) from exc
        except EngineError as exc:
            raise _server_error(str(exc), INDEX_UNAVAILABLE) from exc

    return wrapper


def register(ls: PiEventServer) -> None:  # noqa: C901 - one small closure per feature
    @ls.feature(t.INITIALIZE)
    def initialize(ls: PiEventServer, params: t.InitializeParams) -> None:
        ls.apply_settings(params.initialization_options)
        # rootUri mirrors the first folder: once every folder is removed it must not stay a root
        ls.folders_given = bool(params.workspace_folders)

    @ls.feature(t.INITIALIZED)
    async def initialized(ls: PiEventServer, params: t.InitializedParams) -> None:
        ls.begin_background()  # opens the engine off the event loop, retried

    @ls.feature(t.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: PiEventServer,
                                 params: t.DidChangeConfigurationParams) -> None:
        ls.apply_settings(params.settings)

    @ls.feature(t.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def did_change_folders(ls: PiEventServer,
                           params: t.DidChangeWorkspaceFoldersParams) -> None:
        # pygls updates ls.workspace.folders; roots are read per request, directories here.
        ls.follow_dirs()

    @ls.feature(t.SHUTDOWN)
    def shutdown(ls: PiEventServer, params: Any) -> None:
        ls.stop_watch.set()

    @ls.feature("piEvents/search")
    @errors
    async def search(ls: PiEventServer, params: Any
                     ) -> wire.SearchResult | wire.GroupedResult:
        p = search_params(params)
        engine = await ls.ready_engine()
        scope = ls.scope(p.current)
        if p.group_by is not None:
            def grouped() -> tuple[GroupPage, wire.Indexing | None]:
                return (engine.search_groups(p.query, p.filters, scope, limit=p.limit,
                                             cursor=p.cursor, prefix_last=p.prefix_last,
                                             reveal_secrets=ls.settings.reveal_secrets,
                                             exact=p.exact, settled=p.settled),
                        engine.indexing())

            found, now = await ls.run_blocking(grouped)
            return {"sessions": found.groups, "nextCursor": found.next_cursor,
                    "didYouMean": found.did_you_mean, "indexing": now}

        def run() -> tuple[Page, wire.Indexing | None]:  # one thread hop, not two
            return (engine.search(p.query, p.filters, scope, limit=p.limit, cursor=p.cursor,
                                  prefix_last=p.prefix_last, exact=p.exact, settled=p.settled),
                    engine.indexing())

        page, indexing = await ls.run_blocking(run)
        return {"hits": page.hits, "nextCursor": page.next_cursor,
                "didYouMean": page.did_you_mean, "indexing": indexing}

    @ls.feature("piEvents/sessions")
    @errors
    async def sessions(ls: PiEventServer, params: Any) -> wire.SessionsResult:
        p = sessions_params(params)
        return await ls.run_blocking((await ls.ready_engine()).sessions, p.filters,
                                     ls.scope(p.current), limit=p.limit, cursor=p.cursor,
                                     reveal_secrets=ls.settings.reveal_secrets)

    @ls.feature(t.WORKSPACE_SYMBOL)
    @errors
    async def workspace_symbol(ls: PiEventServer, params: t.WorkspaceSymbolParams
                               ) -> list[t.SymbolInformation]:
        if not params.query.strip():
            return []
        engine = await ls.ready_engine()
        page = await ls.run_blocking(engine.search, params.query, Filters(), ls.scope(),
                                     limit=SYMBOL_LIMIT, prefix_last=True)
        return [lsp_render.symbol(h) for h in secrets.clean(page.hits)]

    @ls.feature("piEvents/read")
    @errors
    async def read(ls: PiEventServer, params: Any) -> wire.ReadResult:
        p = read_params(params)
        engine = await ls.ready_engine()
        return await ls.run_blocking(engine.read, p.ref, ls.scope(p.current), fragment=p.fragment,
                                     offset=p.offset, length=p.length, before=p.before,
                                     after=p.after, order=p.order,
                                     reveal_secrets=ls.settings.reveal_secrets)

    @ls.feature("piEvents/trace")
    @errors
    async def trace(ls: PiEventServer, params: Any) -> wire.TraceResult:
        ref = event_ref(params)  # params is an object from here on
        return await ls.run_blocking((await ls.ready_engine()).trace, ref,
                                     ls.scope(current_session(params)))

    @ls.feature("piEvents/eventAt")
    @errors
    async def event_at(ls: PiEventServer, params: Any) -> wire.EventAt | wire.NoEventAt:
        p = event_at_params(params)
        engine = await ls.ready_engine()
        found = None if p.path is None else await ls.run_blocking(
            engine.event_at, p.path, p.line, ls.scope(p.current))
        return found or {"ref": None}

    @ls.feature("piEvents/secrets")
    @errors
    async def secret_events(ls: PiEventServer, params: Any) -> wire.SecretsResult:
        return await ls.run_blocking((await ls.ready_engine()).secrets, ls.scope())

    @ls.feature("piEvents/status")
    @errors
    async def status(ls: PiEventServer, params: Any) -> wire.StatusResult:
        if ls.engine is None:  # opening, or failed: status answers in every state, at once
            return ls.status_unopened()
        result = await ls.run_blocking((await ls.ready_engine()).status, ls.scope())
        result["server"] = await ls.run_blocking(ls.server_state)
        result["index"]["indexing"] = result["server"]["state"] == "indexing"
        return result

    @ls.feature("piEvents/reindex")
    @errors
    async def reindex(ls: PiEventServer, params: Any) -> wire.ReindexResult:
        report = await ls.index_now(reindex_paths(params), wait=REINDEX_WAIT)
        return {"changedSessions": report.changed_sessions, "generation": report.generation}

    @ls.feature("piEvents/fileHistory")
    @errors
    async def file_history(ls: PiEventServer, params: Any) -> wire.FileHistoryResult:
        p = file_params(params)
        found = await ls.run_blocking((await ls.ready_engine()).file_history, p.path,
                                      ls.scope(p.current), limit=p.limit, cursor=p.cursor)
        return found.wire()

    @ls.feature("piEvents/lineOrigin")
    @errors
    async def line_origin(ls: PiEventServer, params: Any) -> wire.LineOriginResult:
        p = file_params(params, line=True)
        text = _line_text(ls, p.uri, p.line)
        return await ls.run_blocking((await ls.ready_engine()).line_origin, p.path, text,
                                     ls.scope(p.current))

    @ls.feature(t.TEXT_DOCUMENT_HOVER)
    async def hover(ls: PiEventServer, params: t.HoverParams) -> t.Hover | None:
        try:
            found = await _read_at(ls, params.text_document.uri, params.position)
        except SourceUnreadable as exc:  # indexed, but its file cannot be read: say so
            at = _ref_at(ls, params.text_document.uri, params.position)
            return t.Hover(contents=t.MarkupContent(kind=t.MarkupKind.PlainText,
                                                    value=secrets.scrub(str(exc))),
                           range=at[1] if at else None)
        if found is None:
            return None
        return t.Hover(contents=t.MarkupContent(kind=t.MarkupKind.Markdown,
                                                value=lsp_render.hover_markdown(found[0])),
                       range=found[1])

    @ls.feature(t.TEXT_DOCUMENT_DEFINITION)
    async def definition(ls: PiEventServer, params: t.DefinitionParams) -> t.Location | None:
        with contextlib.suppress(SourceUnreadable):
            found = await _read_at(ls, params.text_document.uri, params.position)
            return lsp_render.location(found[0]["source"]) if found else None
        return None

    @ls.feature(t.TEXT_DOCUMENT_DOCUMENT_LINK)
    async def document_link(ls: PiEventServer, params: t.DocumentLinkParams
                            ) -> list[t.DocumentLink]:
        doc = ls.workspace.get_text_document(params.text_document.uri)
        try:
            source = doc.source
        except OSError:
            return []
        refs = list(eventref.in_text(source))[:500]
        where: dict[tuple[str, str], wire.Source] = {}
        if refs and ls.engine is not None:
            where = await ls.run_blocking(ls.engine.locate, [f.ref for f in refs], ls.scope())
        links: list[t.DocumentLink] = []
        for found in refs:
            rng = doc.range_to_client_units(_range(found.line, found.start, found.end))
            at = where.get((found.ref.session_id, found.ref.entry_id))
            target = f"{at['uri']}#L{at['line']}" if at is not None else None
            links.append(t.DocumentLink(range=rng, target=target))
        return links


def _range(line: int, start: int, end: int) -> ServerTextRange:
    return ServerTextRange(ServerTextPosition(line, start), ServerTextPosition(line, end))


def _line_text(ls: PiEventServer, uri: str, line: int) -> str:
    """The line as the editor has it (an open document), else as the file on disk holds it."""
    try:
        lines = ls.workspace.get_text_document(uri).lines
    except (OSError, UnicodeDecodeError) as exc:
        raise BadParams(f"cannot read {uri}: {exc}") from exc
    if line >= len(lines):
        raise BadParams(f"line {line} is past the end of {uri} ({len(lines)} lines)")
    return lines[line]


def _ref_at(ls: PiEventServer, uri: str, pos: t.Position) -> tuple[Ref, t.Range] | None:
    doc = ls.workspace.get_text_document(uri)
    try:
        source = doc.source  # a document never opened is read from disk, if it exists
    except OSError:
        return None
    server_pos = doc.position_from_client_units(pos)
    found = eventref.at(source, server_pos.line, server_pos.character)
    if found is None:
        return None
    return found.ref, doc.range_to_client_units(_range(found.line, found.start, found.end))


async def _read_at(ls: PiEventServer, uri: str, pos: t.Position
                   ) -> tuple[wire.ReadResult, t.Range] | None:
    """The event referenced at a position, read (bounded), with the reference's range."""
    found = _ref_at(ls, uri, pos)
    if found is None:
        return None
    result = await _quiet_read(ls, found[0])
    return (result, found[1]) if result is not None else None


async def _quiet_read(ls: PiEventServer, ref: Ref) -> wire.ReadResult | None:
    """A bounded read for hovers and jumps; missing or invisible events simply give nothing (an
    unreadable source file raises SourceUnreadable, for the hover to say)."""
    if ls.engine is None:
        return None
    try:
        return secrets.clean(await ls.run_blocking(
            ls.engine.read, ref, ls.scope(), length=lsp_render.HOVER_CHARS, before=0, after=0,
            reveal_secrets=ls.settings.reveal_secrets), reveal=ls.settings.reveal_secrets)
    except SourceUnreadable:
        raise
    except EngineError:
        return None
