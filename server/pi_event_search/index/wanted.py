"""The session directories every process on an index reads, so that the writer reads them too.

One process writes the index (the lease), but each answers only from its own directories
(core/authz.py `found_in`): a Pi started with `--session-dir`, or an editor with an archive
directory, would find nothing while another process held the lease. So each engine says which
directories it reads in a file of its own, `<index>.dirs/<pid>-<token>.json`, written when it
opens and removed when it closes, and the writer reads the union (its own first). A file whose
process is gone is ignored, and removed by the next writer that sees it. Nothing here grants
access: a directory read for one process shows in that process's answers only.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import time
from pathlib import Path
from typing import Any

from pi_event_search.source.discovery import DEPTH, RACY_NS, SessionDir

# Listings by folder: (its mtime, the directories of the files in it). Files are only ever
# created or removed, never rewritten, so an unchanged mtime means unchanged contents.
_SEEN: dict[str, tuple[int, list[tuple[str, list[SessionDir]]]]] = {}


def folder(index_path: Path) -> Path:
    return Path(f"{index_path}.dirs")


def announce(index_path: Path, dirs: list[SessionDir]) -> Path | None:
    """Say that this process reads `dirs`; the file to remove at close (None: it could not be
    written, and then only this process's own passes read its directories)."""
    where = folder(index_path)
    name = f"{os.getpid()}-{secrets.token_hex(6)}.json"
    body = json.dumps([{"path": d.path, "layout": d.layout, "live": d.live, "origin": d.origin}
                       for d in dirs]).encode()
    try:
        where.mkdir(mode=0o700, exist_ok=True)
        tmp = where / f".{name}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(body)
        os.replace(tmp, where / name)
    except OSError:
        return None
    return where / name


def withdraw(path: Path | None) -> None:
    if path is not None:
        with contextlib.suppress(OSError):
            path.unlink()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, not ours to signal
    return True


def _parse(raw: Any) -> list[SessionDir]:
    out: list[SessionDir] = []
    for d in raw if isinstance(raw, list) else []:
        if isinstance(d, dict) and isinstance(d.get("path"), str) and d["path"].startswith("/") \
                and d.get("layout") in DEPTH:
            out.append(SessionDir(d["path"], bool(d.get("live")), d["layout"],
                                  str(d.get("origin") or "another process")))
    return out


def others(index_path: Path, own: Path | None, *, clean: bool = False) -> list[SessionDir]:
    """The directories the other live processes on this index read. `clean`: remove the files
    of processes that are gone (the writer does)."""
    where = folder(index_path)
    try:
        mtime = where.stat().st_mtime_ns
    except OSError:
        return []
    hit = _SEEN.get(str(where))
    if hit is None or hit[0] != mtime:
        listing: list[tuple[str, list[SessionDir]]] = []
        try:
            names = sorted(n for n in os.listdir(where) if n.endswith(".json")
                           and not n.startswith("."))
        except OSError:
            return []
        for name in names:
            try:
                listing.append((name, _parse(json.loads((where / name).read_bytes()))))
            except (OSError, ValueError):
                continue
        hit = (mtime, listing)
        if time.time_ns() - mtime > RACY_NS:  # a change within the same tick could hide
            _SEEN[str(where)] = hit
    out: list[SessionDir] = []
    for name, dirs in hit[1]:
        if own is not None and name == own.name:
            continue
        pid = name.split("-", 1)[0]
        if not pid.isdigit() or not _alive(int(pid)):
            if clean:
                withdraw(where / name)
            continue
        out += dirs
    return out
