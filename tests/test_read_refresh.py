"""A read that finds its event's source changed re-ingests that one file, never every file, and
never waits long for an indexing pass that holds the index."""

from __future__ import annotations

import threading

import pytest

from builder import sample_session
from engine_support import ALL, engine, hits
from pi_event_search.core.errors import NotFound


def _shift_entries(path, text: str) -> None:
    """Rewrite the file with one more entry right after the header: every later entry moves."""
    lines = path.read_bytes().splitlines(keepends=True)
    extra = (b'{"type":"message","id":"0badc0de","parentId":null,'
             b'"timestamp":"2026-05-01T09:00:00.000Z","message":{"role":"user","content":'
             b'[{"type":"text","text":"' + text.encode() + b'"}]}}\n')
    path.write_bytes(lines[0] + extra + b"".join(lines[1:]))


def test_a_read_of_a_changed_file_reingests_that_file_alone(pi_home):
    a = sample_session(pi_home.sessions, "/p")
    b = sample_session(pi_home.sessions, "/q")
    e = engine(pi_home.index)
    e.refresh()
    target = f"{a.session_id}/{a.ids[2]}"  # the user's question
    before = e.read(target, ALL)
    _shift_entries(a.path, "inserted ahead of everything")
    b.user("unrelated words appended meanwhile")

    after = e.read(target, ALL)

    assert after["fragments"] == before["fragments"]
    assert after["source"]["byteOffset"] > before["source"]["byteOffset"]
    assert hits(e, "inserted ahead"), "the changed file was indexed again"
    assert not hits(e, "unrelated words appended"), "a read indexed another file"
    assert e.refresh().changed.get("appended") == 1  # the other file waits for a pass


def test_a_read_does_not_wait_for_an_indexing_pass(pi_home):
    a = sample_session(pi_home.sessions, "/p")
    e = engine(pi_home.index)
    e.refresh()
    _shift_entries(a.path, "inserted ahead of everything")
    outcome: list[object] = []

    def read() -> None:
        try:
            outcome.append(e.read(f"{a.session_id}/{a.ids[2]}", ALL))
        except NotFound as exc:
            outcome.append(exc)

    with e._write_lock:  # an indexing pass that will not end while the read runs
        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(60)
        assert not reader.is_alive(), "the read waited for the indexing pass"
    assert isinstance(outcome[0], NotFound) and "no longer in its source file" in str(outcome[0])
    assert e.read(f"{a.session_id}/{a.ids[2]}", ALL)["event"]["entryId"] == a.ids[2]


@pytest.mark.parametrize("gone", [True, False])
def test_a_read_never_runs_a_full_pass(pi_home, gone):
    """A file deleted (or an event no longer visible in a new file) is left to the next pass."""
    a = sample_session(pi_home.sessions, "/p")
    e = engine(pi_home.index)
    e.refresh()
    ref = f"{a.session_id}/{a.ids[2]}"
    if gone:
        a.path.unlink()
    else:
        _shift_entries(a.path, "x")
        a.path.rename(a.path.with_name("renamed.jsonl"))
    with pytest.raises(NotFound):
        e.read(ref, ALL)
    assert e.status(None)["sessions"] == 1, "the read removed a session (a full pass did)"


def test_a_process_that_does_not_keep_the_lease_takes_it_for_the_read_and_frees_it(pi_home):
    # A server that does not watch (Engine.keep_lease False) writes only when asked: a read of a
    # changed file re-ingests it, and the lease is free again for a server that watches.
    a = sample_session(pi_home.sessions, "/p")
    e = engine(pi_home.index)
    e.keep_lease = False
    e.refresh()
    assert not e.writer and e.writer_pid() is None
    target = f"{a.session_id}/{a.ids[2]}"
    before = e.read(target, ALL)
    _shift_entries(a.path, "inserted ahead of everything")
    after = e.read(target, ALL)
    assert after["source"]["byteOffset"] > before["source"]["byteOffset"]
    assert hits(e, "inserted ahead")
    assert not e.writer and e.writer_pid() is None
