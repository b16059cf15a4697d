"""Finding session files: `<dir>/*.jsonl` and `<dir>/*/*.jsonl` under each sessions directory.

Discovery only stats and reads first lines. It never grants access to anything (authorization
looks at each session's recorded cwd) and never opens a file for writing.
"""

from __future__ import annotations

import operator
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from pi_event_search import jsonl

# `pi --mode json` streams start with the same header, then events without ids (reference §12).
JSON_MODE_TYPES = {
    "agent_start", "agent_end", "turn_start", "turn_end", "message_start", "message_update",
    "message_end", "tool_execution_start", "tool_execution_update", "tool_execution_end",
    "auto_compaction_start", "auto_compaction_end", "auto_retry_start", "auto_retry_end",
}
_TYPE_RE = re.compile(rb'"type"\s*:\s*"([^"\\]{1,64})"')


@dataclass(frozen=True, slots=True)
class SessionDir:
    path: str
    live: bool  # Pi's own directory (True) or an extra/archive directory (False)


class Observation(NamedTuple):
    """One candidate file as stat saw it (a tuple: a full rescan makes one per file)."""

    path: str
    root: str
    live: bool
    dev: int
    ino: int
    size: int
    mtime_ns: int


@dataclass(frozen=True, slots=True)
class HeaderInfo:
    session_id: str | None
    reason: str | None  # why the file is not (yet) a session


_NAME = operator.attrgetter("name")


def scan(dirs: list[SessionDir]) -> tuple[list[Observation], set[str]]:
    """Every candidate file, and the roots that could not be read (their sessions are kept)."""
    found: list[Observation] = []
    unavailable: set[str] = set()
    seen: set[tuple[int, int]] = set()
    for d in sorted(dirs, key=lambda d: not d.live):
        try:
            top = list(os.scandir(d.path))
        except OSError:
            unavailable.add(d.path)
            continue
        for entry in sorted(top, key=_NAME):
            if entry.name.endswith(".jsonl"):
                _observe(entry.path, d, found, seen)
            elif _is_dir(entry):
                try:
                    inner = sorted(os.scandir(entry.path), key=_NAME)
                except OSError:
                    continue
                for sub in inner:
                    if sub.name.endswith(".jsonl"):
                        _observe(sub.path, d, found, seen)
    return found, unavailable


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _observe(path: str, d: SessionDir, out: list[Observation], seen: set[tuple[int, int]]) -> None:
    try:
        st = os.stat(path)
    except OSError:
        return  # vanished, dangling symlink or a symlink loop
    if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) in seen:
        return
    seen.add((st.st_dev, st.st_ino))
    out.append(Observation(path, d.path, d.live, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns))


def read_header_info(path: str) -> HeaderInfo:
    """Session id from the first line, or why this file is not a session."""
    try:
        with open(path, "rb") as fh:
            header, _, reason = jsonl.read_header(fh)
            if header is None:
                return HeaderInfo(None, reason)
            fh.seek(0)
            head = fh.read(1 << 16)
    except OSError as exc:
        return HeaderInfo(None, f"unreadable: {exc.strerror or exc}")
    newline = head.find(b"\n")
    match = _TYPE_RE.search(head[newline + 1 : newline + 513])
    if match is not None and match.group(1).decode(errors="replace") in JSON_MODE_TYPES:
        return HeaderInfo(None, "pi --mode json event stream, not a session")
    return HeaderInfo(str(header["id"]), None)


def default_dirs(live: Path, extra: list[str]) -> list[SessionDir]:
    dirs = [SessionDir(os.path.abspath(str(live)), True)]
    for e in extra:
        path = os.path.abspath(os.path.expanduser(e))
        if all(d.path != path for d in dirs):
            dirs.append(SessionDir(path, False))
    return dirs
