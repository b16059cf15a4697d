"""Crash safety: SIGKILL the indexer (a real `python -m pi_event_search index` child) at random
moments of a cold index and of an index of appends. After every kill the index opens, SQLite's and
FTS5's integrity checks pass, every session is either untouched or completely applied, and the next
run ends equal to a clean index of the same files."""

from __future__ import annotations

import os
import random
import shutil
import signal
import sqlite3
import subprocess
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from builder import SessionBuilder
from engine_support import snapshot
from reliability.relsupport import (
    FIGURES,
    full_state,
    guard_cmd,
    guard_env,
    integrity,
    open_engine,
    orphans,
    per_session,
    size,
    timeout,
    violations,
)
from support import tree_digest

SESSIONS = 50
TURNS = 4
APPEND_TURNS = 12
NEW_SESSIONS = 8
TRIALS = size(25, 250)  # per phase (cold, appends): 50 in CI, 500 in soak
WORKERS = 2  # trials run in parallel, each worker on its own copy of the corpus
SEED = int(os.environ.get("PI_EVENT_SEARCH_SEED", "20260515"))


def _turns(sb: SessionBuilder, i: int, start: int, count: int) -> None:
    for j in range(start, start + count):
        sb.user(f"crash corpus question {i}.{j}: why does the websocket reconnect loop spin? "
                + "context words " * 30)
        call = f"call_{i}_{j}"
        sb.assistant(f"Investigating {i}.{j}", thinking="hidden",
                     tool_calls=[(call, "bash", {"command": f"npm test -- case{j}"})])
        sb.tool_result(call, "bash", f"FAIL case{j}\n" + "stack frame line\n" * 30,
                       is_error=j % 3 == 0)
        if j % 4 == 0:
            sb.bash(f"git log -n {j}", "commit abc\n" * 10)


class Corpus:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.agent = root / "agent"
        self.sessions = self.agent / "sessions"
        self.sessions.mkdir(parents=True)
        rng = random.Random(SEED)
        builders = []
        for i in range(SESSIONS):
            sb = SessionBuilder(self.sessions, f"/home/dev/proj{i % 6}")
            _turns(sb, i, 0, TURNS)
            builders.append(sb)
        self.a_sizes = {sb.path: sb.path.stat().st_size for sb in builders}
        self.index_a = root / "clean-a.sqlite3"
        self.state_a = self._clean(self.index_a)
        self.schema = sqlite3.connect(self.index_a).execute("PRAGMA user_version").fetchone()[0]
        for i, sb in enumerate(builders):  # state B: appends everywhere, a few torn tails
            _turns(sb, i, TURNS, APPEND_TURNS)
            if rng.random() < 0.2:
                sb.assistant("still streaming when the crash happened", newline=False)
        self.suffix = {p: p.read_bytes()[a:] for p, a in self.a_sizes.items()}
        self.new_files: dict[Path, bytes] = {}
        for i in range(NEW_SESSIONS):
            sb = SessionBuilder(self.sessions, f"/home/dev/new{i}")
            _turns(sb, 1000 + i, 0, TURNS)
            self.new_files[sb.path] = sb.path.read_bytes()
        self.index_b = root / "clean-b.sqlite3"
        self.state_b = self._clean(self.index_b)
        self.full_b = full_state(self.index_b)
        self.digest_b = tree_digest(self.agent)
        self.log = root / "guard.log"

    def _clean(self, index: Path) -> dict[str, tuple[Any, ...]]:
        e = open_engine(self.sessions, index)
        e.refresh()
        state = per_session(e.conn)
        e.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        e.close()
        return state

    def env(self, index: Path) -> dict[str, str]:
        base = {**os.environ, "PI_CODING_AGENT_DIR": str(self.agent),
                "PI_EVENT_SEARCH_INDEX": str(index), "XDG_CACHE_HOME": str(self.root / "cache")}
        return guard_env(base, [self.agent], self.log)

    def restore_a(self, index: Path) -> None:
        """Files back to state A, the index to a clean index of A."""
        for path, a in self.a_sizes.items():
            os.truncate(path, a)
        for path in self.new_files:
            path.unlink(missing_ok=True)
        shutil.copyfile(self.index_a, index)

    def apply_b(self) -> None:
        for path, data in self.suffix.items():
            with open(path, "ab") as fh:
                fh.write(data)
        for path, data in self.new_files.items():
            path.write_bytes(data)


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> list[Corpus]:
    roots = [tmp_path_factory.mktemp("crash") for _ in range(WORKERS)]  # mktemp is not thread-safe
    with ThreadPoolExecutor(WORKERS) as pool:
        return list(pool.map(Corpus, roots))


def _parallel(corpora: list[Corpus], trial: Callable[[Corpus, int], str]) -> dict[str, int]:
    """TRIALS trials spread over the workers; outcome counts."""
    outcomes: dict[str, int] = {}

    def worker(w: int) -> list[str]:
        return [trial(corpora[w], i) for i in range(w, TRIALS, WORKERS)]

    with ThreadPoolExecutor(WORKERS) as pool:
        for results in pool.map(worker, range(WORKERS)):
            for outcome in results:
                outcomes[outcome] = outcomes.get(outcome, 0) + 1
    return outcomes


def _drop(index: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{index}{suffix}").unlink(missing_ok=True)


def _start(c: Corpus, index: Path, env: dict[str, str] | None = None
           ) -> tuple[subprocess.Popen[bytes], float]:
    """Start the indexer; return it once it has created or opened the index (or exited)."""
    existed = index.exists()
    proc = subprocess.Popen(guard_cmd("index"), env=env or c.env(index), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    wal = Path(f"{index}-wal")
    while proc.poll() is None and not (wal.exists() if existed else index.exists()):
        time.sleep(0.002)
    return proc, time.monotonic()


def _timed_run(c: Corpus, index: Path) -> float:
    """Seconds from the index being opened to the indexer's exit (the window kills aim at)."""
    proc, opened = _start(c, index)
    assert proc.wait(120) == 0
    return time.monotonic() - opened


def _kill_after(c: Corpus, index: Path, delay: float, from_launch: bool, commit: float | None) -> bool:
    """SIGKILL the indexer `delay` seconds after it opened the index (or after its launch);
    True when it was still running. `commit`: seconds between batch commits (None: default)."""
    env = c.env(index)
    if commit is not None:
        env["PIES_COMMIT_SECONDS"] = str(commit)
    if from_launch:
        proc = subprocess.Popen(guard_cmd("index"), env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
    else:
        proc, _ = _start(c, index, env)
    time.sleep(delay)
    running = proc.poll() is None
    if running:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait(60)
    return running


def _check_after_kill(c: Corpus, index: Path, allowed: list[dict[str, tuple[Any, ...]]]) -> str:
    """The killed index opens and is consistent; each session is in one of the allowed states.
    Returns how far the killed run got: 'none', 'partial' or 'complete'."""
    if not index.exists():
        return "none"
    raw = sqlite3.connect(index)
    version = raw.execute("PRAGMA user_version").fetchone()[0]
    raw.close()
    assert version in (0, c.schema), (
        f"index schema {version}, corpus built with {c.schema}: the engine's code changed while "
        "the suite ran (an old schema is rebuilt from scratch); run again")
    e = open_engine(c.sessions, index)  # opening must work (WAL recovery, schema check)
    try:
        integrity(e.conn)
        assert not orphans(e.conn), orphans(e.conn)
        got = per_session(e.conn)
        moved = 0
        for session_id, state in got.items():
            options = [a[session_id] for a in allowed if session_id in a]
            assert state in options, f"session {session_id} is half-applied"
            moved += state != options[0]
        for session_id in allowed[0]:
            assert session_id in got or session_id not in allowed[-1], f"{session_id} lost"
        last = allowed[-1]
        if got == last:
            return "complete"
        return "partial" if moved or len(got) != len(allowed[0]) else "none"
    finally:
        e.close()


def _finish_and_compare(c: Corpus, index: Path) -> None:
    e = open_engine(c.sessions, index)
    e.refresh()
    e.close()
    assert full_state(index) == c.full_b, "the run after a crash must end equal to a clean index"


@pytest.mark.timeout(timeout(240, 3600))
def test_sigkill_during_cold_index(corpora: list[Corpus]) -> None:
    durations = [_timed_run(c, c.root / "timed-cold.sqlite3") for c in corpora]
    duration = max(durations)

    def trial(c: Corpus, i: int) -> str:
        rng = random.Random(SEED + i)
        index = c.root / "cold.sqlite3"
        _drop(index)
        launch = rng.random() < 0.1  # some kills during start-up and schema creation
        delay = rng.uniform(0.0, 0.6 if launch else duration * 1.05)
        commit = None if i % 3 == 0 else rng.choice([0.01, 0.03, 0.1])
        running = _kill_after(c, index, delay, launch, commit)
        FIGURES.add("crash", "kills with the default 0.5 s batch commits", int(commit is None))
        # cold: a session is absent or completely indexed
        outcome = _check_after_kill(c, index, [{}, c.state_b])
        FIGURES.add("crash", "cold trials")
        FIGURES.add("crash", "SIGKILLs delivered while running", int(running))
        FIGURES.add("crash", f"cold kills leaving {outcome} index")
        _finish_and_compare(c, index)
        return outcome

    outcomes = _parallel(corpora, trial)
    for c in corpora:
        assert tree_digest(c.agent) == c.digest_b
        assert not violations(c.log), violations(c.log)
    c = corpora[0]
    FIGURES.set("crash", "corpus sessions (cold)", SESSIONS + NEW_SESSIONS)
    FIGURES.set("crash", "corpus events (cold)", sum(len(s[7]) for s in c.state_b.values()))
    FIGURES.set("crash", "cold index duration s", round(duration, 2))
    FIGURES.add("crash", "sessions lost or half-applied", 0)
    assert outcomes.get("partial", 0) > 0 or TRIALS < 10, f"no kill landed mid-index: {outcomes}"


@pytest.mark.timeout(timeout(240, 3600))
def test_sigkill_while_indexing_appends(corpora: list[Corpus]) -> None:
    durations = []
    for c in corpora:
        index = c.root / "timed-append.sqlite3"
        c.restore_a(index)
        c.apply_b()
        durations.append(_timed_run(c, index))
    duration = max(durations)

    def trial(c: Corpus, i: int) -> str:
        rng = random.Random(SEED + 1000 + i)
        index = c.root / "append.sqlite3"
        _drop(index)
        c.restore_a(index)
        c.apply_b()
        before = tree_digest(c.agent)
        launch = rng.random() < 0.1
        delay = rng.uniform(0.0, 0.6 if launch else duration * 1.05)
        commit = None if i % 3 == 0 else rng.choice([0.01, 0.03, 0.1])
        running = _kill_after(c, index, delay, launch, commit)
        FIGURES.add("crash", "kills with the default 0.5 s batch commits", int(commit is None))
        assert tree_digest(c.agent) == before
        # appends: a session is in state A or B, nothing in between (new sessions: absent or B)
        outcome = _check_after_kill(c, index, [c.state_a, c.state_b])
        FIGURES.add("crash", "append trials")
        FIGURES.add("crash", "SIGKILLs delivered while running", int(running))
        FIGURES.add("crash", f"append kills leaving {outcome} index")
        _finish_and_compare(c, index)
        return outcome

    outcomes = _parallel(corpora, trial)
    for c in corpora:
        assert not violations(c.log), violations(c.log)
    c = corpora[0]
    FIGURES.set("crash", "append index duration s", round(duration, 2))
    FIGURES.set("crash", "appended events per trial",
                sum(len(s[7]) for s in c.state_b.values()) - sum(len(s[7]) for s in c.state_a.values()))
    assert outcomes.get("partial", 0) > 0 or TRIALS < 10, f"no kill landed mid-index: {outcomes}"


def test_clean_corpus_snapshot_is_stable(corpora: list[Corpus], tmp_path: Path) -> None:
    """The reference itself: two clean indexes of the same files are equal (engine_support.snapshot)."""
    a = open_engine(corpora[0].sessions, tmp_path / "one.sqlite3")
    a.refresh()
    b = open_engine(corpora[0].sessions, tmp_path / "two.sqlite3")
    b.refresh()
    assert snapshot(a) == snapshot(b)
