"""Where Pi keeps its sessions, where our disposable index lives and where the user's extractor
registry is (environment-driven)."""

from __future__ import annotations

import os
from pathlib import Path


def pi_sessions_dir() -> Path:
    """Pi's effective sessions directory: `$PI_CODING_AGENT_DIR/sessions`, else `~/.pi/agent/sessions`."""
    agent_dir = os.environ.get("PI_CODING_AGENT_DIR")
    base = Path(agent_dir).expanduser() if agent_dir else Path("~/.pi/agent").expanduser()
    return base / "sessions"


def omp_sessions_dirs() -> list[Path]:
    """Oh My Pi's session directories that exist (its packages/utils/src/dirs.ts): with
    `PI_CODING_AGENT_DIR` set, `$PI_CODING_AGENT_DIR/sessions` (Pi's own, then); else, under
    `~/.omp` (`PI_CONFIG_DIR` renames `.omp`), `agent/sessions` and every profile's
    `profiles/<p>/agent/sessions`, and `$XDG_DATA_HOME/omp/sessions` (and its profiles') where
    `omp config migrate` moved them."""
    agent_dir = os.environ.get("PI_CODING_AGENT_DIR")
    if agent_dir:
        candidates = [Path(agent_dir).expanduser() / "sessions"]
    else:
        root = Path("~").expanduser() / (os.environ.get("PI_CONFIG_DIR") or ".omp")
        candidates = [root / "agent" / "sessions",
                      *sorted((root / "profiles").glob("*/agent/sessions"))]
        xdg = os.environ.get("XDG_DATA_HOME")
        if xdg:
            data = Path(xdg).expanduser() / "omp"
            candidates += [data / "sessions", *sorted((data / "profiles").glob("*/sessions"))]
    return [p for p in candidates if p.is_dir()]


def extractors_file() -> Path:
    """The user's extractor registry: `$XDG_CONFIG_HOME/pi-event-search/extractors.json`, else
    `~/.config/...`: for the CLI, and for a server whose client sends none."""
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg).expanduser() if xdg else Path("~/.config").expanduser()
    return base / "pi-event-search" / "extractors.json"


def cache_dir() -> Path:
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path("~/.cache").expanduser()
    return base / "pi-event-search"


def default_index_path(schema_version: int) -> Path:
    """`$PI_EVENT_SEARCH_INDEX`, else one file per schema version in the cache directory: two
    versions of the server on one machine (an editor's private one, the CLI's) never drop each
    other's index."""
    explicit = os.environ.get("PI_EVENT_SEARCH_INDEX")
    if explicit:
        return Path(explicit).expanduser()
    return cache_dir() / f"index-v{schema_version}.sqlite3"
