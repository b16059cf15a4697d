"""Grouping by session (issue 32) over a corpus of many sessions with random-ish content: for pages
of 5 and of 50, with and without filters, the groups are the event-level results regrouped (same
sessions in the order of their first hit, the very same top hit, the same counts), no session
twice; cursors go stale with the index; other projects' sessions never show."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from builder import iso
from pi_event_search.core.authz import Scope
from pi_event_search.core.timestamps import parse_time
from pi_event_search.query.evidence import weights
from pi_event_search.query.search import Filters, StaleCursor
from pi_event_search.service.engine import Engine
from pi_event_search.source.discovery import SessionDir
from sessioncorpus import Corpus, build, expected

CANDIDATES = weights().max_events  # the events the scored order holds

SEED = random.randrange(1 << 30)  # printed on failure: the corpus is drawn anew each run


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Engine, Corpus]]:
    root = tmp_path_factory.mktemp("groups")
    c = build(root / "sessions", str(root / "w"), random.Random(SEED), 180)
    e = Engine(root / "index.sqlite3", [SessionDir(str(root / "sessions"), live=True)])
    e.refresh()
    yield e, c
    e.close()


def events(e: Engine, query: str, f: Filters, scope: Scope, **kw: Any) -> list[dict[str, Any]]:
    """Every event-level hit, in order, 200 at a time."""
    hits: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = e.search(query, f, scope, limit=200, cursor=cursor, **kw)
        hits += page.hits
        cursor = page.next_cursor
        if cursor is None:
            return hits


def groups(e: Engine, query: str, f: Filters, scope: Scope, size: int,
           **kw: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = e.search_groups(query, f, scope, limit=size, cursor=cursor, **kw)
        assert len(page.groups) <= size
        assert page.groups or cursor is None  # a cursor never leads to an empty page
        out += page.groups
        cursor = page.next_cursor
        if cursor is None:
            return out


def regrouped(hits: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any], int]]:
    """(sessionId, first hit, number of hits) per session, in the order of first hits."""
    tops: dict[str, dict[str, Any]] = {}
    counts: dict[str, int] = {}
    for h in hits:
        tops.setdefault(h["sessionId"], h)
        counts[h["sessionId"]] = counts.get(h["sessionId"], 0) + 1
    return [(s, tops[s], counts[s]) for s in tops]


def _check(e: Engine, query: str, f: Filters, scope: Scope, sizes: tuple[int, ...] = (5, 50),
           **kw: Any) -> list[dict[str, Any]]:
    want = regrouped(events(e, query, f, scope, **kw))
    for size in sizes:
        got = groups(e, query, f, scope, size, **kw)
        ids = [g["sessionId"] for g in got]
        assert len(ids) == len(set(ids)), f"a session twice (seed {SEED}, page {size})"
        assert [(g["sessionId"], g["top"], g["matches"]) for g in got] == want, \
            f"{query!r} {f} by {size} (seed {SEED})"
    return got


def _filters(c: Corpus) -> list[Filters]:
    mid = sorted(s.clock for s in c.sessions)[len(c.sessions) // 2]
    return [
        Filters(), Filters(kinds=["tool.result"]), Filters(errors=True),
        Filters(cwd=f"{c.root}/api"), Filters(roles=["user"]),
        Filters(since_ms=parse_time(iso(mid), "since")), Filters(tools=["bash"]),
        Filters(until_ms=parse_time(iso(mid), "until"), kinds=["assistant.text", "tool.call"]),
        Filters(exclude_tools=["read"]), Filters(file="src/quokka.ts"),
        Filters(branch_states=["selected"], selection_states=["direct"]),
    ]


@pytest.mark.parametrize("query", ["error", "failing", "socket retry", "", "zanzibar"])
def test_groups_are_the_event_level_results_regrouped(corpus, query):
    e, c = corpus
    scope = Scope.of([c.root])
    for f in _filters(c):
        got = _check(e, query, f, scope)
        for g in got:
            assert g["top"]["sessionId"] == g["sessionId"] and 1 <= g["matches"] <= g["events"]
    everything = _check(e, query, Filters(), scope, sizes=(7,))
    assert {g["sessionId"] for g in everything} <= {s.session_id for s in c.visible()}


def test_the_walk_crosses_tiers_and_phases(corpus):
    """`error` fills several ranking tiers; `failing` lists its inflections after the words as
    typed: a later page's sessions are judged against every tier before its cursor."""
    e, c = corpus
    scope = Scope.of([c.root])
    where, params = scope.event_sql(None)
    visible = e.reader().execute(
        "SELECT count(*) AS n FROM fts JOIN fragments f ON f.fid = fts.rowid "
        f"JOIN events e ON e.eid = f.eid JOIN sessions s ON s.sid = e.sid "
        f"WHERE fts MATCH 'error' AND {where}", params).fetchone()["n"]
    assert visible > CANDIDATES, f"too few matches to cross a tier (seed {SEED})"
    got = _check(e, "error", Filters(), scope, sizes=(1, 3))
    assert len(got) > 20
    hits = events(e, "failing", Filters(), scope)
    assert any("failing" not in h["snippet"].lower() for h in hits)  # an inflection-only hit
    _check(e, "failing", Filters(), scope, sizes=(1, 4))


def test_a_prefix_and_the_callers_own_session(corpus):
    e, c = corpus
    _check(e, "socket que", Filters(), Scope.of([c.root]), prefix_last=True)
    own = next(s for s in c.visible() if s.version == 3)
    scope = Scope.of([c.root], own.session_id, own.ids[len(own.ids) // 2])
    got = _check(e, "", Filters(), scope)
    assert own.session_id not in {g["sessionId"] for g in got}  # not named: not shown
    mine = _check(e, "", Filters(session_id=own.session_id), scope)
    assert [g["sessionId"] for g in mine] == [own.session_id]
    assert mine[0]["events"] == len(own.ids) // 2  # only what came before the cutoff
    assert mine[0]["matches"] == len(events(e, "", Filters(session_id=own.session_id), scope))


def test_only_authorized_sessions_are_grouped(corpus):
    e, c = corpus
    api = f"{c.root}/api"
    got = groups(e, "", Filters(), Scope.of([api]), 50)
    assert {g["sessionId"] for g in got} == {s.session_id for s in c.under(api)}
    assert groups(e, "error", Filters(), Scope.of([c.base + "/nowhere"]), 50) == []
    everyone = groups(e, "", Filters(), Scope.of(None), 200)
    assert len(everyone) == len(c.sessions)


def test_cursors_belong_to_one_question_and_one_index(tmp_path):
    c = build(tmp_path / "sessions", str(tmp_path / "w"), random.Random(SEED), 30)
    e = Engine(tmp_path / "index.sqlite3", [SessionDir(str(tmp_path / "sessions"), live=True)])
    e.refresh()
    scope = Scope.of([c.root])
    page = e.search_groups("error", Filters(), scope, limit=2)
    assert page.next_cursor
    with pytest.raises(StaleCursor, match="another query"):
        e.search_groups("socket", Filters(), scope, limit=2, cursor=page.next_cursor)
    with pytest.raises(StaleCursor):  # an event-level cursor is not a group cursor
        e.search_groups("error", Filters(), scope, limit=2,
                        cursor=e.search("error", Filters(), scope, limit=2).next_cursor)
    next(s for s in c.visible() if s.version == 3).user("error in a new prompt")
    e.refresh()
    with pytest.raises(StaleCursor, match="index changed"):
        e.search_groups("error", Filters(), scope, limit=2, cursor=page.next_cursor)
    e.close()


def test_a_group_says_what_its_session_is(corpus):
    """Read back from each file on its own: name, first prompt (v1 and legacy string contents,
    a first message that is an image only, long prompts cut), times, counts, parent."""
    e, c = corpus
    got = {g["sessionId"]: g for g in groups(e, "", Filters(), Scope.of([c.root]), 200)}
    assert set(got) == {s.session_id for s in c.visible()}
    shown = {s.session_id: s for s in c.visible()}
    paths = {str(s.path): s for s in c.sessions}
    for sb in c.visible():
        g, want = got[sb.session_id], expected(sb.path)
        assert g["path"] == str(sb.path) and g["uri"] == Path(sb.path).as_uri()
        assert (g["cwd"], g["started"], g["updated"], g["events"]) == \
            (sb.cwd, want.started, want.updated, want.events)
        assert (g["name"], g["firstPrompt"]) == (want.name, want.first_prompt), sb.path
        parent = paths.get(want.parent or "")
        assert g["parentSession"] == (want.parent if parent and parent.session_id in shown
                                      else None)
    shapes = {(s.version, s.header.get("branchedFrom") is not None) for s in c.visible()}
    assert {(3, False), (2, False), (None, False), (None, True)} <= shapes, f"seed {SEED}"
    prompts = [g["firstPrompt"] or "" for g in got.values()]
    assert any(p.endswith("…") and len(p) == 200 for p in prompts)
    assert any(g["parentSession"] for g in got.values())
    assert any(g["name"] for g in got.values()) and any(not g["name"] for g in got.values())
