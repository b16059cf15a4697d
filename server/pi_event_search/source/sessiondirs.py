"""Which directories hold Pi's sessions, as Pi itself resolves them, each with its layout.

Pi 1.6 (`main.js`, `core/settings-manager.js`) writes a session into one directory: `--session-dir`,
else `$PI_CODING_AGENT_SESSION_DIR`, else the `sessionDir` setting (the project's
`.pi/settings.json` over the user's `<agentDir>/settings.json`; read before project trust), else
`<agentDir>/sessions/--<cwd>--/`. A directory so chosen is flat: files sit directly in it.

Finding history is wider than choosing where to write: the default directory holds what was
written before a `sessionDir` was set, and a Pi started with `--session-dir` once still has the
user's usual history. So every one of these that is configured is read (status names each and
why), not only the one Pi would write to now. A project's `sessionDir` counts only where Pi's
saved trust decision trusts the project (`<agentDir>/trust.json`): this project does not widen
what it reads on a repository's word (README, Who can see what).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pi_event_search.core import paths
from pi_event_search.source.discovery import SessionDir, merged, omp_dirs, real

SESSION_DIR_ENV = "PI_CODING_AGENT_SESSION_DIR"


def agent_dir() -> Path:
    """`$PI_CODING_AGENT_DIR`, else `~/.pi/agent` (Pi's `getAgentDir`)."""
    env = os.environ.get("PI_CODING_AGENT_DIR")
    return Path(env).expanduser() if env else Path("~/.pi/agent").expanduser()


def _settings(path: Path) -> dict[str, Any]:
    """A Pi settings file as an object; {} when missing or not an object of JSON (Pi reports
    those itself; here they only mean no setting)."""
    try:
        value = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _path_setting(settings: dict[str, Any], base: str) -> str | None:
    value = settings.get("sessionDir")
    if not isinstance(value, str) or not value.strip():
        return None
    # Pi keeps a relative sessionDir relative to its working directory.
    return os.path.join(base, os.path.expanduser(value))


def trusted(agent: Path, project: str) -> bool:
    """Whether Pi trusts `project` without asking: the closest saved decision in trust.json (the
    folder or a parent), else `defaultProjectTrust: "always"` in the user's settings (what Pi's
    non-interactive modes do)."""
    decisions = _settings(agent / "trust.json")
    here = os.path.realpath(project)
    while True:
        decision = decisions.get(here)
        if isinstance(decision, bool):
            return decision
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    return _settings(agent / "settings.json").get("defaultProjectTrust") == "always"


def configured(*, flag: str | None = None, pi_session_dir: str | None = None,
               extra: list[str] | None = None, projects: list[str] | None = None,
               cwd: str | None = None) -> list[SessionDir]:
    """The directories to read, Pi's own first (default, then every configured `sessionDir`),
    then the extra (archive) ones.

    flag: `--session-dir` as given to the CLI. pi_session_dir: the directory a running Pi
    process writes its session into (its `getSessionDir()`, from the Pi extension). extra: the
    `sessionDirs` setting / `--sessions-dir`. projects: folders whose `.pi/settings.json`
    `sessionDir` counts when Pi trusts them. cwd: what a relative user-level `sessionDir` and
    `--session-dir` are relative to (as for Pi, its working directory)."""
    here = cwd or os.getcwd()
    agent = agent_dir()
    default = real(str(agent / "sessions"))
    dirs = [SessionDir(default, True, "per-project", "default")]

    def flat(path: str | None, origin: str) -> None:
        if path:
            found = real(os.path.join(here, os.path.expanduser(path)))
            if paths.contains(default, found):
                return  # the default directory (or a project folder of it): read already
            dirs.append(SessionDir(found, True, "flat", origin))

    flat(flag, "--session-dir")
    flat(pi_session_dir, "this Pi's session directory")
    env = os.environ.get(SESSION_DIR_ENV)
    flat(os.path.expanduser(env) if env else None, SESSION_DIR_ENV)
    user_file = agent / "settings.json"
    flat(_path_setting(_settings(user_file), here), f"sessionDir in {user_file}")
    for project in projects or []:
        project_file = Path(project) / ".pi" / "settings.json"
        setting = _path_setting(_settings(project_file), project)
        if setting and trusted(agent, project):
            flat(setting, f"sessionDir in {project_file} (a project Pi trusts)")
    dirs += omp_dirs()  # Oh My Pi's, where they exist (docs/omp.md)
    dirs += [SessionDir(real(os.path.join(here, os.path.expanduser(e))), False)
             for e in extra or []]
    return merged(dirs)
