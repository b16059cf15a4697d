"""Security and the read-only promise.

- The index file (and SQLite's -wal/-shm beside it) is created readable by the user only (0600),
  in a directory created 0700, whatever the umask, by the CLI and by the server.
- Under strace (every file system call, all threads and children), pi-event-search never opens a
  session file for writing nor changes anything under the sessions directories; the sessions trees
  are byte-identical before and after. The audit-hook guard (guard.py) checks the same in every
  other test of this suite.
- An index this process may not write (a read-only file system: a read-only bind mount; a
  directory without write permission, for a root bound by file modes) opens for reading: searches answer,
  nothing is created beside it, and the CLI, status and the language server say in one line that
  it cannot index.
- A session file this process may not read (mode 000, a root bound by file modes) is still found by
  what was indexed; reading its event says `cannot read <file> (permission denied)`.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from builder import sample_session
from pi_event_search.index import store
from reliability.relsupport import FIGURES, RawLsp
from support import PiHome, tree_digest


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _index_files(index: Path) -> list[Path]:
    return [p for p in (Path(f"{index}{x}") for x in ("", "-wal", "-shm", ".writer", ".users",
                                                     ".open.lock")) if p.exists()]


@pytest.mark.parametrize("umask", [0o000, 0o022, 0o077])
def test_cli_creates_a_private_index(pi_home: PiHome, umask: int) -> None:
    sample_session(pi_home.sessions, "/home/dev/p")
    cache = pi_home.root / "fresh-cache"
    env = {**pi_home.env(), "XDG_CACHE_HOME": str(cache)}
    env.pop("PI_EVENT_SEARCH_INDEX")
    proc = subprocess.run([sys.executable, "-m", "pi_event_search", "index"], env=env, umask=umask,
                          capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    index = cache / "pi-event-search" / f"index-v{store.SCHEMA_VERSION}.sqlite3"
    assert _mode(index.parent) == 0o700
    files = _index_files(index)
    assert index in files
    for p in files:
        assert _mode(p) == 0o600, f"{p.name} is {oct(_mode(p))}"
    # Which directories each process reads (index/wanted.py): private too; gone at exit.
    assert _mode(Path(f"{index}.dirs")) == 0o700
    assert list(Path(f"{index}.dirs").iterdir()) == []
    explicit = pi_home.root / "elsewhere" / "deeper" / "idx.sqlite3"
    proc = subprocess.run([sys.executable, "-m", "pi_event_search", "search", "--all", "--index",
                           str(explicit), "x"], env=env, umask=umask, capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    assert _mode(explicit.parent) == 0o700
    for p in _index_files(explicit):
        assert _mode(p) == 0o600, f"{p.name} is {oct(_mode(p))}"
    FIGURES.add("security", "index files checked 0600 (CLI)", len(files) + len(_index_files(explicit)))


def test_server_creates_a_private_index(pi_home: PiHome) -> None:
    sample_session(pi_home.sessions, "/home/dev/p")
    index = pi_home.root / "srv" / "index.sqlite3"
    client = RawLsp([sys.executable, "-m", "pi_event_search", "serve"], pi_home.env())
    try:
        client.initialize("/home/dev/p", {"indexPath": str(index)})
        assert "result" in client.call("piEvents/search", {"query": "websocket"})
        assert _mode(index.parent) == 0o700
        for p in _index_files(index):
            assert _mode(p) == 0o600, f"{p.name} is {oct(_mode(p))}"
    finally:
        client.close()
    FIGURES.add("security", "index files checked 0600 (server)", len(_index_files(index)))


# -- strace ------------------------------------------------------------------------------------
WRITE_FLAGS = re.compile(r"O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|O_APPEND")
MUTATING = re.compile(r"^(?:\[pid\s+\d+\]\s+)?(?:\d+\s+)?(rename|renameat2?|unlink|unlinkat|truncate|"
                      r"chmod|fchmodat|chown|fchownat|lchown|utimensat|utimes|mkdir|mkdirat|rmdir|link|"
                      r"linkat|symlink|symlinkat|setxattr|lsetxattr|removexattr)\(")
OPEN = re.compile(r"(?:openat|open|creat)\((?:AT_FDCWD|\d+)?,?\s*\"([^\"]*)\",\s*([A-Z_|]+)")


def _strace() -> list[str] | None:
    exe = shutil.which("strace")
    if exe is None:
        return None
    probe = subprocess.run([exe, "-f", "-qq", "-e", "trace=openat", "-o", "/dev/null", "true"],
                           capture_output=True)
    return [exe] if probe.returncode == 0 else None


def _violations(trace: str, guarded: list[Path]) -> tuple[list[str], int]:
    roots = [str(g) for g in guarded]
    bad: list[str] = []
    reads = 0
    for line in trace.splitlines():
        m = OPEN.search(line)
        if m is not None:
            path, flags = m.group(1), m.group(2)
            if any(path.startswith(r) for r in roots):
                if WRITE_FLAGS.search(flags):
                    bad.append(line)
                elif path.endswith(".jsonl"):
                    reads += 1
            continue
        if MUTATING.search(line) and any(f'"{r}' in line for r in roots):
            bad.append(line)
    return bad, reads


def test_strace_shows_no_write_to_session_files(pi_home: PiHome, tmp_path: Path) -> None:
    strace = _strace()
    if strace is None:
        pytest.skip("strace is not installed or may not trace here (ptrace refused); the audit-hook "
                    "guard of every other test still checks the read-only promise")
    archive = tmp_path / "archive"
    sb = sample_session(pi_home.sessions, "/home/dev/p")
    sample_session(archive, "/home/dev/p")
    torn = sample_session(pi_home.sessions, "/home/dev/q")
    torn.user("unterminated", newline=False)
    guarded = [pi_home.agent, archive]
    log = tmp_path / "strace.log"
    base = [*strace, "-f", "-qq", "-s", "4096", "-e",
            "trace=%file,%desc", "-o", str(log)]

    def run(*args: str) -> str:
        before = [tree_digest(g) for g in guarded]
        proc = subprocess.run([*base, sys.executable, "-m", "pi_event_search", *args, "--sessions-dir",
                               str(archive)], env=pi_home.env(), capture_output=True, timeout=300)
        assert proc.returncode == 0, proc.stderr.decode()[-2000:]
        assert [tree_digest(g) for g in guarded] == before, "sessions trees are byte-identical"
        return log.read_text()

    # the detector itself: a process that does append to a file under a guarded root is caught
    decoy = tmp_path / "decoy"
    decoy.mkdir()
    (decoy / "x.jsonl").write_text("{}\n")
    subprocess.run([*base, sys.executable, "-c", f"open({str(decoy / 'x.jsonl')!r}, 'a').close(); "
                    f"import os; os.rename({str(decoy / 'x.jsonl')!r}, {str(decoy / 'y.jsonl')!r})"],
                   check=True, timeout=60)
    caught, _ = _violations(log.read_text(), [decoy])
    assert len(caught) >= 2, caught
    traces = [run("index")]
    sb.user("appended after the first index")
    traces.append(run("index"))
    traces.append(run("search", "--all", "--json", "websocket"))
    ref = f"pi-event:{sb.session_id}/{sb.ids[2]}"
    traces.append(run("read", "--all", ref))
    traces.append(run("trace", "--all", ref))
    traces.append(run("status"))
    client = RawLsp([*base, sys.executable, "-m", "pi_event_search", "serve", "--sessions-dir",
                     str(archive)], pi_home.env())
    try:
        client.initialize("/home/dev/p")
        sb.user("appended while the server watches")
        before = [tree_digest(g) for g in guarded]
        for method, params in (("piEvents/search", {"query": "websocket"}), ("piEvents/read", {"ref": ref}),
                               ("piEvents/trace", {"ref": ref}), ("piEvents/status", {}),
                               ("piEvents/reindex", {})):
            assert "result" in client.call(method, params)
    finally:
        client.close()
    traces.append(log.read_text())
    bad: list[str] = []
    reads = 0
    for trace in traces:
        b, r = _violations(trace, guarded)
        bad += b
        reads += r
    assert reads > 0, "strace saw the session files being read (the check is live)"
    assert not bad, bad[:10]
    assert [tree_digest(g) for g in guarded] == before
    FIGURES.add("read-only", "strace runs (index, search, read, trace, status, serve)", len(traces))
    FIGURES.add("read-only", "session-file opens traced, all read-only", reads)
    FIGURES.add("read-only", "writes to session files", 0)


def test_audit_guard_catches_writes(tmp_path: Path) -> None:
    """The guard every other test relies on reports writes, renames and truncation under a
    guarded root (and ignores index files and reads)."""
    from reliability import guard

    root = tmp_path / "sessions"
    root.mkdir()
    target = root / "s.jsonl"
    target.write_text("{}\n")
    log = tmp_path / "guard.log"
    code = (f"import sys, os; sys.path.insert(0, {str(Path(guard.__file__).parent)!r}); import guard; "
            f"fd = os.open({str(log)!r}, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600); "
            f"sys.addaudithook(guard.make_hook([{str(root)!r}], "
            f"lambda l: os.write(fd, (l + '\\n').encode()))); "
            f"open({str(target)!r}).read(); open({str(root / 'i.sqlite3')!r}, 'w').close(); "
            f"open({str(target)!r}, 'a').close(); os.rename({str(target)!r}, {str(root / 'r.jsonl')!r}); "
            f"os.truncate({str(root / 'r.jsonl')!r}, 0)")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
    lines = log.read_text().splitlines()
    assert len(lines) == 3, lines
    assert "open('a'" in lines[0] and lines[1].startswith("os.rename") and lines[2].startswith("os.truncate")


# -- another user, a read-only file system -------------------------------------------------------
as_root = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None
                             or shutil.which("unshare") is None,
                             reason="runs pi-event-search as another user or in a private mount "
                                    "namespace: needs root, setpriv and unshare")


@pytest.fixture
def shared_home() -> Iterator[PiHome]:
    """A Pi home and index of their own, readable by everyone."""
    root = Path(tempfile.mkdtemp(prefix="pes-readonly-"))
    root.chmod(0o755)
    agent = root / "agent"
    home = PiHome(root, agent, agent / "sessions", root / "index" / "index.sqlite3")
    home.sessions.mkdir(parents=True)
    yield home
    shutil.rmtree(root)


# Root without the capabilities that pass over file modes: bound by them as any user is, yet able
# to run this checkout's venv wherever the checkout lies (user 65534 cannot enter a private one).
NO_DAC = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"]


def _as(how: str, home: PiHome) -> list[str]:
    """The prefix that runs a command as root bound by file modes, or as root with the index's
    directory mounted read-only (a bind mount in a private mount namespace: nothing else sees
    it)."""
    if how == "no-dac":
        return NO_DAC
    where = str(home.index.parent)
    return ["unshare", "-m", "sh", "-c", 'mount --bind -o ro "$0" "$0" && exec "$@"', where]


def _cli(prefix: list[str], home: PiHome, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*prefix, sys.executable, "-m", "pi_event_search", *args],
                          env={**home.env(), "HOME": str(home.root)}, capture_output=True, text=True,
                          timeout=120, cwd=home.root)


def _indexed_by_root(home: PiHome) -> None:
    """The index as its owner left it: written by root, readable by everyone, writable by root."""
    proc = _cli([], home, "index")
    assert proc.returncode == 0, proc.stderr
    for p in [home.index.parent, *home.index.parent.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)


@as_root
@pytest.mark.parametrize("how", ["read-only-mount", "no-dac"])
def test_an_index_it_cannot_write_opens_for_reading(shared_home: PiHome, how: str) -> None:
    home = shared_home
    sb = sample_session(home.sessions, "/home/dev/p")
    _indexed_by_root(home)
    if how == "no-dac":  # the owner's own write bits gone: a directory it may read, not write
        for p in [home.index.parent, *home.index.parent.rglob("*")]:
            p.chmod(0o555 if p.is_dir() else 0o444)
    files = sorted(p.name for p in home.index.parent.iterdir())
    prefix = _as(how, home)
    # The detector: this prefix may not write there.
    probe = subprocess.run([*prefix, "touch", str(home.index.parent / "probe")], capture_output=True,
                           text=True, timeout=60)
    assert probe.returncode != 0, probe.stderr
    why = ("the index is on a read-only file system" if how == "read-only-mount"
           else f"no permission to write {home.index.parent}")
    said = f"pi-event-search: cannot index: {why}; answering from the index as it is"

    found = _cli(prefix, home, "search", "--all", "--json", "websocket")
    assert found.returncode == 0, found.stderr
    assert found.stderr.splitlines() == [said]
    refs = {h["ref"] for h in json.loads(found.stdout)["hits"]}
    assert f"pi-event:{sb.session_id}/{sb.ids[2]}" in refs, refs

    ref = f"pi-event:{sb.session_id}/{sb.ids[2]}"
    read = _cli(prefix, home, "read", "--all", "--json", ref)
    assert read.returncode == 0, read.stderr
    assert "flaky websocket reconnect" in read.stdout

    state = _cli(prefix, home, "status", "--all", "--json")
    assert state.returncode == 0, state.stderr
    assert json.loads(state.stdout)["index"]["readOnly"] == said.removeprefix("pi-event-search: ")
    shown = _cli(prefix, home, "status", "--all")
    assert f"read-only  {said.removeprefix('pi-event-search: ')}" in shown.stdout.splitlines()

    indexing = _cli(prefix, home, "index")
    assert (indexing.returncode, indexing.stderr.splitlines()) == (1, [said])
    elsewhere = home.index.parent / "another.sqlite3"  # none there yet: it cannot be created
    created = _cli(prefix, home, "search", "--all", "--index", str(elsewhere), "websocket")
    assert (created.returncode, created.stderr.splitlines()) == (
        1, [f"pi-event-search: cannot create the index {elsewhere}: {why}"])

    client = RawLsp([*prefix, sys.executable, "-m", "pi_event_search", "serve"],
                    {**home.env(), "HOME": str(home.root)}, cwd=str(home.root))
    try:
        client.initialize("/home/dev/p")
        answer = client.call("piEvents/search", {"query": "websocket"})
        assert ref in json.dumps(answer["result"]), answer
        status = client.call("piEvents/status", {})
        assert "result" in status, json.dumps(status)
        status = status["result"]
        assert status["index"]["readOnly"] == said.removeprefix("pi-event-search: ")
        warned = [m["params"]["message"] for m in client.messages
                  if m.get("method") == "window/logMessage" and "cannot index" in m["params"]["message"]]
        assert warned == [said], warned
    finally:
        client.close()
    assert "pi-event:" in asyncio.run(_mcp_search(prefix, home, "websocket"))
    assert sorted(p.name for p in home.index.parent.iterdir()) == files, "nothing created beside it"
    FIGURES.add("read-only", f"index it cannot write ({how}): searches answered", 4)


async def _mcp_search(prefix: list[str], home: PiHome, query: str) -> str:
    """event_search through `pi-event-search mcp`, run under `prefix`, rooted at the session's
    project."""
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=prefix[0], args=[*prefix[1:], sys.executable, "-m",
                                                            "pi_event_search", "mcp", "--root",
                                                            "/home/dev/p"],
                                   env={**home.env(), "HOME": str(home.root)}, cwd=str(home.root))
    async with Client(params, mode="legacy") as c:
        result = await c.call_tool("event_search", {"query": query})
        body = "".join(getattr(b, "text", "") for b in result.content)
        assert not result.is_error, body
        return body


@as_root
def test_a_session_file_it_cannot_read_says_so(shared_home: PiHome) -> None:
    """A session file its reader may not read (mode 000, for a root bound by file modes), an index
    that holds its events: `read` and the server's piEvents/read say `cannot read <file>
    (permission denied)`, not that the event is gone from its file."""
    home = shared_home
    sb = sample_session(home.sessions, "/home/dev/p")
    proc = _cli([], home, "index")
    assert proc.returncode == 0, proc.stderr
    sb.path.chmod(0o000)
    prefix = _as("no-dac", home)
    assert subprocess.run([*prefix, "cat", str(sb.path)], capture_output=True).returncode != 0
    ref = f"pi-event:{sb.session_id}/{sb.ids[2]}"
    said = f"cannot read {sb.path} (permission denied)"

    read = _cli(prefix, home, "read", "--all", ref)
    assert read.returncode == 1
    assert read.stderr.startswith(f"pi-event-search: {said}"), read.stderr
    assert "search again" not in read.stderr

    client = RawLsp([*prefix, sys.executable, "-m", "pi_event_search", "serve"],
                    {**home.env(), "HOME": str(home.root)}, cwd=str(home.root))
    try:
        client.initialize("/home/dev/p")
        answer = client.call("piEvents/read", {"ref": ref})
        assert answer["error"]["message"].startswith(said), answer
    finally:
        client.close()
