"""`/events` in Pi's interactive TUI: the real Pi 1.6 in a pseudo-terminal (120x32), keys typed
as a person types them. The picker lists this project's hit (never another project's), the preview
shows its exact text, Ctrl+R the read view, Escape goes back, Enter puts the reference into
Pi's editor; Alt+E opens the picker again, and Escape closes it leaving the prompt as it was.
Assertions read the terminal output with escape sequences removed.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import signal
import struct
import termios
import time

from pihelp import EXT, WORD, Project, pi_cli, pi_node

from builder import SessionBuilder
from secretcorpus import ESCAPES

ANSI = re.compile(r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]"  # CSI
                  r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC
                  r"|\x1b[_P^][^\x1b]*\x1b\\|\x1b[=>78]")  # APC, DCS; keypad, cursor save
COLUMNS, ROWS = 120, 32


class Terminal:
    def __init__(self, argv: list[str], cwd: str, env: dict[str, str]) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: Pi
            os.chdir(cwd)
            os.execve(argv[0], argv, env)
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
        self.out = b""

    def text(self, since: int = 0) -> str:
        return ANSI.sub("", self.out[since:].decode("utf-8", "replace"))

    def until(self, pattern: str, since: int = 0, timeout: float = 60) -> str:
        """Reads until the output after `since` (escapes removed) matches; fails with what came."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if re.search(pattern, self.text(since)):
                return self.text(since)
            ready, _, _ = select.select([self.fd], [], [], 0.1)
            if ready:
                try:
                    self.out += os.read(self.fd, 65536)
                except OSError:
                    break
        raise AssertionError(f"no {pattern!r} within {timeout} s; the screen said:\n"
                             f"{self.text(since)[-3000:]}")

    def last_frame(self, since: int, quiet: float = 0.5, timeout: float = 30) -> str:
        """Reads until Pi has drawn nothing for `quiet` s, then the text of its last frame after
        `since` (each frame is one synchronized update, ESC [?2026h ... ESC [?2026l)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            ready, _, _ = select.select([self.fd], [], [], quiet)
            if not ready:
                break
            try:
                self.out += os.read(self.fd, 65536)
            except OSError:
                break
        frame = self.out[since:].rsplit(b"\x1b[?2026h", 1)[-1]
        return ANSI.sub("", frame.decode("utf-8", "replace"))

    def type(self, data: str) -> int:
        """Text a key at a time; an escape sequence (an arrow key) in one write, as a terminal sends it."""
        mark = len(self.out)
        for key in [data] if data.startswith("\x1b") else list(data):
            os.write(self.fd, key.encode())
            time.sleep(0.02)
        return mark

    def close(self) -> None:
        try:
            os.kill(self.pid, signal.SIGTERM)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(self.fd)


def test_events_picker_in_the_interactive_tui(project: Project) -> None:
    node = pi_node()
    env = project.env() | {"TERM": "xterm-256color", "COLORTERM": "truecolor"}
    term = Terminal([node, str(pi_cli()), "--offline", "-nc", "-e", str(EXT / "src" / "index.ts")],
                    str(project.root), env)
    ref = f"pi-event:{project.earlier.session_id}/{project.earlier_hit}"
    # An old bash output that would clear the screen, set the title and ring the bell if it reached
    # the terminal raw; and a key in a command.
    old = SessionBuilder(project.agent / "sessions", str(project.root))
    old.bash("make", f"quokkaline{ESCAPES} built with sk-proj-Qx7vR2mN8kL4pT6wY1zB3cD5fG9hJ0aS\n")
    # (at 120 columns the rest of the line, ", current session left out", is cut when pytest's
    # temporary path is long, as from its 100th run on)
    header = rf"Pi events · sessions of {re.escape(str(project.root.resolve()))}"
    try:
        term.until(r"v1\.6\.0")  # the banner: Pi 1.6 is up
        time.sleep(1)  # the editor takes keys once drawn
        opened = term.type("/events zebra")
        term.until(r"/events zebra", opened)
        entered = term.type("\r")
        shown = term.until(r"npm ERR! zebracorn module missing", entered)
        assert re.search(header, shown)
        assert "fix the build" in shown and "tool.result bash error" in shown
        assert "another project" not in shown
        # the hit is first or second (the order is the server's); select it
        try:
            moved = term.until(rf"preview {re.escape(ref)}", entered, timeout=5)
        except AssertionError:
            moved = term.until(rf"preview {re.escape(ref)}", term.type("\x1b[B"))
        assert "npm ERR! zebracorn module missing" in moved
        read = term.until(r"characters 0-\d+ of \d+", term.type("\x12"))  # ctrl+r
        assert f"read {ref}" in read and "after (append order)" in read
        term.until(r"enter insert ref · tab insert quote", term.type("\x1b"))
        inserted = term.until(re.escape(ref), term.type("\r"))
        assert "Pi events ·" not in inserted, "the picker closed"
        assert WORD in shown
        # The shortcut opens it again (empty query: the newest events); Escape leaves the prompt
        # as it was, the reference still in it.
        again = term.until(r"enter insert ref · tab insert quote", term.type("\x1be"))  # alt+e
        assert re.search(header, again)
        mark = term.type("quokkaline")
        found = term.until(r"quokkaline built with \[redacted: openai-key\]", mark)
        assert "Qx7vR2mN8kL4" not in found
        raw = term.out[mark:].decode("utf-8", "replace")
        assert "pwned title" not in raw, "a recorded OSC sequence reached the terminal"
        assert "\x1b[2J" not in raw and "\x1b[31m" not in raw, "a recorded escape reached the terminal"
        # Escape closes it; a search still answering for the last keys may draw it once more first.
        mark = term.type("\x1b")
        term.until(re.escape(ref), mark)
        assert "Pi events ·" not in term.last_frame(mark), "the picker closed"
    finally:
        term.close()


def test_events_ctrl_g_groups_by_session_in_the_interactive_tui(project: Project) -> None:
    """Ctrl+G in /events: the rows become sessions (matching/all events, name or first prompt) in
    the order of their strongest hits; Enter inserts the selected session's top ref; Ctrl+G again
    goes back to events."""
    node = pi_node()
    strong = SessionBuilder(project.agent / "sessions", str(project.root))
    top = strong.user(f"{WORD} {WORD} {WORD} everywhere, in the quokka build")
    strong.assistant(f"The {WORD} quokka config is read twice.")
    env = project.env() | {"TERM": "xterm-256color", "COLORTERM": "truecolor"}
    term = Terminal([node, str(pi_cli()), "--offline", "-nc", "-e", str(EXT / "src" / "index.ts")],
                    str(project.root), env)
    top_ref = f"pi-event:{strong.session_id}/{top}"
    try:
        term.until(r"v1\.6\.0")  # the banner: Pi 1.6 is up
        time.sleep(1)  # the editor takes keys once drawn
        term.until(r"/events zebra", term.type("/events zebra"))
        events = term.until(r"page 1 · \d+ hits", term.type("\r"))
        assert "Pi events by session" not in events
        grouped = term.until(r"page 1 · 2 sessions", term.type("\x07"))  # ctrl+g
        assert "Pi events by session ·" in grouped
        assert "ctrl+g by event" in grouped and "enter insert its top hit's ref" in grouped
        rows = grouped[grouped.rindex("Pi events by session ·"):]
        # The strongest session first (its first prompt: it has no name), then "fix the build".
        first, second = rows.index("2/2"), rows.index("2/5")
        assert first < second, rows
        assert "fix the build" in rows[second:] and f"{WORD} {WORD} {WORD}" in rows[first:second]
        assert "another project" not in rows
        term.until(rf"preview {re.escape(top_ref)}", 0)
        # Back to events: its help is drawn, then its results (Pi 1.x redraws only changed lines,
        # so the help need not come again with the final page line).
        mark = term.type("\x07")
        term.until(r"ctrl\+g by session", mark)
        term.until(r"page 1 · \d+ hits(?! · searching)", mark)
        term.until(r"page 1 · 2 sessions", term.type("\x07"))
        inserted = term.until(re.escape(top_ref), term.type("\r"))
        assert "Pi events by session ·" not in inserted, "the picker closed"
    finally:
        term.close()
