"""Who is calling an MCP tool: the authorization roots, and, when the client is Pi, its current
session and the cutoff (core-concepts, "Search corpus and authorization").

Roots: `--root` when given; else the roots the client declares (`roots/list`, again after
`notifications/roots/list_changed`), file:// URIs only; else the server's working directory (its Git
root), unless that is `/`, a home directory or above one: then none (authz.fallback_roots). No tool
argument widens them.

Pi's own session: Pi 1.6 starts one MCP server per session and tells it nothing of that session
(its client sends the cwd as the one root, and `pi` as its name). The session is found the way the
Pi tools find the cutoff, from the file: the session file, among those written since a moment
before this server started, whose last assistant entry holds this very call (a `toolCall` of this
tool with these arguments, not yet answered). That entry is the cutoff. Pi writes the entry before
it runs the tool; should it not be on disk yet, the newest of those files is taken as the current
session, with its last entry as the cutoff. `PI_SESSION_FILE` (as Pi gives its bash tool), when
set, names the file outright.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_event_search.core import paths
from pi_event_search.source.discovery import SessionDir, scan

PI_CLIENT = "pi"
SESSION_FILE_ENV = "PI_SESSION_FILE"
# A session file written this long before the server started may still be the client's: Pi
# writes the prompt before it has started its servers (`pi -p "..."`).
BEFORE_START_NS = 120 * 10**9
TAIL_BYTES = 1 << 20  # how much of a file's end is read to find the call


def root_paths(uris: list[str]) -> list[str]:
    """The local directories among a client's roots (file:// URIs), canonical."""
    out: list[str] = []
    for uri in uris:
        if not uri.lower().startswith("file:"):
            continue
        path = paths.key(uri)
        if path and path not in out:
            out.append(path)
    return out


@dataclass(frozen=True, slots=True)
class Current:
    session_id: str
    cutoff: str
    path: str
    prefix: str = ""  # what Pi put before the tool's name: mcp__<server>__


    def wire(self) -> dict[str, str]:
        return {"sessionId": self.session_id, "cutoff": self.cutoff}


def _entries_from_end(path: str) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """The header and the entries of the file's last TAIL_BYTES, newest first."""
    try:
        with open(path, "rb") as fh:
            first = fh.readline(1 << 16)
            size = os.fstat(fh.fileno()).st_size
            fh.seek(max(len(first), size - TAIL_BYTES))
            tail = fh.read()
    except OSError:
        return None, []
    try:
        header = json.loads(first)
    except ValueError:
        return None, []
    entries: list[dict[str, Any]] = []
    for line in reversed(tail.split(b"\n")):
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a partial first line of the window, or a line being written
        if isinstance(entry, dict):
            entries.append(entry)
    return header if isinstance(header, dict) else None, entries


def _same_tool(called: Any, tool: str) -> bool:
    # Pi names a server's tools mcp__<server>__<tool>.
    return isinstance(called, str) and (called == tool or called.endswith(f"__{tool}"))


def _holding_call(entries: list[dict[str, Any]], tool: str, args: dict[str, Any]
                  ) -> tuple[str, str] | None:
    """The id of the newest assistant entry with an unanswered call of `tool` with `args`, and
    the prefix of the tool's name there."""
    answered: set[str] = set()
    for entry in entries:
        message = entry.get("message") if entry.get("type") == "message" else None
        if not isinstance(message, dict):
            continue
        if message.get("role") == "toolResult":
            answered.add(str(message.get("toolCallId")))
            continue
        if message.get("role") != "assistant" or not isinstance(message.get("content"), list):
            continue
        for block in message["content"]:
            if isinstance(block, dict) and block.get("type") == "toolCall" \
                    and _same_tool(block.get("name"), tool) \
                    and (block.get("arguments") or {}) == args \
                    and str(block.get("id")) not in answered and isinstance(entry.get("id"), str):
                return str(entry["id"]), str(block["name"])[:-len(tool)]
    return None


def _last_id(entries: list[dict[str, Any]]) -> str | None:
    return next((str(e["id"]) for e in entries if isinstance(e.get("id"), str)), None)


def _under(path: str | None, roots: list[str]) -> bool:
    c = paths.key(path)
    return c is not None and any(paths.inside(c, r) for r in roots)


def current_session(dirs: list[SessionDir], roots: list[str], started_ns: int, tool: str,
                    args: dict[str, Any], named_file: str | None = None) -> Current | None:
    """Pi's current session and the cutoff for this call (module docstring), or None when no
    session file of the roots was written since the server started."""
    if named_file:
        candidates = [named_file]
    else:
        found = [o for o in scan(dirs)[0] if o.mtime_ns >= started_ns - BEFORE_START_NS]
        candidates = [o.path for o in sorted(found, key=lambda o: -o.mtime_ns)]
    newest: Current | None = None
    for path in candidates:
        header, entries = _entries_from_end(path)
        if header is None or not isinstance(header.get("id"), str) \
                or not _under(header.get("cwd"), roots):
            continue
        held = _holding_call(entries, tool, args)
        if held is not None:
            return Current(header["id"], held[0], path, held[1])
        last = _last_id(entries)
        if newest is None and last is not None:
            newest = Current(header["id"], last, path)
    return newest


def named_session_file() -> str | None:
    value = os.environ.get(SESSION_FILE_ENV)
    return value if value and Path(value).is_absolute() else None
