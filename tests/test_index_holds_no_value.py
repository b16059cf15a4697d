"""The index never holds a credential's value (issue 47): after indexing sessions that hold the
planted corpus, a file whose name is a token, and a tool name and a read path holding keys, neither
the full-text vocabulary (fts5vocab) nor any table (every text and blob column) holds a value; a
`file` argument of a credential's shape answers the same for any value of that shape, through the
CLI, the language server and the MCP server."""

from __future__ import annotations

import json
import os
import random
import re
from pathlib import Path

from engine_support import cli, engine
from pi_event_search.index import store
from secretcorpus import (
    oracle_other,
    oracle_token,
    write_file_session,
    write_hostile_fields,
    write_session,
)

# What the index holds as recorded, on purpose (docs/security.md, "What the index holds"): where
# Pi's files are (to read them again), the cwd Pi recorded (authorization compares it) and entry
# ids (identity). Every answer masks them.
AS_RECORDED = {("files", "path"), ("files", "canonical_path"), ("sessions", "path"),
               ("sessions", "parent_path"), ("sessions", "cwd"), ("sessions", "cwd_canon"),
               ("events", "entry_id"), ("events", "parent_id")}


def _leaked(value: str, text: str) -> bool:
    return any(value[i:i + 12] in text for i in range(max(1, len(value) - 11)))


def _index(pi_home, tmp_path: Path) -> tuple[Path, list[str], str]:
    rng = random.Random(os.urandom(8))
    proj = tmp_path / "proj"
    proj.mkdir()
    _, items, _ = write_session(pi_home.sessions, str(proj), rng)
    hostile, _ = write_hostile_fields(pi_home.sessions, proj, rng)
    token = oracle_token(rng)
    write_file_session(pi_home.sessions, proj, token)
    # the cwd and the entry id are held as recorded (AS_RECORDED); the tool name and path are not
    values = [p.value for p in items] + [hostile[1], hostile[3], token]
    e = engine(pi_home.index)
    try:
        e.refresh()
    finally:
        e.close()
    return proj, values, token


def test_no_value_in_vocabulary_or_any_table(pi_home, tmp_path):
    _, values, _ = _index(pi_home, tmp_path)
    conn = store.connect(pi_home.index, readonly=True)
    conn.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, fts, row)")
    vocab = {row[0] for row in conn.execute("SELECT term FROM temp.vocab")}
    assert len(vocab) > 100  # the vocabulary was read: the texts were indexed
    for value in values:
        # unicode61 cuts a value at every character that is not a letter or digit; the random
        # parts (not `openssh`, `private` of a PEM's armour)
        parts = [p for p in re.findall(r"[a-z0-9]+", value.lower())
                 if len(p) >= 8 and re.search("[0-9]", p) and re.search("[a-z]", p)]
        assert not vocab.intersection(parts), value
    tables = [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
    checked = 0
    for table in tables:
        if table == "fts" or table.startswith("fts_"):
            continue  # contentless FTS: its terms are the vocabulary above
        columns = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
        for column in columns:
            if (table, column) in AS_RECORDED:
                continue
            expr = "fragment_text(text)" if (table, column) == ("fragments", "text") else column
            for (cell,) in conn.execute(f"SELECT {expr} FROM {table}"):
                if isinstance(cell, bytes):
                    cell = cell.decode("latin-1")
                if not isinstance(cell, str):
                    continue
                checked += 1
                for value in values:
                    assert not _leaked(value, cell), (table, column, value)
    assert checked > 500
    conn.close()


def _changed_count(out: str) -> str:
    m = re.search(r"changed in (\d+) events?", out)
    return m.group(1) if m else out


def test_file_argument_answers_alike_for_any_value_of_a_shape(pi_home, tmp_path):
    proj, _, token = _index(pi_home, tmp_path)
    other = oracle_other(token)
    answers = []
    for name in (token, other):
        rc, out, err = cli("file", f"{proj}/keys/{name}.txt", "--root", str(proj), "--json")
        assert rc == 0, err
        assert token not in out and other not in out
        answers.append(out.replace(name, ""))
    assert answers[0] == answers[1]
    assert json.loads(answers[0])["counts"] == {"changed": 1, "read": 0}
    rc, out, _ = cli("search", "", "--file", f"{proj}/keys/{other}.txt", "--root", str(proj),
                     "--json")
    assert rc == 0 and len(json.loads(out)["hits"]) == 1
