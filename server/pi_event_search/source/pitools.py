"""What Pi's built-in tool calls mean: their arguments as searchable text, and the files they
read or change (paths resolved against the session cwd, as Pi's tools resolve them)."""

from __future__ import annotations

import ntpath
import posixpath
from typing import Any

import orjson

from pi_event_search.core import paths

FILE_READ_TOOLS = {"read", "grep", "find", "ls"}
FILE_CHANGE_TOOLS = {"write", "edit"}  # both edit schemas carry `path`
DEFAULT_TO_CWD = {"grep", "find", "ls"}


def normalize_arguments(name: str, args: Any) -> str:
    """Tool name plus arguments as readable text: strings raw, the rest as compact JSON."""
    if isinstance(args, str):
        return f"{name} {args}"
    if not isinstance(args, dict):
        return name
    if name == "bash" and isinstance(args.get("command"), str):
        rest = {k: v for k, v in args.items() if k != "command"}
        tail = "".join(f"\n{k}: {text_of(v)}" for k, v in rest.items())
        return f"bash {args['command']}{tail}"
    lines = [name] + [f"{k}: {text_of(v)}" for k, v in args.items()]
    return "\n".join(lines)


def text_of(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # nested deeper than orjson writes, or an integer beyond 64 bits
        try:
            return str(value)
        except RecursionError:
            return f"[{type(value).__name__} nested too deeply to show]"


def file_evidence(name: str, args: Any, cwd: str) -> tuple[str, str] | None:
    """("read" | "changed", absolute path) for a built-in tool call, else None."""
    if not isinstance(args, dict):
        return None
    op = "read" if name in FILE_READ_TOOLS else "changed" if name in FILE_CHANGE_TOOLS else None
    if op is None:
        return None
    raw = args.get("path", args.get("file_path"))
    if raw is None and name in DEFAULT_TO_CWD:
        raw = "."
    path = resolve_path(raw, cwd)
    return (op, path) if path else None


def resolve_path(raw: Any, cwd: str) -> str | None:
    """A tool's path argument made absolute against the session cwd (as Pi's tools do). A path
    of a session recorded on Windows (a drive letter or UNC in the path or its cwd) is resolved
    by Windows rules and kept in its comparison form (`c:/users/me/proj/src/a.ts`, core/paths.py),
    wherever the index runs."""
    if not isinstance(raw, str) or not raw.strip():
        return None
    path = raw.strip()
    if path.startswith("@"):
        path = path[1:]
    if paths.shape(path, "windows") == "windows" or (
            paths.shape(path) is None and paths.shape(cwd, "windows") == "windows"):
        return paths.key(ntpath.join(cwd, path) if paths.shape(path, "windows") is None
                         else path, "windows", resolve=False)
    if path.startswith("~"):
        return posixpath.normpath(path)
    if not path.startswith("/"):
        if not cwd.startswith("/"):
            return posixpath.normpath(path)
        path = posixpath.join(cwd, path)
    return posixpath.normpath(path)
