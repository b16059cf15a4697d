"""The command line's contract (issue 38): every error is one line on stderr and exit 1 (2 for bad
usage), never a traceback: a full disk, a busy index, bad input. Real processes, a real full disk
(a file-size limit on the process: SQLite's writes stop short as on a full disk)."""

from __future__ import annotations

import json
import random
import resource
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import sessioncorpus
from builder import SessionBuilder

SERVER = str(Path(__file__).parents[1] / "server")


def run(home, *args: str, limit: int | None = None) -> subprocess.CompletedProcess[str]:
    def fsize() -> None:  # Python ignores SIGXFSZ: a write past the limit stops short (EFBIG)
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    env = {**home.env(), "PYTHONPATH": SERVER}
    return subprocess.run([sys.executable, "-m", "pi_event_search", *args], env=env, text=True,
                          capture_output=True, timeout=300, preexec_fn=fsize)


def one_line(out: subprocess.CompletedProcess[str], code: int = 1) -> str:
    assert out.returncode == code, (out.returncode, out.stderr[-2000:])
    assert "Traceback" not in out.stderr, out.stderr[-2000:]
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("pi-event-search: "), out.stderr[-2000:]
    return lines[0]


@pytest.fixture
def corpus_home(pi_home):
    sessioncorpus.build(pi_home.sessions, "/home/dev", random.Random(1), count=60)
    return pi_home


def test_a_full_disk_is_one_line(corpus_home, tmp_path):
    """The index's files may not grow past a limit: wherever the writes stop (creating the schema,
    a batch's commit, the full-text load), the command says so in one line and exits 1."""
    failed = []
    for kb in (16, 64, 200, 400):
        index = tmp_path / f"full-{kb}" / "index.sqlite3"
        index.parent.mkdir()
        out = run(corpus_home, "index", "--index", str(index), limit=kb * 1024)
        if out.returncode == 0:
            continue
        line = one_line(out)
        assert "disk" in line, line
        failed.append(kb)
    assert failed[:2] == [16, 64], failed  # the corpus' index takes ~1 MB: the small limits fail
    # and with room again, the same index is built
    out = run(corpus_home, "index", "--index", str(tmp_path / "full-64" / "index.sqlite3"))
    assert out.returncode == 0, out.stderr


def test_a_busy_index_is_one_line(corpus_home, tmp_path):
    """Another process holds the index's lock: the command waits SQLite's busy timeout (60 s, so
    one command only here), then says so in one line."""
    index = tmp_path / "busy.sqlite3"
    assert run(corpus_home, "index", "--index", str(index)).returncode == 0
    holder = sqlite3.connect(index, isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("CREATE TABLE IF NOT EXISTS held(x)")
    try:
        line = one_line(run(corpus_home, "search", "build", "--all", "--index", str(index)))
        assert "busy" in line or "locked" in line, line
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_bad_input_is_one_line(corpus_home, tmp_path):
    (tmp_path / "a-dir").mkdir()
    (tmp_path / "not-a-db").write_text("garbage\n")
    ix = ["--index", str(tmp_path / "ix.sqlite3")]
    assert run(corpus_home, "index", *ix).returncode == 0  # no progress lines below: errors only
    cases = [  # exit 2: the arguments cannot be parsed; 1: they can, and the command fails
        (["status", "--index", str(tmp_path / "a-dir")], 1),
        (["status", "--index", str(tmp_path / "not-a-db")], 1),
        (["read", "pi-event:nope/nope", "--all", *ix], 1),
        (["read", "not a reference", "--all", *ix], 1),
        (["search", "x", "--since", "yesterday-ish", *ix], 1),
        (["search", "x", "--limit", "many", *ix], 2),
        (["search", "--bogus"], 2),
        (["trace", "pi-event:nope/nope", "--all", *ix], 1),
        (["blame", f"{tmp_path / 'missing.py'}:3", *ix], 2),  # PATH:LINE names no file
    ]
    for args, code in cases:
        out = run(corpus_home, *args)
        if out.returncode != code:
            pytest.fail(f"{args}: exit {out.returncode}, {out.stderr[-500:]}")
        one_line(out, code)


def test_a_query_past_64_terms_is_one_line(pi_home, tmp_path):
    """Issue 46: 65 words or quoted phrases are refused as too long, 64 searched; the review's
    own-session case from the command line: a word only the caller's session holds before its
    cutoff is found as typed, not corrected to another session's word."""
    proj = tmp_path / "proj"
    proj.mkdir()
    SessionBuilder(pi_home.sessions, str(proj)).user("the reconnect handler")
    sb = SessionBuilder(pi_home.sessions, str(proj))
    mine = sb.user("the reconnectz flag")
    cutoff = sb.assistant("searching now")
    root = ["--root", str(proj)]
    many = [f"zx{chr(97 + i // 26)}{chr(97 + i % 26)}ozoid" for i in range(65)]
    assert run(pi_home, "search", " ".join(many[:64]), *root).returncode == 0
    for query, said in ((" ".join(many), "65 words or quoted phrases (at most 64)"),
                        ("x" * 5000, "5000 characters (at most 4096)")):
        assert one_line(run(pi_home, "search", query, *root)) == \
            f"pi-event-search: query too long: {said}"
    out = run(pi_home, "search", "reconnectz", "--json", *root, "--current-session",
              sb.session_id, "--cutoff", cutoff, "--session", sb.session_id)
    assert out.returncode == 0, out.stderr[-2000:]
    page = json.loads(out.stdout)
    assert page["didYouMean"] is None and [h["entryId"] for h in page["hits"]] == [mine]
