"""File life cycle: append, rewrite (v1 -> v3 migration with new ids), truncate, replace, delete,
re-create, rename, a directory that disappears and comes back, an unreadable file, symlink loops.
After each step the incremental index equals a clean index of what is on disk, or keeps its last
known-good state where the engine says so (status stale / unavailable)."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from builder import SessionBuilder, encoded_dir, sample_session
from engine_support import ALL, hits, snapshot
from reliability.relsupport import (
    FIGURES,
    clean_state,
    full_state,
    guard_cmd,
    guard_env,
    open_engine,
    size,
    violations,
)
from support import PiHome, tree_digest

RANDOM_STEPS = size(60, 600)
SEED = int(os.environ.get("PI_EVENT_SEARCH_SEED", "20260515"))


class World:
    """The sessions on disk, an incremental engine over them, and the clean reference."""

    def __init__(self, home: PiHome) -> None:
        self.home = home
        self.archive = home.root / "archive"
        self.archive.mkdir()
        self.engine = open_engine(home.sessions, home.index, [str(self.archive)])
        self.steps = 0
        self.known_good = 0

    def refresh(self) -> None:
        before = tree_digest(self.home.root / "agent"), tree_digest(self.archive)
        self.engine.refresh()
        assert (tree_digest(self.home.root / "agent"), tree_digest(self.archive)) == before

    def clean(self) -> tuple[Any, ...]:
        return clean_state(self.home.sessions, self.home.root / "clean.sqlite3", [str(self.archive)])

    def equal_to_clean(self, step: str) -> None:
        self.refresh()
        got = full_state(self.home.index)
        want = self.clean()
        assert got == want, f"after {step}: the index differs from a clean index of the disk"
        self.steps += 1
        FIGURES.add("life cycle", "steps compared with a clean index")

    def keeps_last_good(self, step: str, key: str, session_id: str) -> None:
        before = snapshot(self.engine)
        self.refresh()
        assert snapshot(self.engine) == before, f"after {step}: last known-good index kept"
        listed = {s["sessionId"] for s in self.engine.status(None)[key]}
        assert session_id in listed, f"after {step}: status lists {session_id} as {key}"
        self.steps += 1
        FIGURES.add("life cycle", f"steps keeping last known-good ({key})")


def _v1_session(sessions: Path, cwd: str, texts: list[str]) -> tuple[Path, str]:
    sb = SessionBuilder(sessions, cwd, version=None)
    for t in texts:
        sb.user(t)
        sb.assistant(f"reply to {t}")
    return sb.path, sb.session_id


def _migrate_to_v3(path: Path) -> None:
    """What Pi does on first open by a newer version: rewrite the file with new ids."""
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    header, entries = lines[0], lines[1:]
    header["version"] = 3
    out = [header]
    parent = None
    for i, entry in enumerate(entries):
        entry = {"type": entry["type"], "id": f"{i + 1:08x}", "parentId": parent,
                 **{k: v for k, v in entry.items() if k != "type"}}
        parent = entry["id"]
        out.append(entry)
    path.write_text("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in out))


def test_scripted_life_cycle(pi_home: PiHome, tmp_path: Path) -> None:
    w = World(pi_home)
    s = pi_home.sessions
    a = sample_session(s, "/home/dev/a")
    b_path, b_id = _v1_session(s, "/home/dev/b", ["old style one", "two"])
    c = sample_session(w.archive, "/home/dev/c")
    w.equal_to_clean("create (v3, v1, archive)")

    a.user("appended question about sockets")
    a.assistant("partial", newline=False)
    w.equal_to_clean("append with a torn tail")
    a.write_raw(b"\n")
    w.equal_to_clean("torn tail completed")

    _migrate_to_v3(b_path)
    w.equal_to_clean("v1 -> v3 migration with new ids")
    assert hits(w.engine, "old style one")[0]["entryId"] == "00000001"

    lines = a.path.read_bytes().splitlines(keepends=True)
    a.path.write_bytes(b"".join(lines[:6]))
    w.equal_to_clean("truncate to whole lines")
    a.path.write_bytes(b"".join(lines[:6]) + lines[6][:25])
    w.equal_to_clean("truncate inside a line")

    a.path.unlink()
    a2 = SessionBuilder(s, "/home/dev/a", session_id=a.session_id)
    a2.user("a brand new body for a")
    assert a2.path == a.path
    w.equal_to_clean("replace (new inode, same name and id)")

    tmp = a.path.with_suffix(".tmp")
    tmp.write_bytes(a.path.read_bytes() + a2.dumps({"type": "message", "id": "ffff0001",
                                                    "parentId": a2.leaf, "message": {
                                                        "role": "user", "content": "atomic"}}) + b"\n")
    os.replace(tmp, a.path)
    w.equal_to_clean("atomic replace by rename")

    saved = b_path.read_bytes()
    b_path.unlink()
    w.equal_to_clean("delete")
    b_path.write_bytes(saved)
    w.equal_to_clean("re-create")

    renamed = a.path.with_name("renamed_" + a.path.name)
    a.path.rename(renamed)
    w.equal_to_clean("rename in place")
    other = s / encoded_dir("/home/dev/elsewhere")
    other.mkdir()
    moved = other / renamed.name
    renamed.rename(moved)
    w.equal_to_clean("move to another project directory")

    project = b_path.parent
    backup = tmp_path / "b-backup"
    shutil.move(str(project), backup)
    w.equal_to_clean("project directory disappears (root readable: removed)")
    shutil.move(str(backup), project)
    w.equal_to_clean("project directory comes back")

    unmounted = tmp_path / "unmounted"
    w.archive.rename(unmounted)
    w.keeps_last_good("archive root disappears", "unavailable", c.session_id)
    unmounted.rename(w.archive)
    w.equal_to_clean("archive root comes back")

    good = c.path.read_bytes()
    c.path.write_bytes(b"\x00\xffnot json at all\n")
    w.keeps_last_good("garbage replacement", "stale", c.session_id)
    c.path.write_bytes(good)
    w.equal_to_clean("garbage repaired")

    (s / "loop.jsonl").symlink_to(s / "loop.jsonl")
    (s / "loopdir").symlink_to(s / "loopdir")
    (s / "up").symlink_to(s)
    (s / "dangling.jsonl").symlink_to(s / "nowhere.jsonl")
    project2 = s / encoded_dir("/home/dev/a")
    (project2 / "cycle").symlink_to(project2)
    w.equal_to_clean("symlink loops and dangling links")
    for p in ("loop.jsonl", "loopdir", "up", "dangling.jsonl"):
        (s / p).unlink()
    (project2 / "cycle").unlink()

    (s / "empty.jsonl").write_bytes(b"")
    (s / "header-only.jsonl").write_text(json.dumps({"type": "session", "version": 3, "id": "ho",
                                                     "cwd": "/home/dev/h"}) + "\n")
    (s / "dir.jsonl").mkdir()
    w.equal_to_clean("empty file, header-only file, a directory named .jsonl")

    live_backup = tmp_path / "live-backup"
    s.rename(live_backup)
    w.keeps_last_good("Pi's sessions directory disappears", "unavailable", a2.session_id)
    live_backup.rename(s)
    w.equal_to_clean("Pi's sessions directory comes back")
    FIGURES.add("life cycle", "scripted sequences")


DROP_DAC = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"]


def _unprivileged_prefix(tmp: Path) -> list[str] | None:
    """A command prefix under which chmod 000 blocks reads: none needed for a normal user; for
    root, setpriv drops CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH. None when neither works."""
    probe = tmp / "probe"
    probe.write_text("x")
    probe.chmod(0)
    try:
        for prefix in ([], DROP_DAC):
            try:
                rc = subprocess.run([*prefix, sys.executable, "-c",
                                     f"open({str(probe)!r}).read()"], capture_output=True).returncode
            except OSError:
                continue
            if rc != 0:
                return prefix
        return None
    finally:
        probe.chmod(0o600)


def test_unreadable_file_keeps_last_known_good(pi_home: PiHome, tmp_path: Path) -> None:
    prefix = _unprivileged_prefix(tmp_path)
    if prefix is None:
        pytest.skip("chmod 000 blocks nothing here (root, and setpriv cannot drop "
                    "CAP_DAC_OVERRIDE), so an unreadable file cannot be made")
    log = tmp_path / "guard.log"
    env = guard_env(pi_home.env(), [pi_home.agent], log)

    def run(*args: str) -> Any:
        proc = subprocess.run([*prefix, *guard_cmd(*args)], env=env, capture_output=True, timeout=120)
        assert proc.returncode == 0, proc.stderr.decode()
        return json.loads(proc.stdout) if "--json" in args else None

    def events(session_id: str) -> int:
        return len(run("search", "--all", "--json", "--session", session_id, "--limit", "200")["hits"])

    a = sample_session(pi_home.sessions, "/home/dev/a")
    b = sample_session(pi_home.sessions, "/home/dev/b")
    run("index")
    kept = events(a.session_id)
    before = snapshot_of(pi_home)
    a.user("appended while unreadable")
    a.path.chmod(0)
    try:
        run("index")
        status = run("status", "--all", "--json")
        stale = {s["sessionId"]: s["error"] or "" for s in status["stale"]}
        assert "unreadable" in stale.get(a.session_id, ""), status
        assert snapshot_of(pi_home) == before, "last known-good kept while unreadable"
        assert events(b.session_id) > 0, "other sessions unaffected"
    finally:
        a.path.chmod(0o644)
    run("index")
    assert not run("status", "--all", "--json")["stale"]
    assert events(a.session_id) == kept + 1
    assert full_state(pi_home.index) == clean_state(pi_home.sessions, pi_home.root / "clean.sqlite3")
    assert not violations(log), violations(log)
    FIGURES.add("life cycle", "unreadable-file steps" + (" (root without DAC capabilities)"
                                                         if prefix else ""))


def snapshot_of(home: PiHome) -> Any:
    e = open_engine(home.sessions, home.index)
    try:
        return snapshot(e)
    finally:
        e.close()


# -- random sequences --------------------------------------------------------------------------
Op = Callable[[random.Random], str | None]


def test_random_life_cycles(pi_home: PiHome, tmp_path: Path) -> None:
    w = World(pi_home)
    rng = random.Random(SEED)
    live: list[SessionBuilder] = []
    gone: dict[Path, bytes] = {}
    dirs = [pi_home.sessions, w.archive]

    def new() -> str:
        folder = rng.choice(dirs)
        sb = SessionBuilder(folder, f"/home/dev/r{rng.randrange(4)}", version=rng.choice([None, 3]))
        sb.user(f"random session {len(live)} first question")
        sb.assistant("first answer")
        live.append(sb)
        return "create"

    def pick() -> SessionBuilder | None:
        alive = [sb for sb in live if sb.path.exists()]
        return rng.choice(alive) if alive else None

    def append() -> str | None:
        sb = pick()
        if sb is None:
            return None
        for _ in range(rng.randrange(1, 4)):
            sb.user(f"appended {rng.randrange(10**6)}", newline=rng.random() > 0.2)
        return "append"

    def finish_line() -> str | None:
        sb = pick()
        if sb is None or sb.path.read_bytes().endswith(b"\n"):
            return None
        sb.write_raw(b"\n")
        return "complete a torn line"

    def truncate() -> str | None:
        sb = pick()
        if sb is None:
            return None
        data = sb.path.read_bytes()
        sb.path.write_bytes(data[: rng.randrange(len(data) // 2, len(data) + 1)])
        return "truncate"

    def migrate() -> str | None:
        sb = pick()
        if sb is None or not sb.path.read_bytes().endswith(b"\n"):
            return None
        try:
            _migrate_to_v3(sb.path)
        except (json.JSONDecodeError, KeyError):
            return None
        return "rewrite (migration)"

    def delete() -> str | None:
        sb = pick()
        if sb is None:
            return None
        gone[sb.path] = sb.path.read_bytes()
        sb.path.unlink()
        return "delete"

    def recreate() -> str | None:
        if not gone:
            return None
        path = rng.choice(sorted(gone))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(gone.pop(path))
        return "re-create"

    def rename() -> str | None:
        sb = pick()
        if sb is None:
            return None
        target = rng.choice(dirs) / f"renamed-{rng.randrange(10**6)}.jsonl"
        sb.path.rename(target)
        sb.path = target
        return "rename"

    ops = [new, append, append, finish_line, truncate, migrate, delete, recreate, rename]
    new()
    w.equal_to_clean("start")
    done = 0
    while done < RANDOM_STEPS:
        name = rng.choice(ops)()
        if name is None:
            continue
        w.equal_to_clean(f"random step {done}: {name}")
        done += 1
    FIGURES.add("life cycle", "random steps", done)
    assert hits(w.engine, "first answer", ALL) or not any(sb.path.exists() for sb in live)
