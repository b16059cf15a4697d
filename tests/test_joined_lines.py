"""Two JSON objects on one line (a torn write followed by the next entry): each is its own event,
and `source.byteOffset` is the exact offset of that event's object, not of the line."""

from __future__ import annotations

import pytest

from builder import SessionBuilder
from engine_support import ALL, engine, hits
from pi_event_search.core.authz import Scope
from support import PiHome


def _entry(sb: SessionBuilder, entry_id: str, text: str) -> bytes:
    return sb.dumps({"type": "message", "id": entry_id, "parentId": sb.leaf,
                     "timestamp": "2026-05-01T11:00:00.000Z",
                     "message": {"role": "user", "content": text}})


@pytest.mark.parametrize(("glue", "damage"), [(b"", b""), (b"  ", b""), (b"", b"\xff\xfe")],
                         ids=["adjacent", "spaces", "bad-utf8-inside"])
def test_every_object_on_a_joined_line_has_its_own_offset(pi_home: PiHome, glue: bytes,
                                                           damage: bytes) -> None:
    sb = SessionBuilder(pi_home.sessions, "/p")
    sb.user("an ordinary first line")
    e = engine(pi_home.index)
    e.refresh()  # so that the joined line arrives as an append, then again in a rebuild
    objects = [_entry(sb, "join0001", "glued ünïcode one").replace(b"one", b"one" + damage),
               _entry(sb, "join0002", "glued two"), _entry(sb, "join0003", "glued three")]
    sb.write_raw(objects[0] + glue + objects[1] + objects[2] + b"\n")
    data = sb.path.read_bytes()
    for rebuild in (False, True):
        if rebuild:
            e.close()
            pi_home.index.unlink()
            e = engine(pi_home.index)
        e.refresh()
        found = {h["entryId"]: h["source"] for h in hits(e, "glued")}
        assert set(found) == {"join0001", "join0002", "join0003"}
        assert len({s["line"] for s in found.values()}) == 1
        for obj, entry_id in zip(objects, ("join0001", "join0002", "join0003"), strict=True):
            off = found[entry_id]["byteOffset"]
            assert data[off:off + len(obj)] == obj, entry_id
            read = e.read(f"{sb.session_id}/{entry_id}", ALL)
            assert read["source"]["byteOffset"] == off
            assert "glued" in read["fragments"][0]["text"]


def test_line_origin_reads_the_second_object_of_a_joined_line(pi_home: PiHome, tmp_path) -> None:
    """The edit that wrote a line is found when its entry is the second object of a joined line
    (the entry is read back from the whole line, as `piEvents/read` reads it)."""
    proj = tmp_path / "proj"
    proj.mkdir()
    sb = SessionBuilder(pi_home.sessions, str(proj))
    sb.user("bump the retry budget")
    first = _entry(sb, "join0001", "a torn user message")
    call = {"type": "message", "id": "join0002", "parentId": "join0001",
            "timestamp": "2026-05-01T11:00:01.000Z",
            "message": {"role": "assistant", "stopReason": "toolUse", "content": [
                {"type": "toolCall", "id": "c1", "name": "edit", "arguments": {
                    "path": "cfg.ts", "edits": [{"oldText": "  retries: 3,",
                                                 "newText": "  retryBudget: 7,"}]}}]}}
    sb.write_raw(first + sb.dumps(call) + b"\n")
    e = engine(pi_home.index)
    e.refresh()
    found = e.line_origin(str(proj / "cfg.ts"), "  retryBudget: 7,", Scope.of([str(proj)]))
    assert found["hit"] is not None and found["hit"]["entryId"] == "join0002"
    assert e.read(f"{sb.session_id}/join0002", ALL)["fragments"]
