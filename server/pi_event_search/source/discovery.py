"""Finding session files in the configured session directories, each read by its layout:
`per-project` (Pi's default: `<dir>/--<cwd>--/*.jsonl`, and files directly in `<dir>`) or `flat`
(a `sessionDir` Pi was told to use: `<dir>/*.jsonl` only). Which directories: sessiondirs.py.

Discovery only stats and reads first lines. It never grants access to anything (authorization
looks at each session's recorded cwd, and each process at the directories it is configured with)
and never opens a file for writing.
"""

from __future__ import annotations

import os
import re
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, NamedTuple

from pi_event_search.core import locations
from pi_event_search.source import jsonl

# `pi --mode json` streams start with the same header, then events without ids (reference §12).
JSON_MODE_TYPES = {
    "agent_start", "agent_end", "turn_start", "turn_end", "message_start", "message_update",
    "message_end", "tool_execution_start", "tool_execution_update", "tool_execution_end",
    "auto_compaction_start", "auto_compaction_end", "auto_retry_start", "auto_retry_end",
}
_TYPE_RE = re.compile(rb'"type"\s*:\s*"([^"\\]{1,64})"')


Layout = Literal["per-project", "flat"]
# Oh My Pi keeps a session's subagent transcripts in a folder beside it, named like the file
# (`<project>/<session>/<AgentId>.jsonl`), and theirs one level deeper again: how deep to look.
NESTED_DEPTH = 4
# How deep below its directory a layout keeps session files (1: directly in it; per-project: in a
# project folder, or in a session's folder below it). Visibility uses it too (core/authz.py): a
# process answers only from files its own directories hold.
DEPTH: dict[str, int] = {"per-project": 2 + NESTED_DEPTH, "flat": 1}


@dataclass(frozen=True, slots=True)
class SessionDir:
    path: str
    live: bool  # Pi's own directory (True) or an extra/archive directory (False)
    layout: Layout = "per-project"
    # Why this directory is read, for status: "default", "--session-dir",
    # "PI_CODING_AGENT_SESSION_DIR", "sessionDir in <file>", "sessionDirs", ...
    origin: str = "sessionDirs"

    @property
    def depth(self) -> int:
        return DEPTH[self.layout]


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


def scan(dirs: list[SessionDir]) -> tuple[list[Observation], set[str]]:
    """Every candidate file, and the roots that could not be read (their sessions are kept).

    A full rescan stats every file (an append changes nothing else), so the loop around the
    stat is kept lean: listings of unchanged directories are reused, tuples are made without a
    Python-level constructor (3,261 files in 90 directories: 9.8 -> 7 ms; the stat calls are
    3.6 ms of it)."""
    found: list[Observation] = []
    unavailable: set[str] = set()
    seen: set[tuple[int, int]] = set()
    for d in sorted(dirs, key=lambda d: not d.live):
        try:
            top = _names(d.path)
        except OSError:
            unavailable.add(d.path)
            continue
        base = os.path.join(d.path, "")
        if d.depth == 1:
            _observe_all(base, top, d, found, seen)
            continue
        for name in top:
            if name.endswith(".jsonl"):
                _observe_all(base, [name], d, found, seen)
                continue
            _observe_nested(base + name + "/", d, found, seen, NESTED_DEPTH)
    return found, unavailable


def _observe_nested(folder: str, d: SessionDir, out: list[Observation],
                    seen: set[tuple[int, int]], depth: int) -> None:
    """The `.jsonl` files of a project folder, then of the folders in it that sit beside a
    session file of the same name (a Pi project folder holds none: nothing more is listed)."""
    try:
        names = _names(folder[:-1])
    except OSError:
        return  # not a directory, or unreadable
    _observe_all(folder, names, d, out, seen)
    if depth <= 0:
        return
    others = [n for n in names if not n.endswith(".jsonl")]
    if not others:
        return  # a Pi project folder: files only
    files = set(names)
    for name in others:
        if name + ".jsonl" in files:
            _observe_nested(folder + name + "/", d, out, seen, depth - 1)


# Directory listings by path, with the directory's mtime when listed: adding, removing or renaming
# a file changes it, so an unchanged mtime means an unchanged listing. Only listings of
# directories untouched for RACY_NS are kept (a change within the same mtime tick could hide).
_LISTINGS: dict[str, tuple[int, list[str]]] = {}
# A file or directory changed within this long may still change within the same mtime tick.
RACY_NS = 3_000_000_000


def _names(path: str) -> list[str]:
    st = os.stat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise NotADirectoryError(path)
    hit = _LISTINGS.get(path)
    if hit is not None and hit[0] == st.st_mtime_ns:
        return hit[1]
    names = sorted(os.listdir(path))
    if time.time_ns() - st.st_mtime_ns > RACY_NS:
        _LISTINGS[path] = (st.st_mtime_ns, names)
    return names


_make = Observation._make
_regular = stat.S_ISREG


def _observe_all(base: str, names: list[str], d: SessionDir, out: list[Observation],
                 seen: set[tuple[int, int]]) -> None:
    root, live, stat_ = d.path, d.live, os.stat
    for name in names:
        if not name.endswith(".jsonl"):
            continue
        path = base + name
        try:
            st = stat_(path)
        except OSError:
            continue  # vanished, dangling symlink or a symlink loop
        key = (st.st_dev, st.st_ino)
        if not _regular(st.st_mode) or key in seen:
            continue
        seen.add(key)
        out.append(_make((path, root, live, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)))


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


def merged(dirs: list[SessionDir]) -> list[SessionDir]:
    """One entry per path (the first wins: callers list Pi's own directories first)."""
    out: list[SessionDir] = []
    for d in dirs:
        if all(o.path != d.path for o in out):
            out.append(d)
    return out


def real(path: str) -> str:
    """A directory's one spelling (`~` expanded, absolute, symlinks resolved): every process
    that reads it then records its files under the same paths, and finds them again."""
    return os.path.realpath(os.path.expanduser(path))


def default_dirs(live: Path, extra: list[str]) -> list[SessionDir]:
    """Pi's default directory, Oh My Pi's that exist (locations.omp_sessions_dirs) and extra ones
    (all per-project): the directories of a caller that names them itself (tests, benchmarks);
    sessiondirs.py resolves them as Pi does."""
    return merged([SessionDir(real(str(live)), True, "per-project", "default"),
                   *omp_dirs(),
                   *(SessionDir(real(e), False) for e in extra)])


def omp_dirs() -> list[SessionDir]:
    """Oh My Pi's session directories that exist: an agent's own (`live`), per-project, with
    subagent transcripts nested in each session's folder."""
    return [SessionDir(real(str(p)), True, "per-project", "Oh My Pi")
            for p in locations.omp_sessions_dirs()]
