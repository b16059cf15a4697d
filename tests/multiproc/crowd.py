"""Many processes on one index at once: servers (over stdio, bench/common/lspclient.py's client) and
CLIs, started together, as when a user opens several windows and Pi sessions on a new machine."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common.lspclient import LspClient, RpcError  # noqa: E402

from builder import SessionBuilder  # noqa: E402
from support import PiHome  # noqa: E402

WORD = "zephyrquartz"
SERVE = [sys.executable, "-m", "pi_event_search", "serve"]


def history(home: PiHome, sessions: int = 40, turns: int = 60) -> Path:
    """A history big enough that a first index takes a moment; WORD only in the newest session."""
    newest = None
    for i in range(sessions):
        sb = SessionBuilder(home.sessions, "/home/dev/proj", name_seed=f"crowd-{i}")
        for j in range(turns):
            sb.user(f"step {j} of session {i}: compile the websocket module and run the tests")
            sb.bash(f"npm test -- ws{j}", "PASS src/ws.test.ts\n" * 20, exit_code=0)
        newest = sb
    assert newest is not None
    newest.user(f"the {WORD} incident")
    return newest.path


@dataclass
class Outcome:
    name: str
    first_hit_s: float | None = None  # from its start
    errors_after_hit: list[str] = field(default_factory=list)
    errors_before_hit: list[str] = field(default_factory=list)
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.first_hit_s is not None and not self.errors_after_hit


def _server(home: PiHome, out: Outcome, bound: float, start: threading.Event,
            ready: threading.Barrier) -> None:
    """Started and initialized before the barrier; `initialized` (where a server opens its
    index) goes out to every server at the same moment, as when windows open together."""
    client = LspClient(SERVE, home.env())
    try:
        client.request("initialize", {"processId": os.getpid(), "rootUri": None,
                                      "workspaceFolders": [{"uri": "file:///home/dev/proj",
                                                            "name": "proj"}],
                                      "initializationOptions": {}, "capabilities": {}})
    finally:
        ready.wait()
    start.wait()
    t0 = time.monotonic()
    try:
        client.notify("initialized", {})
        end = t0 + bound
        while time.monotonic() < end:
            try:
                hits = client.request("piEvents/search", {"query": WORD}, timeout=bound)["hits"]
            except RpcError as exc:
                (out.errors_after_hit if out.first_hit_s is not None
                 else out.errors_before_hit).append(str(exc))
                hits = []
            if hits and out.first_hit_s is None:
                out.first_hit_s = time.monotonic() - t0
                end = time.monotonic() + 1.0  # a second more of searches: no errors after
            time.sleep(0.05)
    except Exception as exc:  # noqa: BLE001 - recorded as this process's outcome
        out.detail = f"{type(exc).__name__}: {exc}"
    finally:
        client.close()


def _cli(home: PiHome, out: Outcome, bound: float, start: threading.Event,
         ready: threading.Barrier) -> None:
    ready.wait()
    start.wait()
    t0 = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-m", "pi_event_search", "search", WORD, "--root",
                               "/home/dev/proj", "--json"], env=home.env(), capture_output=True,
                              timeout=bound, check=False)
    except subprocess.TimeoutExpired:
        out.detail = f"no answer in {bound} s"
        return
    if done.returncode == 0 and WORD.encode() in done.stdout:
        out.first_hit_s = time.monotonic() - t0
    else:
        out.detail = f"exit {done.returncode}: {done.stderr.decode(errors='replace')[-300:]}"


def crowd(home: PiHome, servers: int = 8, clis: int = 2, bound: float = 60.0) -> list[Outcome]:
    """Start them all at once on the (empty) index; each searches until it has hits."""
    start = threading.Event()
    ready = threading.Barrier(servers + clis + 1)
    outcomes: list[Outcome] = []
    threads: list[threading.Thread] = []
    for i in range(servers + clis):
        out = Outcome(f"server {i}" if i < servers else f"cli {i - servers}")
        outcomes.append(out)
        target: Any = _server if i < servers else _cli
        threads.append(threading.Thread(target=target, args=(home, out, bound, start, ready)))
    for th in threads:
        th.start()
    ready.wait()
    start.set()
    for th in threads:
        th.join()
    return outcomes


def fresh_home(root: Path) -> PiHome:
    agent = root / "agent"
    home = PiHome(root, agent, agent / "sessions", root / "index" / "index.sqlite3")
    home.sessions.mkdir(parents=True)
    return home


if __name__ == "__main__":  # the "before/after" probe: python tests/multiproc/crowd.py ROUNDS
    import shutil
    import tempfile

    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    base = Path(tempfile.mkdtemp(prefix="pies-crowd-"))
    corpus = fresh_home(base / "corpus")
    history(corpus)
    starts = failures = 0
    for r in range(rounds):
        home = fresh_home(base / f"r{r}")
        shutil.rmtree(home.sessions)
        shutil.copytree(corpus.sessions, home.sessions)
        results = crowd(home)
        bad = [o for o in results if not o.ok]
        starts += len(results)
        failures += len(bad)
        worst = max((o.first_hit_s or 0) for o in results)
        print(f"round {r}: {len(bad)} failed; slowest first hit {worst:.1f} s", flush=True)
        for o in bad:
            print(f"  {o.name}: first hit {o.first_hit_s}, errors after hit "
                  f"{o.errors_after_hit[:1]} ({len(o.errors_after_hit)}), "
                  f"before {o.errors_before_hit[:1]} ({len(o.errors_before_hit)}) {o.detail}",
                  flush=True)
        shutil.rmtree(base / f"r{r}")
    print(f"{rounds} rounds, {starts} starts, {failures} failures")
    shutil.rmtree(base)
