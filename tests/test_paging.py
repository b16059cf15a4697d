"""Paging walks one fixed ranking: over the bench corpus (bench/common/corpus.py), 1,200 hits of a common
word come out in the same order 20 or 200 at a time, with no event twice, and walking to the end
finds every visible matching event exactly once (docs/protocol.md, piEvents/search)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from bench.common.corpus import VISIBLE_ROOT, generate

from pi_event_search.core.authz import Scope
from pi_event_search.query.evidence import weights
from pi_event_search.query.search import Filters, StaleCursor
from pi_event_search.service.engine import Engine
from pi_event_search.source.discovery import SessionDir

CANDIDATES = weights().max_events  # the events the scored order holds

SIZE = 30 << 20  # about 2,500 events hold "error": three tiers of CANDIDATES fragments
SCOPE = Scope.of([VISIBLE_ROOT])


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    root = tmp_path_factory.mktemp("paging")
    m = generate(root / "corpus", SIZE, seed=7)
    e = Engine(root / "index.sqlite3", [SessionDir(m["sessions_dir"], live=True)])
    e.refresh()
    yield e
    e.close()


def _walk(e: Engine, query: str, limit: int, upto: int | None = None,
          f: Filters | None = None) -> list[str]:
    refs: list[str] = []
    cursor = None
    while upto is None or len(refs) < upto:
        page = e.search(query, f or Filters(), SCOPE, limit=limit, cursor=cursor)
        refs += [h["ref"] for h in page.hits]
        if query:  # the score shown is the rank
            assert [h["score"] for h in page.hits] == [
                round(1.0 / (1 + i), 4) for i in range(len(refs) - len(page.hits), len(refs))]
        cursor = page.next_cursor
        if cursor is None:
            break
    return refs[:upto] if upto else refs


def _visible_matches(e: Engine, match: str) -> set[str]:
    """Every visible event with a fragment FTS5 matches in its words as written (the text and
    meta columns: identifier parts alone make partial hits only), straight from the index."""
    where, params = SCOPE.event_sql(None)
    rows = e.conn.execute(
        "SELECT DISTINCT s.session_id || '/' || e.entry_id AS ref FROM fts "
        "JOIN fragments f ON f.fid = fts.rowid JOIN events e ON e.eid = f.eid "
        f"JOIN sessions s ON s.sid = e.sid WHERE fts MATCH ? AND {where}",
        [f"{{text meta}} : ({match})", *params])
    return {"pi-event:" + r["ref"] for r in rows}


@pytest.mark.parametrize("query", ["error", "socket retry"])
def test_pages_of_20_and_200_agree_on_1200_hits_without_repeats(bench: Engine, query: str) -> None:
    by20 = _walk(bench, query, 20, 1200)
    by200 = _walk(bench, query, 200, 1200)
    assert len(set(by20)) == len(by20)
    assert by20 == by200
    assert by20[:10] == _walk(bench, query, 10, 10)


def test_walking_to_the_end_finds_every_visible_match_once(bench: Engine) -> None:
    refs = _walk(bench, "error", 200)
    truth = _visible_matches(bench, '"error"')
    assert len(truth) > 2 * CANDIDATES  # the walk crosses tiers
    assert len(refs) == len(set(refs)) and set(refs) == truth


def test_inflections_follow_every_exact_tier_in_one_order(bench: Engine) -> None:
    """`errors` matches few events as typed; `error` (an inflection) thousands: the walk lists
    the typed ones first, then the inflection-only ones, each once, in the same order for any
    page size."""
    typed = _visible_matches(bench, '"errors"')
    every = _visible_matches(bench, '"error" OR "errors" OR "erroring" OR "errored"')
    by200 = _walk(bench, "errors", 200)
    assert len(by200) == len(set(by200)) and set(by200) == every
    assert set(by200[:len(typed)]) == typed
    assert _walk(bench, "errors", 20, 1200) == by200[:1200]


def test_a_cursor_from_another_kind_of_page_is_stale(bench: Engine) -> None:
    recent = bench.search("", Filters(), SCOPE, limit=5)
    assert recent.next_cursor is not None
    with pytest.raises(StaleCursor):
        bench.search("", Filters(kinds=["user.text"]), SCOPE, cursor=recent.next_cursor)
    assert len(_walk(bench, "", 200, 600)) == len(set(_walk(bench, "", 200, 600))) == 600
