"""Times without a zone are UTC everywhere: in the index (entry timestamps) as in --since/--until,
whatever the machine's local zone."""

from __future__ import annotations

import json
import time

import pytest

from builder import SessionBuilder
from engine_support import ALL, engine
from pi_event_search.core.timestamps import parse_time
from pi_event_search.query.search import Filters


@pytest.fixture
def new_york(monkeypatch):
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    assert time.timezone != 0, "the zone did not apply"
    yield
    monkeypatch.undo()
    time.tzset()


def test_parse_time_reads_a_zoneless_time_as_utc(new_york):
    assert parse_time("2026-05-01T10:00:00") == parse_time("2026-05-01T10:00:00Z") \
        == 1777629600000


def test_indexed_zoneless_timestamps_agree_with_since_and_until(pi_home, new_york):
    sb = SessionBuilder(pi_home.sessions, "/p")
    sb.write_raw(json.dumps({
        "type": "message", "id": "0a0b0c0d", "parentId": None,
        "timestamp": "2026-05-01T10:00:00.000",
        "message": {"role": "user", "content": [{"type": "text", "text": "zoneless moment"}]},
    }).encode() + b"\n")
    e = engine(pi_home.index)
    e.refresh()
    window = Filters(since_ms=parse_time("2026-05-01T10:00:00", "--since"),
                     until_ms=parse_time("2026-05-01T10:00:01", "--until"))
    found = e.search("zoneless moment", window, ALL).hits
    assert [h["entryId"] for h in found] == ["0a0b0c0d"]
