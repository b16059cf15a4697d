"""The packaged extension in a real VS Code: code-server 4.100.3 (VS Code 1.100.3) in Debian's
headless Chromium, driven by Playwright (clients/vscode/test/e2e/drive.mjs), over a workspace
whose Pi sessions are fixtures built here with tests/builder.py.

Checked, with the server named in piEvents.serverCommand (test_vscode_install_e2e.py runs the
same flow after the extension installed its own server from its offer): Pi Events: Search lists
the hits of a two-word query in the server's order (the rows' aria-labels as shown equal the rows
made from the server's answer, nothing hidden or re-sorted by VS Code), no row carries
Mathematical Alphanumeric Symbols or zero-width characters, VS Code marks the typed words in the
snippets, accepting one opens its read view, Trace lists its tree, Ctrl+O opens the JSONL file at
the entry's line, and hovering a reference in a Markdown note shows the server's preview.
Screenshots and logs go to test-artifacts/vscode/.

Needs what scripts/setup.d/40-vscode.sh installs; skips, saying which piece is missing, otherwise.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
EXT = REPO / "clients" / "vscode"
VSIX = EXT / "pi-event-search.vsix"
DRIVER = EXT / "test" / "e2e" / "drive.mjs"
ARTIFACTS = REPO / "test-artifacts" / "vscode"
TOOLS = Path(os.environ.get("PI_EVENT_SEARCH_TOOLS", REPO / ".tools"))
CODE_SERVER = TOOLS / "code-server" / "node_modules" / ".bin" / "code-server"
sys.path.insert(0, str(REPO / "tests"))

from builder import SessionBuilder, sample_session  # noqa: E402

pytestmark = pytest.mark.editor
QUERY = "websocket reconnect"
PARTIAL_QUERY = "websocket reconnect exponential"  # only one event holds all three
# "reconect" is in no session: corrected to reconnect (not the last word, which the picker
# searches as a prefix while the person types)
TYPO_QUERY = "reconect websocket"


def missing_piece() -> str | None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        return "Debian chromium not installed (apt-get install chromium)"
    if shutil.which("node") is None:
        return "node not found"
    if not CODE_SERVER.exists():
        return f"code-server not installed at {CODE_SERVER} (scripts/setup.d/40-vscode.sh)"
    if not VSIX.exists():
        return "clients/vscode/pi-event-search.vsix not built (scripts/setup.d/40-vscode.sh)"
    if not (EXT / "node_modules" / "playwright-core").exists():
        return "playwright-core missing in clients/vscode/node_modules (npm ci)"
    probe = subprocess.run([sys.executable, "-m", "pi_event_search", "serve", "--help"],
                           capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        return f"the server does not start: {probe.stderr[-300:]}"
    return None


def unreadable(text: str) -> list[str]:
    """Characters a screen reader spells out or skips: Mathematical Alphanumeric Symbols
    (U+1D400-U+1D7FF) and zero-width / invisible format characters (U+200B...)."""
    return [f"U+{ord(c):04X}" for c in text if 0x1D400 <= ord(c) <= 0x1D7FF
            or 0x200B <= ord(c) <= 0x200F or 0x2060 <= ord(c) <= 0x2064 or ord(c) == 0xFEFF]


def check_readable(rows: list[dict[str, Any]]) -> None:
    for row in rows:
        for field in ("label", "description", "text", "aria"):
            assert not unreadable(row[field]), (field, unreadable(row[field]), row)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Fixture:
    """The workspace and its sessions; remembers the ids the test expects to see."""

    def __init__(self, root: Path) -> None:
        self.ws = root / "ws"
        self.ws.mkdir()
        self.agent = root / "agent"
        sessions = self.agent / "sessions"
        cwd = str(self.ws)
        a = sample_session(sessions, cwd)  # "fix the flaky websocket reconnect test in src/ws.ts"
        self.a = a
        self.a_user = a.ids[2]
        b = SessionBuilder(sessions, cwd, name_seed="b")
        b.user("the websocket keeps dropping: reconnect with exponential backoff please")
        b.assistant("I will make the websocket client reconnect with a backoff.",
                    tool_calls=[("c1", "bash", {"command": "grep -rn reconnect src/websocket"})])
        b.tool_result("c1", "bash", "src/websocket/client.ts:42: reconnect()")
        b.assistant("Done: the websocket now retries reconnect every second, then backs off.")
        b.assistant(tool_calls=[("c2", "read", {"path": "src/big.log"})])
        self.long_id = b.tool_result("c2", "read", "".join(f"log line {i:05d}\n" for i in range(600)))
        self.b = b
        # Same words, but recorded in another project: must never be listed.
        hidden = SessionBuilder(sessions, str(root / "elsewhere"), name_seed="hidden")
        hidden.user("secret websocket reconnect plan from another project")
        self.hidden = hidden
        self.note = self.ws / "note.md"
        ref = f"pi-event:{a.session_id}/{self.a_user}"
        self.note_line = 3
        line = f"The flaky test started here: {ref} (see the hover)."
        self.note_column = line.index(ref) + 10
        self.note.write_text(f"# Notes\n\n{line}\n")

    def visible_refs(self) -> set[str]:
        return {f"pi-event:{s.session_id}/{i}" for s in (self.a, self.b) for i in s.ids}

    def hidden_refs(self) -> set[str]:
        return {f"pi-event:{self.hidden.session_id}/{i}" for i in self.hidden.ids}


@contextlib.contextmanager
def running_code_server(tmp_path: Path, tag: str = "", env_overrides: dict[str, str] | None = None,
                        data_dir: Path | None = None, vsix: Path = VSIX,
                        plant: Callable[[Fixture], None] | None = None,
                        **overrides: Any) -> Iterator[tuple[Fixture, str, Path]]:
    """code-server with the .vsix installed, over the fixture workspace; stopped on exit.
    A setting given as None is left out. `data_dir` keeps the profile (user data, extensions)
    somewhere else, so that a second run can start from the first one's state."""
    reason = missing_piece()
    if reason:
        pytest.skip(reason)
    fx = Fixture(tmp_path)
    if plant is not None:  # more sessions, before the server first indexes
        plant(fx)
    data = data_dir or tmp_path / "cs"
    user = data / "user"
    exts = data / "ext"
    (user / "User").mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "PI_CODING_AGENT_DIR": str(fx.agent),
        "PI_EVENT_SEARCH_INDEX": str(tmp_path / "index.sqlite3"),
        "PI_EVENTS_E2E_LOG": str(tmp_path / "e2e.jsonl"),
        "XDG_CONFIG_HOME": str(data / "xdg-config"),
        "XDG_DATA_HOME": str(data / "xdg-data"),
        "XDG_CACHE_HOME": str(data / "xdg-cache"),
        **(env_overrides or {}),
    }
    settings = {
        "security.workspace.trust.enabled": False,
        "workbench.startupEditor": "none",
        "workbench.tips.enabled": False,
        "telemetry.telemetryLevel": "off",
        "update.mode": "none",
        "extensions.autoCheckUpdates": False,
        "extensions.ignoreRecommendations": True,
        "chat.commandCenter.enabled": False,
        "window.commandCenter": False,
        "piEvents.serverCommand": [sys.executable, "-m", "pi_event_search", "serve"],
        "piEvents.indexPath": str(tmp_path / "index.sqlite3"),
        "piEvents.search.pageSize": 3,  # so that paging is exercised
        # The drives capture the rows as typed; a settled answer (its own test below) would
        # reorder them under the capture.
        "piEvents.search.settleMs": 0,
        "piEvents.trace.server": "verbose",  # the LSP traffic, in the Pi Events log
        # These drives read the Markdown document; the rendered page has its own test
        # (test_vscode_read_view_e2e.py).
        "piEvents.read.view": "markdown",
        **overrides,
    }
    settings = {k: v for k, v in settings.items() if v is not None}
    (user / "User" / "settings.json").write_text(json.dumps(settings, indent=1))
    base = [str(CODE_SERVER), "--user-data-dir", str(user), "--extensions-dir", str(exts)]
    inst = subprocess.run([*base, "--install-extension", str(vsix), "--force"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert inst.returncode == 0 and "successfully installed" in inst.stdout, inst.stdout + inst.stderr
    port = free_port()
    log = (tmp_path / "code-server.log").open("w")
    proc = subprocess.Popen(
        [*base, "--bind-addr", f"127.0.0.1:{port}", "--auth", "none", "--disable-telemetry",
         "--disable-update-check", "--disable-workspace-trust", "--disable-getting-started-override",
         str(fx.ws)],
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert proc.poll() is None, (tmp_path / "code-server.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "code-server did not answer /healthz in 60 s"
            time.sleep(0.3)
        yield fx, f"http://127.0.0.1:{port}/?folder={fx.ws}", tmp_path
    finally:
        # code-server, its extension host and our language server share this process group.
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        log.close()
        # Keep the logs next to the screenshots (the extension's log has the LSP traffic).
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shutil.copy(tmp_path / "code-server.log", ARTIFACTS / f"code-server{tag}.log")
        for found in user.glob("logs/*/exthost*/*/Pi Events.log"):
            shutil.copy(found, ARTIFACTS / f"pi-events{tag}.log")
        if (tmp_path / "e2e.jsonl").exists():
            shutil.copy(tmp_path / "e2e.jsonl", ARTIFACTS / f"e2e{tag}.jsonl")


@pytest.fixture
def code_server(tmp_path: Path) -> Iterator[tuple[Fixture, str, Path]]:
    with running_code_server(tmp_path) as running:
        yield running


def run_driver(driver: Path, tmp: Path, name: str, config: dict[str, Any]) -> dict[str, Any]:
    """Runs one of the other Playwright drivers with `config` (plus the browser, the screenshot
    directory and the step log); returns its observations, also kept in the artifacts as
    `<name>-result.json`, once it reported no error."""
    config = {"chromium": shutil.which("chromium") or shutil.which("chromium-browser"),
              "shots": str(ARTIFACTS), "result": str(tmp / f"{name}-result.json"),
              "log": str(tmp / "e2e.jsonl"), **config}
    (tmp / f"{name}-config.json").write_text(json.dumps(config))
    run = subprocess.run(["node", str(driver), str(tmp / f"{name}-config.json")], cwd=EXT,
                         capture_output=True, text=True, timeout=240)
    assert (tmp / f"{name}-result.json").exists(), run.stdout[-3000:] + run.stderr[-3000:]
    out: dict[str, Any] = json.loads((tmp / f"{name}-result.json").read_text())
    (ARTIFACTS / f"{name}-result.json").write_text(json.dumps(out, indent=1))
    assert not out["errors"], "\n".join(out["errors"]) + f"\nscreenshots: {ARTIFACTS}"
    return out


def drive(url: str, tmp: Path, fx: Fixture, **extra: Any) -> dict[str, Any]:
    """Runs the Playwright driver; returns its observations."""
    result_name = extra.pop("resultName", None)
    config = {
        "url": url, "chromium": shutil.which("chromium") or shutil.which("chromium-browser"),
        "shots": str(ARTIFACTS), "result": str(tmp / "result.json"), "log": str(tmp / "e2e.jsonl"),
        "query": QUERY, "noteName": fx.note.name, "noteLine": fx.note_line,
        "noteColumn": fx.note_column + 1,
        "longRef": f"pi-event:{fx.b.session_id}/{fx.long_id}", **extra,
    }
    (tmp / "config.json").write_text(json.dumps(config))
    timeout = 840 if extra.get("mode") in ("install", "update") else 240
    run = subprocess.run(["node", str(DRIVER), str(tmp / "config.json")], cwd=EXT,
                         capture_output=True, text=True, timeout=timeout)
    assert (tmp / "result.json").exists(), run.stdout[-3000:] + run.stderr[-3000:]
    out: dict[str, Any] = json.loads((tmp / "result.json").read_text())
    name = result_name or (f"result-{extra['mode']}.json" if extra.get("mode") else "result.json")
    (ARTIFACTS / name).write_text(json.dumps(out, indent=1))
    assert not out["errors"], "\n".join(out["errors"]) + f"\nscreenshots: {ARTIFACTS}"
    return out


def test_search_read_trace_jsonl_hover(code_server: Any) -> None:
    """With piEvents.serverCommand naming this checkout's server."""
    fx, url, tmp = code_server
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    out = drive(url, tmp, fx, partialQuery=PARTIAL_QUERY, typoQuery=TYPO_QUERY)
    check_partial_rows(fx, out)
    check_full_run(fx, out)


def check_partial_rows(fx: Fixture, out: dict[str, Any]) -> None:
    """Only b's first prompt holds "exponential": it comes first, the events holding the other two
    words follow, each row saying it is partial and which word it lacks."""
    logged = out["partial"]["logged"]
    assert not logged["error"], logged
    assert logged["refs"][0] == f"pi-event:{fx.b.session_id}/{fx.b.ids[0]}", logged["refs"]
    shown = [r["aria"] for r in out["partial"]["rows"]]
    assert "partial" not in shown[0], shown
    partial = [row for row in shown[1:] if row != "More results…"]
    assert partial and all(", partial, missing " in row for row in partial), shown
    assert any(", partial, missing exponential, " in row for row in partial), shown
    assert set(logged["refs"]) <= fx.visible_refs()
    # "reconect" is in no session: the search ran with "reconnect", and the title says so.
    assert out["typo"]["logged"]["refs"], out["typo"]
    title = out["typo"]["title"]
    assert 'Searched for "reconnect websocket": no event holds "reconect"' in title, out["typo"]


def check_full_run(fx: Fixture, out: dict[str, Any]) -> None:

    # Status bar: counts of what this workspace may see (2 sessions; the third is elsewhere).
    assert re.search(r"Pi Events: 2 sessions", out["status"]), out["status"]

    # Search: the expected hits, in the server's order, nothing from the other project.
    logged = out["search"]["logged"]
    refs = logged["refs"]
    assert logged["query"] == QUERY and not logged["error"]
    assert len(refs) == 3 and logged["nextCursor"], logged  # page size 3
    # The rows as shown (their aria-labels, which VS Code builds from label, description and
    # detail) are the rows the extension made from the server's hits, in the same order.
    rows = out["search"]["rows"]
    shown = [r["aria"] for r in rows]
    assert shown == logged["rows"], (shown, logged["rows"])  # 3 hits, then "More results…"
    assert shown[-1] == "More results…" and len(set(shown)) == len(shown)
    check_readable(rows)
    # Each hit reads: kind, time, session, then the snippet.
    assert re.match(r"(User message|Assistant message|Tool call|Tool result|Session name)[^,]*, "
                    r"(just now|\d+ (minute|hour|day|month|year)s? ago), ", shown[0]), shown[0]
    # VS Code marks the typed words in the snippet (matchOnDetail), in plain characters.
    marked = [h.lower() for r in rows for h in r["highlights"]]
    assert QUERY in marked, [r["highlights"] for r in rows]

    # Paging: moving onto "More results…" appends the next page, still in the server's order.
    paging = out["paging"]
    all_refs = paging["all"]["refs"]
    assert paging["first"]["refs"] == refs and all_refs[:3] == refs
    assert len(all_refs) > 3 and len(set(all_refs)) == len(all_refs)
    expected = {f"pi-event:{fx.a.session_id}/{fx.a_user}",
                f"pi-event:{fx.b.session_id}/{fx.b.ids[0]}",
                f"pi-event:{fx.b.session_id}/{fx.b.ids[1]}"}
    assert expected <= set(all_refs), all_refs
    assert set(all_refs) <= fx.visible_refs() and not set(all_refs) & fx.hidden_refs()
    paged = [r["aria"] for r in paging["rows"]]
    assert paged == paging["all"]["rows"][: len(paged)], (paged, paging["all"]["rows"])
    check_readable(paging["rows"])

    # Read view: the accepted (first) hit, as a pi-event: document with its content.
    assert out["read"]["uri"].startswith(f"{refs[0]}") or out["read"]["uri"] == refs[0]
    assert out["read"]["logged"]["ref"] == refs[0]
    text = out["read"]["text"].replace("\xa0", " ")
    assert "Content" in text and refs[0] in text, text[:2000]

    # Copy Reference, then Previous (append order) and Next (branch order) from the read view.
    assert out["copy"]["text"] == refs[0]
    session_id, entry_id = refs[0].removeprefix("pi-event:").split("/")
    source = next(fx.agent.rglob(f"*_{session_id}.jsonl")).read_text().splitlines()
    line = out["read"]["logged"]["line"]
    assert json.loads(source[line - 1])["id"] == entry_id
    previous_id = json.loads(source[line - 2])["id"]
    assert out["previous"]["ref"] == f"pi-event:{session_id}/{previous_id}", out["previous"]
    assert "order=branch" not in out["previous"]["uri"]
    assert out["next"]["ref"] == refs[0] and "order=branch" in out["next"]["uri"], out["next"]

    # Reveal Source Line from the read view: the entry's line.
    assert out["reveal"]["uri"].endswith(".jsonl") and out["reveal"]["line"] == line

    # A 9000-character result is cut at 4000 in the view; Show More widens the window.
    long_ref = f"pi-event:{fx.b.session_id}/{fx.long_id}"
    assert out["long"]["more"] is True and "length=" not in out["long"]["uri"]
    assert out["longer"]["ref"] == long_ref and "length=40000" in out["longer"]["uri"]
    assert out["longer"]["more"] is False, out["longer"]

    # Trace: at least the event itself and its parent section.
    trace = out["trace"]["logged"]
    assert trace and trace["ref"] == refs[0]
    assert any(s.startswith("Event:") for s in trace["sections"])
    check_readable(out["trace"]["rows"])

    # Ctrl+O: the JSONL file at the entry's line.
    jsonl = out["jsonl"]
    assert jsonl["opened"]["uri"].endswith(".jsonl")
    line = jsonl["opened"]["line"]
    assert f"Ln {line}," in jsonl["cursor"], jsonl
    src = Path(jsonl["opened"]["uri"].removeprefix("file://"))
    first_ref = jsonl["expected"]
    entry_id = first_ref.rsplit("/", 1)[1]
    assert json.loads(src.read_text().splitlines()[line - 1])["id"] == entry_id
    # Copy Reference there: the event at the JSONL line, as the server names it.
    assert out["jsonlCopy"]["text"] == first_ref, out["jsonlCopy"]

    # Hover on the reference in note.md: the server's preview.
    hover = out["hover"]
    assert "fix the flaky websocket reconnect test" in hover, hover
    assert "open source line" in hover, hover
    # Reindex: nothing changed since startup.
    assert out["reindex"]["changedSessions"] == 0 and isinstance(out["reindex"]["generation"], int)
    assert "reindexed" in out["reindexToast"]

    # Filters picker, kind tool.call, empty query: the newest tool calls (page size 3).
    calls = {f"pi-event:{fx.a.session_id}/{fx.a.ids[i]}" for i in (3, 5, 7)}
    calls |= {f"pi-event:{fx.b.session_id}/{fx.b.ids[i]}" for i in (1, 4)}
    kind_refs = out["kindFilter"]["refs"]
    assert kind_refs and set(kind_refs) <= calls, kind_refs
    assert "kind: tool.call" in out["kindTitle"]

    # Errors only (title bar toggle), empty query: exactly the failed bash result.
    assert out["errorsOnly"]["refs"] == [f"pi-event:{fx.a.session_id}/{fx.a.ids[6]}"], out["errorsOnly"]
    assert "errors only" in out["errorsTitle"]
    for name in ("search", "read", "trace", "jsonl", "hover", "paging", "kind-filter", "errors",
                 "readme"):
        assert (ARTIFACTS / f"{name}.png").exists(), name


def test_a_query_left_as_typed_is_read_for_its_meaning(tmp_path: Path) -> None:
    """Typing paused on two words, the last one still a prefix: the picker asks once more
    `settled`, and shows that order: the server's own for the settled query."""
    query = "websocket reconn"
    with running_code_server(tmp_path, tag="-settle", **{"piEvents.search.settleMs": 400}) as (
            fx, url, tmp):
        out = run_driver(EXT / "test" / "e2e" / "drive-settle.mjs", tmp, "settle",
                         {"url": url, "query": query})
    from pi_event_search.core.authz import Scope
    from pi_event_search.query.search import Filters
    from pi_event_search.service.engine import Engine

    engine = Engine.open(tmp / "index.sqlite3", [str(fx.agent / "sessions")])
    scope = Scope.of([str(fx.ws)])

    def refs(settled: bool) -> list[str]:
        page = engine.search(query, Filters(), scope, limit=3, prefix_last=True, settled=settled)
        return [h["ref"] for h in page.hits]

    assert out["typed"]["refs"] == refs(False), out["typed"]
    assert out["settled"]["refs"] == refs(True), out["settled"]
    assert out["rows"] == out["settled"]["rows"]
    assert set(out["settled"]["refs"]) <= fx.visible_refs()


def test_server_not_installed_message(tmp_path: Path) -> None:
    """An interpreter without the server: the message names it and offers the fix."""
    python = shutil.which("python3", path="/usr/bin") or "/usr/bin/python3"
    if not Path(python).exists():
        pytest.skip("no /usr/bin/python3 to stand for an interpreter without the server")
    probe = subprocess.run([python, "-c", "import pi_event_search"], capture_output=True)
    if probe.returncode == 0:
        pytest.skip(f"{python} has pi_event_search installed")
    settings = {"piEvents.serverCommand": python}
    with running_code_server(tmp_path, "-not-installed", **settings) as (fx, url, tmp):
        out = drive(url, tmp, fx, mode="notInstalled")
    assert f"not installed for {python}" in out["toast"], out["toast"]
    assert "piEvents.serverCommand" in out["toast"]
    assert {"Open Settings", "Copy Install Command", "Show Log"} <= set(out["buttons"]), out
    assert (ARTIFACTS / "not-installed.png").exists()
