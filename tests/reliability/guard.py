"""Run pi-event-search with a Python audit hook that records every attempt to change a file under
the guarded directories (the sessions trees), except the index itself.

Used two ways:
- in a child process: `python -c "import guard; guard.main()" ARGS...` runs the CLI (index,
  index --watch, serve, ...) with the hook installed first; violations go to $PIES_GUARD_LOG;
- in the test process: `install_in_process()` records changes made by pi_event_search code only
  (the tests themselves write session files).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from typing import Any

INDEX_FILE = re.compile(r"\.sqlite3(-wal|-shm|-journal|\.writer|\.writer\.cas|\.users|\.open\.lock"
                        r"|\.dirs(/[^/]+)?)?$")
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
# Audit events that change a path (first argument); "open" is handled by mode/flags.
MUTATING = {"os.remove", "os.rename", "os.truncate", "os.chmod", "os.chown", "os.utime",
            "os.rmdir", "os.symlink", "os.link", "os.chflags", "os.setxattr", "os.removexattr",
            "shutil.rmtree", "shutil.move", "shutil.copyfile"}


def _writes(mode: Any, flags: Any) -> bool:
    if isinstance(mode, str):
        return any(c in mode for c in "wax+")
    return isinstance(flags, int) and bool(flags & WRITE_FLAGS)


def make_hook(guarded: list[str], report: Callable[[str], None],
              only_from: str | None = None) -> Callable[[str, tuple[Any, ...]], None]:
    roots = [os.path.realpath(g) for g in guarded]

    def under(path: Any) -> str | None:
        if isinstance(path, int) or path is None:
            return None
        try:
            p = os.fsdecode(path)
        except (TypeError, ValueError):
            return None
        real = os.path.realpath(os.path.abspath(p))
        if INDEX_FILE.search(real):
            return None
        for r in roots:
            if real == r or real.startswith(r + os.sep):
                return real
        return None

    def from_engine() -> bool:
        if only_from is None:
            return True
        frame = sys._getframe(1)
        while frame is not None:
            if frame.f_code.co_filename.startswith(only_from):
                return True
            frame = frame.f_back  # type: ignore[assignment]
        return False

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "open":
            if len(args) >= 3 and _writes(args[1], args[2]) and from_engine():
                path = under(args[0])
                if path is not None:
                    report(f"open({args[1]!r}, flags={args[2]!r}) {path}")
        elif event == "os.mkdir" and args:
            if not from_engine():
                return
            path = under(args[0])
            # creating the index's own directory is fine; an existing directory is unchanged
            if path is not None and not os.path.isdir(path) and os.path.dirname(path) not in roots:
                report(f"{event} {path}")
        elif event in MUTATING and args and from_engine():
            paths = [under(a) for a in args[:2] if isinstance(a, str | bytes | os.PathLike)]
            hit = next((p for p in paths if p is not None), None)
            if hit is not None:
                report(f"{event} {hit}")

    return hook


def main() -> None:
    guarded = [d for d in os.environ.get("PIES_GUARD_DIRS", "").split(os.pathsep) if d]
    fd = os.open(os.environ["PIES_GUARD_LOG"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)

    def report(line: str) -> None:
        os.write(fd, (line.replace("\n", " ") + "\n").encode())

    sys.addaudithook(make_hook(guarded, report))
    seconds = os.environ.get("PIES_COMMIT_SECONDS")
    if seconds:  # crash tests: commit index batches more often than the default, for more cut points
        from pi_event_search.index import writes

        defaults = writes.WriteBatch.__init__.__defaults__
        assert defaults is not None and len(defaults) == 1, "WriteBatch(conn, seconds=...) changed"
        writes.WriteBatch.__init__.__defaults__ = (float(seconds),)
    from pi_event_search.cli.main import main as cli_main

    args = sys.argv[1:]
    sys.exit(cli_main(args or ["serve"]))


VIOLATIONS: list[str] = []
GUARDED: list[str] = []
_installed = False


def install_in_process(engine_dir: str) -> None:
    """Record changes by pi_event_search code (frames under engine_dir) to GUARDED paths."""
    global _installed
    if _installed:
        return
    _installed = True
    cache: dict[tuple[str, ...], Callable[[str, tuple[Any, ...]], None]] = {}

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if not GUARDED or (event not in ("open", "os.mkdir") and event not in MUTATING):
            return
        key = tuple(GUARDED)
        inner = cache.get(key)
        if inner is None:
            inner = cache[key] = make_hook(list(key), VIOLATIONS.append, engine_dir)
        inner(event, args)

    sys.addaudithook(hook)
