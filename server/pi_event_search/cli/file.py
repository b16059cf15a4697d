"""`pi-event-search file PATH` and `pi-event-search blame PATH:LINE`: a file's Pi history and
the event that wrote a line, on the command line (the engine calls of piEvents/fileHistory and
piEvents/lineOrigin; lines are 1-based here, as editors and `git blame` number them)."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pi_event_search.core import secrets
from pi_event_search.core.authz import Scope
from pi_event_search.core.wire import FileHistoryResult, LineOriginResult
from pi_event_search.service.engine import Engine

LINE_SUFFIX = re.compile(r"^(.*):([0-9]+)$")


def add_parsers(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    p = sub.add_parser("file", help="the events that changed or read a file (changes first)")
    common(p)
    p.add_argument("path")
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--cursor")
    p = sub.add_parser("blame", help="the event whose edit or write wrote a line (PATH:LINE)")
    common(p)
    p.add_argument("target", metavar="PATH:LINE", help="the file and a 1-based line number")


def run(engine: Engine, args: argparse.Namespace, scope: Scope,
        out: Callable[[Any], None], usage: Callable[[str], Exception]) -> int:
    if args.command == "file":
        if not 1 <= args.limit <= 200:
            raise usage("--limit must be in 1..200")
        found = engine.file_history(_absolute(args.path), scope, limit=args.limit,
                                    cursor=args.cursor)
        result = found.wire()
        out(result) if args.json else _print_history(args.path, secrets.clean(result))
        return 0
    m = LINE_SUFFIX.match(args.target)
    if m is None or int(m[2]) < 1:
        raise usage(f"expected PATH:LINE with a 1-based line, not {args.target!r}")
    path, line = _absolute(m[1]), int(m[2])
    try:
        lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        raise usage(f"cannot read {path}: {exc.strerror}") from exc
    if line > len(lines):
        raise usage(f"line {line} is past the end of {path} ({len(lines)} lines)")
    origin = engine.line_origin(path, lines[line - 1], scope)
    out(origin) if args.json else _print_origin(m[1], line, secrets.clean(origin))
    return 0


def _absolute(path: str) -> str:
    return str(Path(path).absolute())


def _print_history(path: str, result: FileHistoryResult) -> None:
    counts = result["counts"]
    print(f"{path}: changed in {counts['changed']} events, read in {counts['read']}")
    for h in result["hits"]:
        verb = "changed" if h["relation"] == "file-changed" else "read"
        print(f"{verb:<8} {(h['timestamp'] or '')[:16]:<16}  {h['sessionName'] or h['cwd'] or ''}"
              f"  [{h['label']}]")
        print(f"    {h['snippet']}")
        print(f"    {h['ref']}")
    if result["nextCursor"]:
        print(f"more: --cursor {result['nextCursor']}")


def _print_origin(path: str, line: int, origin: LineOriginResult) -> None:
    hit = origin["hit"]
    if hit is None:
        why = ("too short to tell (blank, a brace, or under 8 characters)"
               if origin.get("reason") == "trivial" else "no Pi event is known to have written it")
        print(f"{path}:{line}: {why}")
        return
    print(f"{path}:{line}: written by {hit['ref']}  {(hit['timestamp'] or '')[:16]}  "
          f"{hit['sessionName'] or hit['cwd'] or ''}")
    print(f"    {hit['snippet']}")
    for c in origin["candidates"]:
        print(f"  also by {c['ref']}  {(c['timestamp'] or '')[:16]}")
