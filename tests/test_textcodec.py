"""Fragment text is stored as zstd frames with a dictionary trained at the index's first bulk load:
every process, and every connection opened before the dictionary existed, reads it back exactly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import zstandard

from builder import SessionBuilder
from engine_support import ALL, hits
from pi_event_search.service.engine import Engine
from pi_event_search.source.discovery import default_dirs

WORDS = ("socket", "retry", "timeout", "handler", "buffer", "migration", "schema", "deploy")


def _corpus(sessions_dir: Path) -> dict[str, str]:
    """Enough varied text to train a dictionary on; entry id -> its tool output."""
    outputs = {}
    for i in range(40):
        sb = SessionBuilder(sessions_dir, f"/home/dev/proj{i % 4}")
        for j in range(8):
            call = f"call_{i}_{j}"
            sb.user(f"run step {j} of batch {i}")
            sb.assistant(None, tool_calls=[(call, "bash", {"command": f"make step{j}"})])
            text = "\n".join(f"{WORDS[(i + j + k) % 8]} line {k} of step {j}: value {i * k}"
                             for k in range(60)) + f"\nmarker{i}x{j}"
            outputs[sb.tool_result(call, "bash", text)] = text
    return outputs


def test_a_dictionary_made_by_another_process_is_read_by_an_open_connection(tmp_path: Path):
    sessions_dir = tmp_path / "agent" / "sessions"
    sessions_dir.mkdir(parents=True)
    index = tmp_path / "index.sqlite3"
    e = Engine(index, default_dirs(sessions_dir, []))
    try:
        assert hits(e, "marker3x4", ALL) == []  # the reader is open before any dictionary
        outputs = _corpus(sessions_dir)
        env = {**os.environ, "PI_CODING_AGENT_DIR": str(sessions_dir.parent),
               "PI_EVENT_SEARCH_INDEX": str(index)}
        subprocess.run([sys.executable, "-m", "pi_event_search", "index"], env=env, check=True,
                       capture_output=True)
        conn = e.reader()
        dict_id = int(conn.execute("SELECT value FROM meta WHERE key = 'dictionary'")
                      .fetchone()["value"])
        stored = [r["text"] for r in conn.execute("SELECT text FROM fragments")
                  if isinstance(r["text"], bytes)]
        assert stored and all(zstandard.get_frame_parameters(s).dict_id == dict_id
                              for s in stored)
        found = hits(e, "marker3x4", ALL)
        assert [h["entryId"] for h in found] == [k for k, v in outputs.items()
                                                 if v.endswith("marker3x4")]
        assert "marker3x4" in found[0]["snippet"]
    finally:
        e.close()


def test_each_stored_text_unpacks_to_the_text_indexed(tmp_path: Path):
    sessions_dir = tmp_path / "agent" / "sessions"
    outputs = _corpus(sessions_dir)
    e = Engine(tmp_path / "index.sqlite3", default_dirs(sessions_dir, []))
    try:
        e.refresh()
        rows = e.conn.execute(
            "SELECT e.entry_id AS id, fragment_text(f.text) AS text FROM fragments f "
            "JOIN events e ON e.eid = f.eid WHERE f.kind = 'tool.result'").fetchall()
        assert {r["id"]: r["text"] for r in rows} == outputs
    finally:
        e.close()
