"""Helpers for engine-level tests: open an engine on a Pi home, snapshot the index."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

from pi_event_search.cli.main import main
from pi_event_search.core.authz import Scope
from pi_event_search.index import store
from pi_event_search.query.search import Filters
from pi_event_search.service.engine import Engine

ALL = Scope.of(None)


def engine(index: Path, extra: list[str] | None = None) -> Engine:
    return Engine.open(index, extra or [])


def snapshot(e: Engine) -> list[tuple[Any, ...]]:
    """Everything that defines the index's content, independent of row ids. (FTS5's
    integrity-check is written as an INSERT: a connection that may write, without the lease
    when another process holds it; it changes nothing.)"""
    conn = e.conn or store.connect(e.index_path)
    rows = conn.execute(
        "SELECT s.session_id, e.entry_id, e.parent_id, e.seq, e.line, e.byte_off, e.entry_type, "
        "e.role, e.tool_name, e.is_error, e.branch_state, e.selection_state, e.context_role, "
        "(SELECT group_concat(f.frag || '=' || fragment_text(f.text), '|') FROM fragments f "
        "WHERE f.eid = e.eid) "
        "FROM events e JOIN sessions s ON s.sid = e.sid ORDER BY s.session_id, e.seq").fetchall()
    fts = conn.execute("SELECT count(*) FROM fragments").fetchone()
    conn.execute("INSERT INTO fts(fts) VALUES ('integrity-check')")  # raises if FTS is corrupt
    # The FTS index is contentless: only exact deletes keep its vocabulary equal to a clean one.
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab USING fts5vocab(main, fts, row)")
    vocab = conn.execute("SELECT term, doc, cnt FROM temp.vocab ORDER BY term").fetchall()
    return [*rows, ("fts-rows", fts[0]), ("vocab", tuple(vocab))]


def hits(e: Engine, query: str, scope: Scope = ALL, **filters: Any) -> list[dict[str, Any]]:
    """The events holding every word (match "all"): what most tests of matching are about;
    tests/test_relax.py tests the partial hits that follow them."""
    return e.search(query, Filters(**filters), scope, limit=200, exact=True).hits


def cli(*args: str) -> tuple[int, str, str]:
    err = io.StringIO()
    buf = io.BytesIO()
    with contextlib.redirect_stderr(err), _capture_stdout(buf):
        rc = main(list(args))
    return rc, buf.getvalue().decode(), err.getvalue()


@contextlib.contextmanager
def _capture_stdout(buf: io.BytesIO) -> Any:
    import sys

    real = sys.stdout
    wrapper = io.TextIOWrapper(buf, encoding="utf-8", write_through=True)
    sys.stdout = wrapper
    try:
        yield
    finally:
        wrapper.flush()
        wrapper.detach()  # keep buf open for the caller
        sys.stdout = real


def cli_json(*args: str) -> Any:
    rc, out, err = cli(*args, "--json")
    assert rc == 0, err
    return json.loads(out)
