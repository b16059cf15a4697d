"""Index engine: discovery, reader, change detection, duplicates, store rules, read-only promise."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from builder import SessionBuilder, sample_session
from engine_support import cli, cli_json, engine, hits, snapshot
from pi_event_search.index import store
from support import tree_digest


def test_layouts_and_json_mode_streams(pi_home):
    nested = sample_session(pi_home.sessions, "/home/dev/proj")
    flat = SessionBuilder(pi_home.sessions, "/home/dev/other", flat=True)
    flat.user("root level file from the v0.30 bug")
    flat.assistant("ok")
    stream = pi_home.sessions / "--home-dev-proj--" / "json-mode.jsonl"
    stream.write_text(json.dumps({"type": "session", "version": 3, "id": "x1", "cwd": "/p"}) + "\n"
                      + json.dumps({"type": "agent_start"}) + "\n")
    deeper = pi_home.sessions / "--home-dev-proj--" / "subagent-artifacts"
    deeper.mkdir()
    SessionBuilder(deeper, "/home/dev/proj", flat=True).user("too deep to be a session")
    e = engine(pi_home.index)
    e.refresh()
    status = e.status(None)
    assert status["sessions"] == 2
    assert {s["path"] for s in status["skipped"]} == {str(stream)}
    assert "json" in status["skipped"][0]["reason"]
    assert hits(e, "root level file")[0]["sessionId"] == flat.session_id
    assert hits(e, "websocket")[0]["sessionId"] == nested.session_id
    assert not hits(e, "too deep")


def test_torn_line_and_two_objects_on_one_line(pi_home):
    sb = SessionBuilder(pi_home.sessions, "/p")
    sb.user("first complete message")
    sb.assistant("partial answer", newline=False)  # torn: no newline yet
    e = engine(pi_home.index)
    e.refresh()
    assert not hits(e, "partial answer")
    sb.write_raw(b"\n")
    e.refresh()
    assert len(hits(e, "partial answer")) == 1
    a = sb.dumps({"type": "message", "id": "aaaa0001", "parentId": sb.leaf, "timestamp":
                  "2026-05-01T11:00:00.000Z", "message": {"role": "user", "content": "glued one"}})
    b = sb.dumps({"type": "compaction", "id": "aaaa0002", "parentId": "aaaa0001", "timestamp":
                  "2026-05-01T11:00:01.000Z", "summary": "glued compaction summary",
                  "firstKeptEntryId": "aaaa0001", "tokensBefore": 5})
    sb.write_raw(a + b + b"\n")
    e.refresh()
    glued = hits(e, "glued")
    assert {h["entryId"] for h in glued} == {"aaaa0001", "aaaa0002"}
    assert {h["source"]["line"] for h in glued} == {4}


def test_malformed_lines_are_counted_not_fatal(pi_home):
    sb = SessionBuilder(pi_home.sessions, "/p")
    sb.user("before the damage")
    sb.write_raw(b'{"type":"message","id":"bad\n')
    sb.write_raw(b"\xff\xfe not json at all \x00\n")
    sb.write_raw(b'{"type":"message","id":"cafe0001","parentId":null,"timestamp":"2026-05-01T12:00'
                 b':00Z","message":{"role":"user","content":"caf\xe9 latin1 \xff byte"}}\n')
    sb.user("after the damage")
    other = sample_session(pi_home.sessions, "/q")
    e = engine(pi_home.index)
    e.refresh()
    assert hits(e, "after the damage") and hits(e, "before the damage")
    assert hits(e, "latin1 byte")  # invalid UTF-8 replaced, the rest of the entry kept
    assert hits(e, "websocket")[0]["sessionId"] == other.session_id
    bad = e.status(None)["badLines"]
    assert len(bad) == 1 and bad[0]["badLines"] == 2 and "line 3" in bad[0]["detail"]


def test_append_rewrite_truncate_replace_and_delete(pi_home):
    sb = sample_session(pi_home.sessions, "/p")
    e = engine(pi_home.index)
    assert e.refresh().changed == {"rebuilt": 1}
    before = {r[0]: r for r in e.conn.execute("SELECT eid, entry_id FROM events")}
    sb.user("appended later about flaky sockets")
    report = e.refresh()
    assert report.changed == {"appended": 1} and report.events == 1
    after = {r[0]: r for r in e.conn.execute("SELECT eid, entry_id FROM events")}
    assert all(after[k] == v for k, v in before.items())  # old rows untouched
    assert e.refresh().changed == {"unchanged": 1}
    # v1 -> v3 migration: the whole file rewritten with new ids
    text = sb.path.read_text()
    for i, old in enumerate(sb.ids):
        text = text.replace(old, "deadbeef" if i == 2 else f"{i:08x}")
    sb.path.write_text(text)
    assert e.refresh().changed == {"rebuilt": 1}
    assert hits(e, "fix the flaky websocket")[0]["entryId"] == "deadbeef"
    # truncation
    lines = sb.path.read_bytes().splitlines(keepends=True)
    sb.path.write_bytes(b"".join(lines[:4]))
    assert e.refresh().changed == {"rebuilt": 1}
    assert not hits(e, "appended later")
    # replaced by a new file (new inode) with the same name
    sb.path.unlink()
    sb2 = SessionBuilder(pi_home.sessions, "/p", session_id=sb.session_id)
    sb2.user("a brand new body")
    assert sb2.path == sb.path
    e.refresh()
    assert hits(e, "brand new body") and not hits(e, "websocket")
    fresh = engine(pi_home.root / "fresh.sqlite3")
    fresh.refresh()
    assert snapshot(e) == snapshot(fresh)
    sb.path.unlink()
    assert e.refresh().removed == 1
    assert e.status(None)["sessions"] == 0


def test_garbage_replacement_keeps_last_known_good(pi_home):
    sb = sample_session(pi_home.sessions, "/p")
    e = engine(pi_home.index)
    e.refresh()
    sb.path.write_bytes(b"\x00garbage, not a session\n")
    e.refresh()
    assert hits(e, "websocket"), "last known-good index kept"
    stale = e.status(None)["stale"]
    assert stale and stale[0]["sessionId"] == sb.session_id and stale[0]["error"]


def test_unreadable_archive_root_marks_unavailable(pi_home, tmp_path):
    archive = tmp_path / "archive"
    sb = sample_session(archive, "/p")
    e = engine(pi_home.index, [str(archive)])
    e.refresh()
    assert hits(e, "websocket")
    archive.rename(tmp_path / "unmounted")
    e.refresh()
    assert hits(e, "websocket"), "an unmounted archive deletes nothing"
    assert e.status(None)["unavailable"][0]["sessionId"] == sb.session_id
    (tmp_path / "unmounted").rename(archive)
    e.refresh()
    assert not e.status(None)["unavailable"]


def test_duplicate_session_ids_pick_one_canonical_file(pi_home, tmp_path):
    live = sample_session(pi_home.sessions, "/p")
    archive = tmp_path / "archive"
    copy = archive / live.path.name
    archive.mkdir()
    copy.write_bytes(live.path.read_bytes() + live.path.read_bytes().splitlines(True)[-1]
                     .replace(live.ids[-1].encode(), b"0000beef"))
    e = engine(pi_home.index, [str(archive)])
    e.refresh()
    found = hits(e, "push force")
    assert len(found) == 1 and found[0]["source"]["path"] == str(live.path)
    dup = e.status(None)["duplicates"]
    assert dup == [{"sessionId": live.session_id, "path": str(copy),
                    "canonicalPath": str(live.path)}]
    other = tmp_path / "archive2"
    other.mkdir()
    longer = other / "x.jsonl"
    longer.write_bytes(copy.read_bytes())
    e2 = engine(pi_home.root / "i2.sqlite3", [str(archive), str(other)])
    live.path.unlink()
    e2.refresh()
    assert {h["source"]["path"] for h in hits(e2, "push force")} == {str(copy)}


def test_store_refuses_foreign_database_and_rebuilds_old_schema(tmp_path):
    foreign = tmp_path / "foreign.sqlite3"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE notes (x)")
    conn.commit()
    conn.close()
    with pytest.raises(store.ForeignDatabase):
        store.connect(foreign)
    rc, _, err = cli("status", "--index", str(foreign))
    assert rc == 1 and "not a pi-event-search index" in err
    ours = tmp_path / "ours.sqlite3"
    conn = store.connect(ours)
    conn.execute("PRAGMA user_version = 1")
    conn.close()
    conn = store.connect(ours)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == store.SCHEMA_VERSION
    assert oct(os.stat(ours).st_mode & 0o777) == "0o600"


def test_append_in_pieces_equals_fresh_index(pi_home):
    sb = sample_session(pi_home.sessions, "/p")
    e = engine(pi_home.index)
    e.refresh()
    line = sb.dumps({"type": "message", "id": "feed0001", "parentId": sb.leaf,
                     "timestamp": "2026-05-01T13:00:00.000Z",
                     "message": {"role": "assistant", "content": [
                         {"type": "text", "text": "split across writes: reconnect jitter"}]}})
    for piece in (line[:10], line[10:40], line[40:], b"\n"):
        sb.write_raw(piece)
        e.refresh()
        torn = hits(e, "jitter")
        assert (piece == b"\n") == bool(torn), "no torn entry is ever returned"
    fresh = engine(pi_home.root / "fresh.sqlite3")
    fresh.refresh()
    assert snapshot(e) == snapshot(fresh)


def test_two_processes_index_one_index(pi_home):
    for i in range(12):
        sample_session(pi_home.sessions, f"/p{i}")
    code = "from pi_event_search.cli.main import main; import sys; sys.exit(main(['index']))"
    procs = [subprocess.Popen([sys.executable, "-c", code], env=pi_home.env(),
                              stderr=subprocess.PIPE) for _ in range(3)]
    assert all(p.wait(60) == 0 for p in procs)
    e = engine(pi_home.index)
    assert e.status(None)["sessions"] == 12
    rows = e.conn.execute("SELECT count(*), count(DISTINCT sid || '/' || entry_id) FROM events")
    total, distinct = rows.fetchone()
    assert total == distinct == 12 * 12
    assert e.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_sessions_tree_is_never_modified(pi_home):
    sample_session(pi_home.sessions, "/p")
    s = SessionBuilder(pi_home.sessions, "/p")
    s.user("torn", newline=False)
    before = tree_digest(pi_home.root / "agent")
    rc, out, err = cli("search", "--all", "websocket", "--json")
    assert rc == 0, err
    ref = json.loads(out)["hits"][0]["ref"]
    assert cli("read", "--all", ref)[0] == 0
    assert cli("trace", "--all", ref)[0] == 0
    assert cli("status")[0] == 0
    assert tree_digest(pi_home.root / "agent") == before


def test_cli_contract(pi_home):
    sb = sample_session(pi_home.sessions, "/p")
    data = cli_json("search", "--all", "reconnect", "--kind", "user.text")
    hit = data["hits"][0]
    for key in ("sessionId", "entryId", "fragmentId", "kind", "entryType", "timestamp",
                "snippet", "matches", "score", "cwd", "source"):
        assert key in hit
    assert hit["entryId"] == sb.ids[2]
    line = sb.path.read_text().splitlines()[hit["source"]["line"] - 1]
    assert json.loads(line)["id"] == hit["entryId"]
    assert cli("search", "--limit", "0", "x")[0] == 2
    assert cli("read", "--all", "not a ref")[0] == 1
    assert cli("nonsense")[0] == 2
    status = cli_json("status", "--all")
    assert status["sessions"] == 1 and status["index"]["bytes"] > 0
    assert cli_json("status", "--root", "/elsewhere")["sessions"] == 0  # counts follow the roots
    assert cli_json("status", "--root", "/p")["sessions"] == 1


def test_pi_written_sessions_index_cleanly(pi_home):
    from piwriter import write_pi_sessions

    oracle = write_pi_sessions(pi_home.sessions)
    e = engine(pi_home.index)
    e.refresh()
    status = e.status(None)
    assert status["sessions"] == len(oracle["sessions"])
    assert not status["badLines"] and not status["stale"] and not status["skipped"]
    for rec in oracle["sessions"]:
        got = [r[0] for r in e.conn.execute(
            "SELECT e.entry_id FROM events e JOIN sessions s ON s.sid = e.sid "
            "WHERE s.session_id = ? ORDER BY e.seq", (rec["sessionId"],))]
        assert got == rec["entries"]


def test_index_path_from_environment_and_flag(pi_home, tmp_path):
    sample_session(pi_home.sessions, "/p")
    other = tmp_path / "elsewhere" / "idx.sqlite3"
    assert cli("index", "--index", str(other))[0] == 0
    assert other.exists() and not Path(pi_home.index).exists()
    assert oct(os.stat(other.parent).st_mode & 0o777) == "0o700"


def test_index_watch_follows_appends(pi_home):
    import time

    sb = sample_session(pi_home.sessions, "/p")
    proc = subprocess.Popen([sys.executable, "-m", "pi_event_search", "index", "--watch"],
                            env=pi_home.env(), stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while not pi_home.index.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        e = engine(pi_home.index)  # reads only: this test never refreshes itself
        while not hits(e, "websocket") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert hits(e, "websocket")
        sb.user("a watched zebra line", newline=False)
        time.sleep(0.5)
        assert not hits(e, "zebra"), "torn line stays invisible"
        sb.write_raw(b"\n")
        while not hits(e, "zebra") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert hits(e, "zebra")
    finally:
        proc.terminate()
        proc.wait(10)


def test_refresh_of_grown_files_only(pi_home):
    """The watcher's hint (these files grew) is used only when it is enough to be exact."""
    a = sample_session(pi_home.sessions, "/p")
    e = engine(pi_home.index)
    e.refresh()
    a.user("grown by one entry")
    report = e.refresh_paths({str(a.path)})
    assert report.changed == {"appended": 1} and hits(e, "grown")
    b = sample_session(pi_home.sessions, "/q")  # a new file: only a full refresh finds it
    report = e.refresh_paths({str(b.path)})
    assert report.changed.get("rebuilt") == 1 and hits(e, "websocket", session_id=b.session_id)
    a.path.unlink()
    assert e.refresh_paths({str(a.path)}).removed == 1


def test_rebuilds_leave_the_contentless_fts_exact(pi_home):
    """Deleting from a contentless FTS index needs the exact values once inserted (directory
    tokens included); a wrong delete leaves stale postings that a fresh index would not have."""
    sb = sample_session(pi_home.sessions, "/home/dev/deep/proj")
    e = engine(pi_home.index)
    e.refresh()
    sb.path.write_text(sb.path.read_text().replace("websocket", "socket"))
    e.refresh()
    fresh = engine(pi_home.root / "fresh.sqlite3")
    fresh.refresh()
    assert snapshot(e) == snapshot(fresh)
    assert not hits(e, "websocket")
    sb.path.unlink()
    e.refresh()
    e.conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.v2 USING fts5vocab(main, fts, row)")
    assert e.conn.execute("SELECT count(*) FROM temp.v2").fetchone()[0] == 0, "stale postings"


def test_a_change_made_before_the_watcher_starts_is_seen_at_its_first_wake_up(pi_home):
    # Between a server's first pass and its watcher's start, an append raises no event for the
    # watcher; the periodic rescan is 30 s away: the watcher's first wake-up refreshes everything.
    import threading
    import time

    from pi_event_search.service.watch import RESCAN_SECONDS, watch_forever

    sb = sample_session(pi_home.sessions, "/p")
    e = engine(pi_home.index)
    e.refresh()
    sb.user("a quiet yak line")
    stop = threading.Event()
    changed: list[object] = []
    watcher = threading.Thread(target=watch_forever, args=(e, changed.append, stop), daemon=True)
    watcher.start()
    try:
        deadline = time.monotonic() + RESCAN_SECONDS / 3
        while not hits(e, "yak") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert hits(e, "yak") and changed
    finally:
        stop.set()
        watcher.join(10)
