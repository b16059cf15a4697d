"""Server settings from initializationOptions / didChangeConfiguration, forgiving by design:
a bad value is reported once and replaced by its default; the server keeps running."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pi_event_search.core import paths
from pi_event_search.source import extractors


@dataclass(frozen=True, slots=True)
class Settings:
    # The person's own roots (absolute paths or file:// URIs, any platform's spelling).
    roots: tuple[str, ...] | None = None
    # A workspace's roots (VS Code's workspace `piEvents.workspaceRoots`): as configured; the
    # server keeps those inside `roots`, else inside the workspace folders, once resolved.
    project_roots: tuple[str, ...] | None = None
    session_dirs: tuple[str, ...] = ()
    # The directory the Pi extension's own Pi writes its session to (its `getSessionDir()`:
    # `--session-dir`, the environment, a `sessionDir` setting); read flat.
    pi_session_dir: str | None = None
    index_path: str | None = None
    current_session: str | None = None
    cutoff: str | None = None
    watch: bool = True
    # A person's editor setting: reads show credentials as recorded. The Pi extension never sends
    # it (a model must not see them), and nothing else turns it on.
    reveal_secrets: bool = False
    # The extractor registry (source/extractors.py); None: the user file's.
    extractors: extractors.Registry | None = None
    warnings: tuple[str, ...] = field(default=(), compare=False)


def _paths(value: Any, key: str, warn: list[str], *, absolute: bool) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        warn.append(f"{key}: expected a list of paths; ignored")
        return None
    if absolute and not all(paths.key(v, resolve=False) for v in value):
        warn.append(f"{key}: every root must be an absolute path or a file:// URI; ignored")
        return None
    return tuple(value)


def parse(options: Any, base: Settings | None = None) -> Settings:
    """Settings from a client's options object (`{"piEvents": {...}}` or the object itself)."""
    base = base or Settings()
    if options is None:
        return base
    if isinstance(options, dict) and isinstance(options.get("piEvents"), dict):
        options = options["piEvents"]
    if not isinstance(options, dict):
        return Settings(**{**_fields(base), "warnings": ("settings: expected an object; ignored",)})
    warn: list[str] = []
    values = _fields(base)
    roots = _paths(options.get("roots"), "roots", warn, absolute=True)
    if "roots" in options:
        values["roots"] = roots if roots else None
    if "projectRoots" in options:
        project = _paths(options.get("projectRoots"), "projectRoots", warn, absolute=True)
        values["project_roots"] = project if project else None
    dirs = _paths(options.get("sessionDirs"), "sessionDirs", warn, absolute=False)
    if dirs is not None:
        values["session_dirs"] = dirs
    own = options.get("piSessionDir")
    if own is not None:
        if isinstance(own, str) and own.startswith("/"):
            values["pi_session_dir"] = own
        else:
            warn.append("piSessionDir: expected an absolute path; ignored")
    index = options.get("indexPath")
    if index is not None:
        if isinstance(index, str) and index:
            values["index_path"] = index
        else:
            warn.append("indexPath: expected a path; ignored")
    current = options.get("currentSession")
    if current is not None:
        if isinstance(current, dict) and isinstance(current.get("sessionId"), str) and \
                isinstance(current.get("cutoff"), str) and current["cutoff"]:
            values["current_session"] = current["sessionId"]
            values["cutoff"] = current["cutoff"]
        else:
            warn.append("currentSession: expected {sessionId, cutoff} (both strings); ignored")
    for key, field_name in (("watch", "watch"), ("revealSecrets", "reveal_secrets")):
        flag = options.get(key)
        if isinstance(flag, bool):
            values[field_name] = flag
        elif flag is not None:
            warn.append(f"{key}: expected true or false; ignored")
    raw = options.get("extractors")
    if raw is not None:  # absent: as before; null: the user file's
        registry, bad = extractors.parse(raw, "extractors")
        warn += bad
        if registry is not None:  # nothing valid in it: the registry before stays
            values["extractors"] = registry
    elif "extractors" in options:
        values["extractors"] = None
    values["warnings"] = tuple(warn)
    return Settings(**values)


def _fields(s: Settings) -> dict[str, Any]:
    return {"roots": s.roots, "project_roots": s.project_roots, "session_dirs": s.session_dirs,
            "pi_session_dir": s.pi_session_dir,
            "index_path": s.index_path,
            "current_session": s.current_session, "cutoff": s.cutoff, "watch": s.watch,
            "reveal_secrets": s.reveal_secrets, "extractors": s.extractors}
