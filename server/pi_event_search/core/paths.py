"""Paths by the platform's rules: the one place that decides whether two paths name one folder and
whether a path lies inside a root. Authorization (the SQL predicate, the FTS place tokens), MCP
roots, the `cwd` filter, settings' roots and file targets all compare through `key` and `inside`.

A path's *key* is its comparison form, not something to show:

- Windows (a drive letter, `\\\\server\\share`, `\\\\?\\` or `\\\\.\\`, or a `file:///c%3A/` URI):
  `c:/users/me/proj` or `//server/share/dir`: one separator, `\\\\?\\` and `\\\\?\\UNC\\`
  dropped, `.`/`..` applied, case-folded (NTFS compares names without case). Only a Windows host
  can resolve links on such a path; elsewhere it is compared as written.
- POSIX (`/...`, or a `file:///` URI): symlinks and `..` resolved on this host; on macOS
  (`darwin`) also case-folded and Unicode-normalised, as its default volumes compare names, and
  `/var`, `/tmp`, `/etc` spelled as what they link to, `/private/...`.

A recorded cwd's flavor comes from its shape (a drive letter means Windows wherever the index
runs); a POSIX path's case rule comes from the host, which callers (tests) may name.
"""

from __future__ import annotations

import contextlib
import ntpath
import os
import posixpath
import re
import sys
import unicodedata
from typing import Literal
from urllib.parse import unquote, urlparse

Flavor = Literal["posix", "darwin", "windows"]

_DRIVE = re.compile(r"^[A-Za-z]:/")
# The folders macOS keeps under /private and links from the root.
_DARWIN_PRIVATE = ("/var", "/tmp", "/etc")


def host_flavor() -> Flavor:
    if os.name == "nt":
        return "windows"
    return "darwin" if sys.platform == "darwin" else "posix"


def uri_path(uri: str) -> str | None:
    """The path a file:// URI names (`file:///c%3A/Users` -> `c:/Users`, a host -> UNC
    `\\\\host\\share`); None for another scheme."""
    parsed = urlparse(uri)
    if parsed.scheme.lower() != "file":
        return None
    path = unquote(parsed.path)
    if re.match(r"^/[A-Za-z]:(/|$)", path):
        return path[1:] if path[3:] else path[1:] + "/"
    if parsed.netloc and parsed.netloc.lower() != "localhost":
        return "\\\\" + parsed.netloc + path.replace("/", "\\")
    return path


def shape(path: str, host: Flavor | None = None) -> Literal["posix", "windows"] | None:
    """Which platform's absolute path this is by its spelling; None for a relative one
    (`C:x`, `proj`, `~/x`). `//server/share` is UNC on a Windows host only."""
    if _DRIVE.match(path.replace("\\", "/")) or path.startswith(("\\\\", "//?/", "//./")):
        return "windows"
    if (host or host_flavor()) == "windows" and path.startswith("//") and path[2:3] != "/":
        return "windows"
    return "posix" if path.startswith("/") else None


def _fold(text: str) -> str:
    return unicodedata.normalize("NFC", text).casefold()


def _windows_key(path: str, host: Flavor) -> str | None:
    if host == "windows" and os.name == "nt":
        with contextlib.suppress(OSError, ValueError):
            path = ntpath.realpath(path)
    p = path.replace("\\", "/")
    if p.startswith(("//?/", "//./")):
        rest = p[4:]
        p = "//" + rest[4:] if rest[:4].lower() == "unc/" else rest
    if _DRIVE.match(p):
        anchor, tail = p[:2] + "/", p[3:]
    elif p.startswith("//") and not p.startswith("///"):
        server, _, rest = p[2:].partition("/")
        share, _, tail = rest.partition("/")
        if not server or not share:
            return None
        anchor = f"//{server}/{share}"
    else:
        return None
    parts: list[str] = []
    for part in tail.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts:
                parts.pop()
        else:
            parts.append(part)
    return _fold(join(anchor, parts))


def _posix_key(path: str, host: Flavor, resolve: bool) -> str:
    p = path
    if resolve and host != "windows" and os.name != "nt":
        try:
            p = os.path.realpath(p)
        except (OSError, ValueError):
            p = posixpath.normpath(p)
    else:
        p = posixpath.normpath(p)
    p = "/" + p.lstrip("/")  # normpath keeps a leading `//`; POSIX gives it no meaning here
    if host == "darwin":
        p = _fold(p)
        if any(p == d or p.startswith(d + "/") for d in _DARWIN_PRIVATE):
            p = "/private" + p
    return p


def key(path: str | None, host: Flavor | None = None, *, resolve: bool = True) -> str | None:
    """The comparison form of an absolute path or file:// URI (module docstring); None for
    anything relative, empty or not a path. `resolve`: follow symlinks on this host (off for
    paths that were recorded elsewhere or need not exist)."""
    if not isinstance(path, str) or not path or "\x00" in path:
        return None
    host = host or host_flavor()
    if path[:5].lower() == "file:":
        found = uri_path(path)
        if found is None:
            return None
        path = found
    kind = shape(path, host)
    if kind == "windows":
        return _windows_key(path, host)
    if kind == "posix":
        return _posix_key(path, host, resolve)
    return None


def _with_sep(root: str) -> str:
    return root if root.endswith("/") else root + "/"


def inside(path_key: str, root_key: str) -> bool:
    """Keys: `path_key` is `root_key` or lies below it on whole components (`/a/bc` is not
    inside `/a/b`)."""
    return path_key == root_key or path_key.startswith(_with_sep(root_key))


def contains(root: str, path: str, host: Flavor | None = None) -> bool:
    """`path` lies inside `root` (either spelled any way `key` takes); False when either is not
    an absolute path."""
    r, p = key(root, host), key(path, host)
    return r is not None and p is not None and inside(p, r)


def under_sql(column: str, root_key: str) -> tuple[str, list[object]]:
    """SQL: `column` (keys) holds `root_key` itself or a key below it: `inside` as a predicate,
    for roots and filters alike."""
    root = root_key.rstrip("/") or "/"
    prefix = _with_sep(root)
    return f"({column} = ? OR substr({column}, 1, ?) = ?)", [root, len(prefix), prefix]


def _anchor(path_key: str) -> str:
    if path_key.startswith("//"):
        server, _, rest = path_key[2:].partition("/")
        share = rest.partition("/")[0]
        return f"//{server}/{share}"
    if _DRIVE.match(path_key):
        return path_key[:3]
    return "/"


def components(path_key: str) -> tuple[str, list[str]]:
    """A key's anchor (`/`, `c:/`, `//server/share`) and the names below it."""
    anchor = _anchor(path_key)
    return anchor, [p for p in path_key[len(anchor):].split("/") if p]


def join(anchor: str, names: list[str]) -> str:
    if not names:
        return anchor
    return _with_sep(anchor) + "/".join(names)


def ancestors(path_key: str) -> list[str]:
    """The key itself and every folder above it, outermost first."""
    anchor, names = components(path_key)
    return [join(anchor, names[:i]) for i in range(len(names) + 1)]
