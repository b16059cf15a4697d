"""`pi-event-search index|search|sessions|read|trace|file|blame|secrets|status|serve|mcp`: argv in,
JSON or tables out. `search --by-session` groups the results by session; `sessions` lists them.

Exit codes: 0 success, 2 bad usage, 1 any other error. Every error is one line on stderr, masked
and stripped like any answer, never a traceback (a full disk, a busy or unreadable index, a bug:
`PI_EVENT_SEARCH_DEBUG=1` adds the traceback of the last).
"""

from __future__ import annotations

import argparse
import errno
import os
import sqlite3
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import orjson

from pi_event_search import __version__
from pi_event_search.cli import file as cli_file
from pi_event_search.cli import render as render_text
from pi_event_search.cli.demo import ensure_demo
from pi_event_search.core import secrets
from pi_event_search.core.authz import MissingCutoff, Scope, default_root
from pi_event_search.core.errors import EngineError, NotFound
from pi_event_search.core.locations import extractors_file
from pi_event_search.core.timestamps import parse_time
from pi_event_search.query.parse import QueryTooLong
from pi_event_search.query.search import Filters, StaleCursor
from pi_event_search.service.engine import Engine
from pi_event_search.source import sessiondirs
from pi_event_search.source.extractors import load_file

CLI_WAIT = 10.0  # seconds a command waits for another process indexing, then answers as is
INDEX_WAIT = 3600.0  # seconds `index` waits for another process's pass


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--sessions-dir", action="append", default=[], metavar="DIR",
                   help="an extra or archive sessions directory (repeatable)")
    p.add_argument("--session-dir", metavar="DIR",
                   help="Pi's session directory, as given to `pi --session-dir` (files directly "
                        "in it); Pi's own settings are read besides")
    p.add_argument("--index", metavar="PATH", help="index file (default: user cache directory)")


def _scope_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--root", action="append", metavar="DIR",
                   help="authorization root (repeatable); default: the Git root or current dir")
    p.add_argument("--all", action="store_true", help="trusted: every indexed session")
    p.add_argument("--current-session", metavar="ID", help="the caller's own session")
    p.add_argument("--cutoff", metavar="ENTRY_ID", help="the entry holding the invoking call")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _filter_args(p: argparse.ArgumentParser) -> None:
    for flag in ("kind", "role", "tool", "branch-state", "selection-state"):
        p.add_argument(f"--{flag}", action="append", default=[])
    p.add_argument("--session")
    p.add_argument("--cwd", metavar="PATH", help="only sessions recorded in PATH or below")
    p.add_argument("--since")
    p.add_argument("--until")
    p.add_argument("--errors", action="store_true")
    p.add_argument("--file", metavar="PATH", help="events with evidence about this file")
    p.add_argument("--secrets", action="store_true",
                   help="only events that held a credential (shown masked)")


def _reveal_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--reveal-secrets", action="store_true",
                   help="show credentials as recorded (masked by default); for a person, not a model")


def _file_args(p: argparse.ArgumentParser) -> None:
    _common(p)
    _scope_args(p)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="pi-event-search", description=__doc__)
    parser.add_argument("--version", action="version", version=__version__)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    p = sub.add_parser("index", help="index what changed (optionally keep watching)")
    _common(p)
    p.add_argument("--watch", action="store_true", help="follow the sessions directories")
    p = sub.add_parser("search", help="search events (--by-session: grouped by session)")
    _common(p)
    _scope_args(p)
    p.add_argument("query", nargs="?", default="")
    _filter_args(p)
    p.add_argument("--limit", type=int, default=20,
                   help="hits per page (sessions with --by-session)")
    p.add_argument("--cursor")
    p.add_argument("--prefix-last", action="store_true",
                   help="the last word is a prefix, as typed in a picker (recon finds reconnect)")
    p.add_argument("--exact", action="store_true",
                   help="only events holding every word (no partial matches, no corrections)")
    p.add_argument("--demo", action="store_true",
                   help="search a generated demo history when no Pi history exists")
    p.add_argument("--by-session", action="store_true",
                   help="one result per session: its strongest hit, its matches, its name")
    _reveal_arg(p)
    p = sub.add_parser("sessions", help="the sessions, newest first (the search filters apply)")
    _common(p)
    _scope_args(p)
    _filter_args(p)
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--cursor")
    _reveal_arg(p)
    p = sub.add_parser("read", help="read one event exactly, from its source file")
    _common(p)
    _scope_args(p)
    p.add_argument("ref", help="SESSION_ID/ENTRY_ID or pi-event:SESSION_ID/ENTRY_ID")
    p.add_argument("--fragment")
    p.add_argument("--offset", type=int, default=0)
    p.add_argument("--length", type=int, default=4000)
    p.add_argument("--before", type=int, default=1)
    p.add_argument("--after", type=int, default=1)
    p.add_argument("--order", choices=("append", "branch"), default="append")
    _reveal_arg(p)
    p = sub.add_parser("trace", help="an event's tree neighbours, relations and lineage")
    _common(p)
    _scope_args(p)
    p.add_argument("ref")
    cli_file.add_parsers(sub, _file_args)
    p = sub.add_parser("secrets", help="the events that held credentials: kinds and counts, no values")
    _common(p)
    _scope_args(p)
    p = sub.add_parser("status", help="index state and counts (of what the roots may see)")
    _common(p)
    _scope_args(p)
    p = sub.add_parser("serve", help="run the language server on stdio")
    _common(p)
    p.add_argument("--stdio", action="store_true",
                   help="accepted for LSP clients that pass it; stdio is the only transport")
    p = sub.add_parser("mcp", help="run the MCP server on stdio (the `mcp` extra)")
    _common(p)
    p.add_argument("--root", action="append", metavar="DIR",
                   help="authorization root (repeatable), fixed: the client's roots are ignored")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    stdout = sys.stdout  # _run wraps it for text output; a caller that runs main twice gets it back
    try:
        args = build_parser().parse_args(argv)
        return _run(args)
    except UsageError as exc:
        _error(str(exc))
        return 2
    except QueryTooLong as exc:  # as the language server and MCP tools say it
        _error(f"query too long: {exc}")
        return 1
    except (NotFound, StaleCursor, EngineError) as exc:
        _error(_hinted(str(exc)))
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except (sqlite3.Error, OSError) as exc:
        _error(_storage_error(exc))
        return 1
    except Exception as exc:  # a bug: still one line, and where it was when asked
        if os.environ.get("PI_EVENT_SEARCH_DEBUG"):
            traceback.print_exc()
        _error(f"internal error ({type(exc).__name__}: {exc}); PI_EVENT_SEARCH_DEBUG=1 shows where")
        return 1
    finally:
        sys.stdout = stdout


def _error(message: str) -> None:
    """One line on stderr: an error can quote a path or recorded text, so it is scrubbed too."""
    line = " ".join(secrets.scrub(message).split())
    print(f"pi-event-search: {line}", file=sys.stderr)


_FULL = "is the disk full? Free space, or pass --index PATH on another disk"


def _hinted(text: str) -> str:
    text = text.removesuffix("; retrying")  # the language server retries; a command stops here
    if "disk is full" in text or "disk I/O error" in text:
        return f"{text}: {_FULL}"
    if "database is locked" in text:
        return f"{text}: another process holds the index busy; try again"
    return text


def _storage_error(exc: sqlite3.Error | OSError) -> str:
    """What a person can do about a failing disk or database, said in one line."""
    text = str(exc)
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return f"cannot write {exc.filename or 'the index'}: {exc.strerror}: {_FULL}"
    if "locked" in text or "busy" in text:
        return f"the index is busy ({text}): another process holds it; try again"
    if isinstance(exc, OSError):
        return f"{exc.strerror or text}{f': {exc.filename}' if exc.filename else ''}"
    return _hinted(f"the index failed: {text}")


def _engine(args: argparse.Namespace) -> Engine:
    registry, warnings = load_file(extractors_file())
    for warning in warnings:  # a bad registry is a warning: the command goes on without it
        print(f"pi-event-search: {warning}", file=sys.stderr)
    # A project's sessionDir counts where Pi trusts the project: the folder Pi would start in,
    # and the roots asked about.
    projects = [os.getcwd(), *(str(Path(r).resolve()) for r in getattr(args, "root", None) or [])]
    dirs = sessiondirs.configured(flag=args.session_dir, extra=list(args.sessions_dir),
                                  projects=projects)
    engine = Engine.open(Path(args.index) if args.index else None, [], registry, dirs=dirs)
    if engine.recovered:  # said once, by the process that moved the damaged index aside
        print(f"pi-event-search: {engine.recovered}", file=sys.stderr)
    if engine.cannot_index is not None and args.command != "status":  # status shows it
        print(f"pi-event-search: {engine.cannot_index}", file=sys.stderr)
    return engine


def _scope(args: argparse.Namespace) -> Scope:
    roots = None if args.all else [str(Path(r).resolve()) for r in args.root or [default_root()]]
    try:
        return Scope.of(roots, args.current_session, args.cutoff)
    except MissingCutoff as exc:
        raise UsageError("--current-session needs --cutoff") from exc


def _out(obj: Any, reveal: bool = False) -> None:
    """An answer as JSON, every string in it scrubbed (names, paths and ids are recorded text
    too); `reveal` keeps credentials (a person asked), never control bytes."""
    clean = secrets.clean(obj, reveal=reveal)
    sys.stdout.buffer.write(orjson.dumps(clean, option=orjson.OPT_INDENT_2) + b"\n")


def _run(args: argparse.Namespace) -> int:
    if args.command == "serve":
        # Imported here, not above: the language server's stack (pygls, lsprotocol) would add a
        # quarter second to every other command. Nothing it imports comes back to the CLI.
        from pi_event_search.lsp.main import serve

        serve(Path(args.index) if args.index else None, list(args.sessions_dir), args.session_dir)
        return 0
    if args.command == "mcp":
        return _mcp(args)
    if args.command == "search" and args.demo:
        ensure_demo(args)
    if not getattr(args, "json", False):
        sys.stdout = render_text.Scrubbed(sys.stdout, getattr(args, "reveal_secrets", False))
    engine = _engine(args)
    try:
        return _command(engine, args)
    finally:
        engine.close()  # its lease, and the directories it said it reads (index/wanted.py)


def _command(engine: Engine, args: argparse.Namespace) -> int:
    if args.command == "index":
        return _index(engine, args.watch)
    if args.command == "status":
        status = engine.status(None if args.all else _scope(args))
        _out(status) if args.json else render_text.status(secrets.clean(status))
        return 0
    engine.refresh_or_wait(render_text.progress_printer(), CLI_WAIT)
    if args.command == "search":
        return _search(engine, args)
    if args.command == "sessions":
        return _sessions(engine, args)
    if args.command == "read":
        result = engine.read(args.ref, _scope(args), fragment=args.fragment, offset=args.offset,
                             length=args.length, before=args.before, after=args.after,
                             order=args.order, reveal_secrets=args.reveal_secrets)
        _out(result, args.reveal_secrets) if args.json else render_text.read(
            secrets.clean(result, reveal=args.reveal_secrets))
        return 0
    if args.command == "secrets":
        found = engine.secrets(_scope(args))
        _out(found) if args.json else render_text.secrets(secrets.clean(found))
        return 0
    if args.command in ("file", "blame"):
        return cli_file.run(engine, args, _scope(args), _out, UsageError)
    traced = engine.trace(args.ref, _scope(args))
    _out(traced) if args.json else render_text.trace(secrets.clean(traced))
    return 0


def _mcp_extra_command() -> str:
    """The one command that adds the extra to the environment running this: its own pip, given the
    extra's requirements as this package declares them."""
    import importlib.metadata
    import re

    try:
        declared = importlib.metadata.requires("pi-event-search") or []
    except importlib.metadata.PackageNotFoundError:
        declared = []
    wanted = [r.split(";")[0].strip() for r in declared
              if re.search(r"""extra\s*==\s*['"]mcp['"]""", r.partition(";")[2])]
    reqs = " ".join(f'"{r}"' for r in wanted) or '"pi-event-search[mcp]"'
    # Quoted: an editor's venv lies under "Application Support" on macOS.
    return f'"{sys.executable}" -m pip install {reqs}'


def _mcp(args: argparse.Namespace) -> int:
    # Imported here: the SDK is an optional extra, and its import costs every other command.
    try:
        from pi_event_search.mcp.server import serve
    except ImportError as exc:
        if exc.name is None or not exc.name.startswith("mcp"):
            raise
        raise UsageError("the MCP server needs the `mcp` extra, which this install of pi-event-search "
                         "left out (the editors' offline installs do); this adds it, from the package "
                         f"index: {_mcp_extra_command()}") from exc
    # Pi's --session-dir as an extra directory: its files sit directly in it, which an extra
    # directory's reading covers too.
    extra = [*args.sessions_dir, *([args.session_dir] if args.session_dir else [])]
    serve(Path(args.index) if args.index else None, extra, args.root)
    return 0


def _index(engine: Engine, watch: bool) -> int:
    started = time.monotonic()
    if engine.cannot_index is not None:
        return 1  # said once already (_engine)
    report = engine.refresh_or_wait(render_text.progress_printer(), INDEX_WAIT)
    if not engine.writer:
        print(f"pid {engine.writer_pid()} indexes this index; waited for it", file=sys.stderr)
    changes = ", ".join(f"{n} {k}" for k, n in sorted(report.changed.items())) or "nothing"
    print(f"indexed {report.files} files in {time.monotonic() - started:.1f}s: {changes}; "
          f"{report.events} new events, {report.removed} sessions removed", file=sys.stderr)
    if watch:
        # Imported here, not above: watchfiles and asyncio cost every other command about 25 ms.
        # Nothing watch imports comes back here (tests/test_imports.py).
        from pi_event_search.service.watch import watch_forever

        watch_forever(engine, lambda r: print(
            f"updated: {r.changed_sessions} sessions, {r.events} new events", file=sys.stderr))
    return 0


def _filters(args: argparse.Namespace) -> Filters:
    return Filters(
        session_id=args.session, cwd=args.cwd, kinds=args.kind, roles=args.role, tools=args.tool,
        since_ms=parse_time(args.since, "--since"), until_ms=parse_time(args.until, "--until"),
        errors=args.errors, branch_states=args.branch_state,
        selection_states=args.selection_state, secrets=args.secrets,
        file=str(Path(args.file).resolve()) if args.file and Path(args.file).exists()
        else args.file)


def _search(engine: Engine, args: argparse.Namespace) -> int:
    if args.limit < 1:
        raise UsageError("--limit must be at least 1")
    if args.by_session:
        found = engine.search_groups(args.query, _filters(args), _scope(args), limit=args.limit,
                                     cursor=args.cursor, prefix_last=args.prefix_last,
                                     reveal_secrets=args.reveal_secrets, exact=args.exact)
        indexing = engine.indexing()
        render_text.indexing_note(indexing)
        if args.json:
            _out({"sessions": found.groups, "nextCursor": found.next_cursor,
                  "didYouMean": found.did_you_mean, "indexing": indexing}, args.reveal_secrets)
        else:
            render_text.did_you_mean(found.did_you_mean)
            render_text.groups(secrets.clean(found.groups, reveal=args.reveal_secrets),
                               found.next_cursor)
        return 0
    page = engine.search(args.query, _filters(args), _scope(args), limit=args.limit,
                         cursor=args.cursor, prefix_last=args.prefix_last, exact=args.exact)
    indexing = engine.indexing()
    render_text.indexing_note(indexing)
    if args.json:
        _out({"hits": page.hits, "nextCursor": page.next_cursor, "didYouMean": page.did_you_mean,
              "indexing": indexing})
    else:
        render_text.did_you_mean(page.did_you_mean)
        render_text.hits(secrets.clean(page.hits), page.next_cursor)
    return 0


def _sessions(engine: Engine, args: argparse.Namespace) -> int:
    if args.limit < 1:
        raise UsageError("--limit must be at least 1")
    found = engine.sessions(_filters(args), _scope(args), limit=args.limit, cursor=args.cursor,
                            reveal_secrets=args.reveal_secrets)
    _out(found, args.reveal_secrets) if args.json else render_text.sessions(
        secrets.clean(found, reveal=args.reveal_secrets))
    return 0
