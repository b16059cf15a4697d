"""A path as a person or a model types it, and the spellings the index may hold for that file.

Relative paths (`src/x.ts`, `./x`, `../x`, `.env`, `.github/workflows/ci.yml`, `my notes/a b.md`)
resolve against the caller's roots, as Pi's tools resolve them against the session cwd: nothing but
surrounding blanks and a leading `@` is dropped, and `.`/`..` segments are normalised, never stripped
as characters.

Paths are compared canonically (core/paths.py). The index stores a tool's path as Pi resolved it, against the
cwd the session *recorded*; when that cwd reaches the project through a symlink, the stored
spelling differs from the canonical one, so the canonical path is spelled once more under each
such recorded cwd. Another checkout of the same repository has another canonical path and never
matches.
"""

from __future__ import annotations

import os
import posixpath
import sqlite3
from dataclasses import dataclass
from typing import Any

from pi_event_search.core import paths, secrets
from pi_event_search.core.authz import under_sql
from pi_event_search.source.pitools import resolve_path


@dataclass(frozen=True, slots=True)
class TargetFile:
    """The file asked about: its canonical path and every spelling the index may use for it."""

    path: str
    spellings: tuple[str, ...]

    def holds(self, raw: Any, cwd: str | None) -> bool:
        """Whether a tool's path argument, resolved as Pi resolves it, names this file (both
        masked: the index holds paths masked)."""
        resolved = resolve_path(raw, cwd or "")
        return resolved is not None and secrets.scrub(resolved) in self.spellings

    def sql(self, column: str) -> tuple[str, list[Any]]:
        return f"{column} IN ({','.join('?' * len(self.spellings))})", list(self.spellings)

    def under_sql(self, column: str) -> tuple[str, list[Any]]:
        """`column` names this file or, for a directory, a path below it (any spelling)."""
        parts, params = [], []
        for spelling in self.spellings:
            sql, values = under_sql(column, spelling)
            parts.append(sql)
            params += values
        return "(" + " OR ".join(parts) + ")", params


def absolute(path: str, roots: tuple[str, ...] | None) -> list[str]:
    """The absolute paths a typed path names: itself when absolute (`~` expanded), else the path
    resolved against each root; none for a relative path without roots."""
    typed = path.strip().removeprefix("@")
    if typed.startswith("~"):
        typed = os.path.expanduser(typed)
    if typed.startswith("/"):
        return [posixpath.normpath(typed)]
    if paths.shape(typed, "windows") == "windows":  # a file of a session recorded on Windows
        found = paths.key(typed, "windows", resolve=False)
        return [found] if found else []
    return [p for p in dict.fromkeys(resolve_path(typed, root) for root in roots or ()) if p]


def relative_tail(path: str) -> str | None:
    """A relative path normalised (`./x` -> `x`), for matching the end of a stored path when
    there is no root to resolve it against; None when it climbs out (`../x`) or names nothing."""
    norm = posixpath.normpath(path.strip().removeprefix("@"))
    return None if norm in (".", "") or norm.startswith("../") or norm == ".." \
        else secrets.scrub(norm)


def target_file(conn: sqlite3.Connection, path: str,
                roots: tuple[str, ...] | None = None) -> TargetFile | None:
    """The file at `path` (it need not exist any more): absolute, or relative to the first root
    under which it exists (else the first root); None for a relative path without roots."""
    found = absolute(path, roots)
    if not found:
        return None
    chosen = next((p for p in found if os.path.lexists(p)), found[0])
    canon_key = paths.key(chosen)
    if canon_key is None:
        return None
    if paths.shape(chosen, "windows") == "windows":  # recorded on Windows: kept in key form
        return TargetFile(secrets.scrub(canon_key), (secrets.scrub(canon_key),))
    canon = os.path.realpath(chosen)
    spellings = dict.fromkeys([canon, chosen])
    names = [n for n in canon.split("/") if n]
    ancestors = paths.ancestors(canon_key)
    for row in conn.execute(
            "SELECT DISTINCT cwd, cwd_canon FROM sessions WHERE cwd_canon IN "
            f"({','.join('?' * len(ancestors))}) AND cwd != cwd_canon", ancestors):
        cwd = row["cwd"]
        if isinstance(cwd, str) and cwd.startswith("/"):
            # The file's names below that folder (keys may fold case; the names keep it).
            rest = names[len(paths.components(row["cwd_canon"])[1]):]
            spellings[posixpath.normpath(posixpath.join(cwd, *rest))] = None
    # The index holds paths masked (a credential in a file name is a value too): a path asked
    # about is masked the same way, so the answer is one for any value of a credential's shape,
    # never an oracle of which one was recorded.
    return TargetFile(secrets.scrub(canon), tuple(dict.fromkeys(map(secrets.scrub, spellings))))


def targets(conn: sqlite3.Connection, path: str, roots: tuple[str, ...] | None
            ) -> list[TargetFile]:
    """Every file (or directory) a typed path may name: one per root for a relative path."""
    out = [target_file(conn, p) for p in absolute(path, roots)]
    return [t for t in out if t is not None]
