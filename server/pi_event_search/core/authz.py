"""Authorization: which sessions a caller may see, as a SQL predicate joined into every query.

A session is visible when its recorded cwd, in key form (core/paths.py, by the platform's rules),
equals a root or lies under it on a path-component boundary. Relative, empty or missing cwds are
never visible. Discovery (where a file was found) never grants anything; it only takes away: a
process answers only from session files in the directories it is itself configured with
(`found_in`), since the index is shared with processes that read other directories.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pwd
import sqlite3
import subprocess
from dataclasses import dataclass

from pi_event_search.core import paths


def canonical(path: str | None) -> str | None:
    """The comparison key of an absolute path (core/paths.py); None for anything relative or
    empty. What the index stores as a session's `cwd_canon` and what roots are held as."""
    return paths.key(path)


under_sql = paths.under_sql


def place_token(path: str) -> str:
    """An FTS token naming one directory. Every fragment carries the tokens of its session's cwd
    and that cwd's ancestors, so FTS itself narrows a search to the roots (the SQL predicate
    still decides)."""
    return "zzplace" + hashlib.blake2b(path.encode("utf-8", "surrogatepass"),
                                       digest_size=8).hexdigest()


# Directories this shallow (/, /home, /home/me) hold nearly every session: a token for them would
# grow the index and narrow nothing, so roots there are left to the SQL predicate alone.
MIN_PLACE_DEPTH = 3


def _depth(path_key: str) -> int:
    """Names below the anchor (`/`, `c:/`, `//server/share`)."""
    return len(paths.components(path_key)[1])


def place_tokens(cwd_canon: str | None) -> str:
    if not cwd_canon or _depth(cwd_canon) < MIN_PLACE_DEPTH:
        return ""
    return " ".join(place_token(a) for a in paths.ancestors(cwd_canon)[MIN_PLACE_DEPTH:])


def with_places(meta: str, places: str) -> str:
    """A fragment's FTS meta column: its own meta (tool, error, custom type), then the places."""
    return f"{meta} {places}" if meta else places


def git_root(start: str) -> str | None:
    """The Git worktree root containing `start`, if any."""
    try:
        out = subprocess.run(["git", "-C", start, "rev-parse", "--show-toplevel"],
                             capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    root = out.stdout.strip()
    return root if out.returncode == 0 and root else None


def default_root(cwd: str | None = None) -> str:
    """Explicit roots aside: the Git worktree root, else the normalised current directory."""
    here = cwd or os.getcwd()
    return canonical(git_root(here) or here) or "/"


def too_wide(root: str) -> bool:
    """`/`, a home directory, or a folder above one (`/home`): as a root taken by default, it
    would show every session of the machine, or of a user, to whatever started a server there."""
    if root == "/":
        return True
    homes = {os.path.expanduser("~")}
    with contextlib.suppress(OSError):  # no passwd database: the own home still counts
        homes.update(p.pw_dir for p in pwd.getpwall())
    return any(paths.inside(h, root) for h in (canonical(home) for home in homes) if h)


def fallback_roots(cwd: str | None = None) -> list[str]:
    """The roots of a server given none, nor any by its client (core-concepts: the Git root, else
    the working directory), and none at all when that is too wide (`too_wide`): fail closed."""
    root = default_root(cwd)
    return [] if too_wide(root) else [root]


NO_ROOT = ("no root: {where} is `/`, a home directory or a folder above one, where every "
           "session would show. Give one: {how}.")


def _before_cutoff(s: str, e: str) -> str:
    """SQL: the event was appended strictly before the entry the parameter names in its session.
    When the cutoff is not indexed yet, nothing after it is either (append order is preserved)."""
    return (f"{e}.seq < coalesce((SELECT c.seq FROM events c WHERE c.sid = {s}.sid "
            "AND c.entry_id = ?), 1 << 62)")


class MissingCutoff(ValueError):
    """A caller named its own session without the cutoff entry."""


@dataclass(frozen=True, slots=True)
class Scope:
    """Who is asking: roots (None = trusted, every session) and the caller's own session."""

    roots: tuple[str, ...] | None
    current_session: str | None = None
    cutoff: str | None = None
    # The session directories of the process answering, each with how deep below it its
    # layout keeps files (1: directly in it). None: no such limit (a caller that knows none).
    found_in: tuple[tuple[str, int], ...] | None = None

    @staticmethod
    def of(roots: list[str] | None, current_session: str | None = None,
           cutoff: str | None = None) -> Scope:
        if current_session is not None and not cutoff:
            # Without the cutoff the caller's own session would show its whole future.
            raise MissingCutoff("currentSession needs its cutoff (the entry holding the call)")
        if roots is None:
            return Scope(None, current_session, cutoff)
        canon = tuple(sorted({c for c in (canonical(r) for r in roots) if c}))
        return Scope(canon, current_session, cutoff)

    def fts_filter(self) -> str | None:
        """An FTS5 clause on the meta column matching only fragments under the roots."""
        if self.roots is None or not self.roots or \
                any(_depth(r) < MIN_PLACE_DEPTH for r in self.roots):
            return None
        return "meta : (" + " OR ".join(f'"{place_token(r)}"' for r in self.roots) + ")"

    def session_sql(self, alias: str = "s") -> tuple[str, list[object]]:
        """Predicate on a sessions row: visible to this caller."""
        found, found_params = self.found_sql(f"{alias}.path")
        if self.roots is None:
            return found, found_params
        if not self.roots:
            return "0", []
        parts: list[str] = []
        params: list[object] = []
        for root in self.roots:
            sql, values = under_sql(f"{alias}.cwd_canon", root)
            parts.append(sql)
            params += values
        return f"({' OR '.join(parts)}) AND {found}", params + found_params

    def found_sql(self, column: str) -> tuple[str, list[object]]:
        """SQL: the file at `column` is one this process's directories hold, at most as deep
        below one as its layout keeps files."""
        if self.found_in is None:
            return "1", []
        if not self.found_in:
            return "0", []
        parts: list[str] = []
        params: list[object] = []
        for directory, depth in self.found_in:
            prefix = directory.rstrip("/") + "/"
            # At most depth - 1 slashes after the prefix. GLOB, in C: counting the slashes with
            # replace() cost a search 0.8 ms CPU of 3.2; GLOB 0.3-0.5 of 3.8-4.8 (1,500
            # sessions, bench/speed/found_in.py).
            parts.append(f"(substr({column}, 1, {len(prefix)}) = ? AND "
                         f"substr({column}, {len(prefix) + 1}) NOT GLOB ?)")
            params += [prefix, "*" + "/*" * int(depth)]
        return "(" + " OR ".join(parts) + ")", params

    def event_sql(self, target_session: str | None, s: str = "s", e: str = "e"
                  ) -> tuple[str, list[object]]:
        """Predicate on an events row joined to its session: visibility plus the cutoff rule."""
        sql, params = self.session_sql(s)
        if self.current_session is None:
            return sql, params
        if target_session != self.current_session:
            return f"{sql} AND {s}.session_id != ?", [*params, self.current_session]
        # Targeted explicitly: only events appended strictly before the cutoff entry.
        if not self.cutoff:  # never from Scope.of; a hand-built Scope shows none of the session
            return f"{sql} AND 0", params
        return f"{sql} AND {_before_cutoff(s, e)}", [*params, self.cutoff]

    def searchable_sql(self, s: str = "s", e: str = "e") -> tuple[str, list[object]]:
        """Predicate on an events row joined to its session: one some search of this caller
        may find, whatever session it names: every visible session's events, and its own
        session's before the cutoff (a search that leaves that session out can still name it)."""
        sql, params = self.session_sql(s)
        if self.current_session is None:
            return sql, params
        if not self.cutoff:
            return f"{sql} AND {s}.session_id != ?", [*params, self.current_session]
        return (f"{sql} AND ({s}.session_id != ? OR {_before_cutoff(s, e)})",
                [*params, self.current_session, self.cutoff])

    def session_name(self, conn: sqlite3.Connection, session_id: str, name: str | None
                     ) -> str | None:
        """The session's name as this caller may know it: for its own session, the last name
        set strictly before the cutoff (a later `session_info` entry is not theirs to see)."""
        if self.current_session is None or session_id != self.current_session:
            return name
        where, params = self.event_sql(session_id)
        row = conn.execute(
            "SELECT e.facts FROM events e JOIN sessions s ON s.sid = e.sid "
            "WHERE s.session_id = ? AND e.entry_type IN ('session_info', 'title_change') "
            f"AND {where} ORDER BY e.seq DESC LIMIT 1", [session_id, *params]).fetchone()
        if row is None or not row["facts"]:
            return None
        value = json.loads(row["facts"]).get("name")
        return value if isinstance(value, str) and value else None
