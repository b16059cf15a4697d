"""Search: the query is data, identifiers are findable, filters, coalescing, snippets, bounds."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builder import SessionBuilder, sample_session
from engine_support import ALL, cli_json, engine, hits
from pi_event_search.query.search import Filters, StaleCursor
from pi_event_search.source.projection import HEAD_CHARS, TAIL_CHARS


@pytest.fixture
def indexed(pi_home):
    sb = sample_session(pi_home.sessions, "/home/dev/proj")
    sb.assistant(tool_calls=[("c9", "read", {"path": "packages/coding-agent/session-manager.ts"})])
    sb.tool_result("c9", "read", "Error: ENOENT: no such file or directory, open "
                   "'session-manager.ts' (toolCallId mismatch)", is_error=True)
    e = engine(pi_home.index)
    e.refresh()
    return e, sb


@pytest.mark.parametrize("query", [
    "session-manager.ts", "ENOENT", "toolCallId", "git push --force",
    "TypeError: Cannot read properties of undefined", '"reading \'close\'"',
])
def test_identifiers_paths_and_errors_are_findable(indexed, query):
    e, _ = indexed
    assert hits(e, query), query


ALPHABET = string.printable + "\"*:^-()ÄéØ漢字\u200b\x00"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=ALPHABET, max_size=60) | st.sampled_from(
    ['"', '"unbalanced', "NEAR(a b)", "a OR b", "NOT x", "x AND", "*", "col:val", "^start",
     "-neg", "((", ")", '""', "a NEAR/2 b", "\\", "'", "''"]))
def test_arbitrary_queries_never_raise(indexed, query):
    e, _ = indexed
    for prefix in (False, True):
        page = e.search(query, Filters(), ALL, prefix_last=prefix)
        assert isinstance(page.hits, list)


def test_operators_are_literal_text(pi_home):
    sb = SessionBuilder(pi_home.sessions, "/p")
    sb.user("alpha OR beta")
    sb.user("only alpha here")
    e = engine(pi_home.index)
    e.refresh()
    assert {h["entryId"] for h in hits(e, "alpha OR beta")} == {sb.ids[0]}
    assert {h["entryId"] for h in hits(e, "alpha NOT beta")} == set()


def test_one_hit_per_event_with_strongest_fragment(indexed):
    e, sb = indexed
    found = hits(e, "websocket")
    keys = [(h["sessionId"], h["entryId"]) for h in found]
    assert len(keys) == len(set(keys))
    many = SessionBuilder(Path(e.dirs[0].path), "/m")
    many.assistant("needle one", tool_calls=[("n1", "bash", {"command": "echo needle"})])
    e.refresh()
    one = hits(e, "needle")
    assert len(one) == 1 and one[0]["fragmentId"] in ("assistant.text:0", "tool.call:1")


def test_snippet_matches_point_at_query_words(indexed):
    e, _ = indexed
    for h in hits(e, "reconnect websocket"):
        assert h["matches"]
        for s, t in h["matches"]:
            assert h["snippet"][s:t].lower() in ("reconnect", "websocket")
        assert "\n" not in h["snippet"] and len(h["snippet"]) <= 202


def test_filters(indexed):
    e, sb = indexed
    assert {h["toolName"] for h in hits(e, "ws", tools=["edit"])} == {"edit"}
    assert all(h["kind"] == "tool.result" for h in hits(e, "ws", kinds=["tool.result"]))
    errs = hits(e, "", errors=True)
    assert errs and all(h["isError"] for h in errs)
    assert {h["role"] for h in hits(e, "reconnect", roles=["user"])} == {"user"}
    assert hits(e, "websocket", session_id=sb.session_id)
    assert not hits(e, "websocket", session_id="nope")
    assert hits(e, "websocket", cwd="/home/dev") and not hits(e, "websocket", cwd="/home/de")
    assert not hits(e, "websocket", since_ms=4_000_000_000_000)
    assert hits(e, "websocket", until_ms=4_000_000_000_000)
    files = hits(e, "", file="src/ws.ts")
    assert {h["toolName"] for h in files} == {"read", "edit"}
    assert hits(e, "", file="/home/dev/proj/src")


def test_oversized_fragment_keeps_head_and_tail(pi_home):
    sb = SessionBuilder(pi_home.sessions, "/p")
    sb.assistant(tool_calls=[("big", "bash", {"command": "make"})])
    head = "headword " + "h" * (HEAD_CHARS - len("headword ") - len(" headend")) + " headend"
    tail = "tailstart " + "t" * (TAIL_CHARS - len("tailstart ") - len(" finalstatus")) \
        + " finalstatus"
    body = head + " middle" * 700_000 + " " + tail  # about 5 MB on one line
    assert len(head) == HEAD_CHARS and len(tail) == TAIL_CHARS
    sb.tool_result("big", "bash", body)
    e = engine(pi_home.index)
    e.refresh()
    for word in ("headword", "headend", "tailstart", "finalstatus"):
        assert hits(e, word), word
    assert not hits(e, "middle"), "the omitted middle is not indexed"
    assert not hits(e, '"headend tailstart"'), "no phrase across the omission marker"
    stored = e.conn.execute("SELECT length(fragment_text(text)) FROM fragments WHERE kind = 'tool.result'")
    assert stored.fetchone()[0] < HEAD_CHARS + TAIL_CHARS + 200


def test_cursor_pages_and_goes_stale(pi_home):
    sb = SessionBuilder(pi_home.sessions, "/p")
    for i in range(7):
        sb.user(f"paged message number {i}")
    e = engine(pi_home.index)
    e.refresh()
    scope = ALL
    first = e.search("paged", Filters(), scope, limit=3)
    second = e.search("paged", Filters(), scope, limit=3, cursor=first.next_cursor)
    third = e.search("paged", Filters(), scope, limit=3, cursor=second.next_cursor)
    ids = [h["entryId"] for h in first.hits + second.hits + third.hits]
    assert sorted(ids) == sorted(sb.ids) and third.next_cursor is None
    with pytest.raises(StaleCursor):
        e.search("other", Filters(), scope, limit=3, cursor=first.next_cursor)
    sb.user("paged once more")
    e.refresh()
    with pytest.raises(StaleCursor):
        e.search("paged", Filters(), scope, limit=3, cursor=first.next_cursor)


@pytest.fixture
def inflections(pi_home):
    """Events worded as people write them; each test searches with other inflections."""
    sb = SessionBuilder(pi_home.sessions, "/home/dev/infl")
    ids = {
        "fails": sb.user("the build fails on CI since the lockfile bump"),
        "failed": sb.assistant("I updated the lockfile; the build failed once more on the runner"),
        "testing": sb.user("testing the reconnect path by hand"),
        "tests": sb.bash("npm run tests", "3 tests passed, websocket reconnected"),
        "updating": sb.user("updating getUserById callers in src/users/repository.ts"),
        "failing": sb.user("failing build is expected here"),
    }
    ids["call"] = sb.assistant(tool_calls=[("c1", "read", {"path": "src/testing/fixtures.ts"})])
    ids["path"] = sb.tool_result("c1", "read", "export const fixtureId = 'a1b2c3d4e5'")
    e = engine(pi_home.index)
    e.refresh()
    return e, ids


def _ids(found):
    return [h["entryId"] for h in found]


@pytest.mark.parametrize("query,expected", [
    ("fail", {"fails", "failed", "failing"}),
    ("build failing", {"fails", "failed", "failing"}),
    ("tested", {"testing", "tests", "call"}),  # the path's "testing" is a word in it too
    ("updated lockfile", {"failed"}),
    ("update getUserById", {"updating"}),
])
def test_query_words_match_other_inflections(inflections, query, expected):
    e, ids = inflections
    assert set(_ids(hits(e, query))) == {ids[k] for k in expected}


def test_exact_forms_rank_before_inflection_only_matches(inflections):
    e, ids = inflections
    found = _ids(hits(e, "build failing"))
    assert found[0] == ids["failing"]  # the only event with "failing" itself
    assert set(found[1:]) == {ids["fails"], ids["failed"]}
    found = _ids(hits(e, "failed"))
    assert found[0] == ids["failed"]
    # exact hits highlight the word as typed; inflection-only hits highlight what matched
    first, *rest = hits(e, "failed")
    assert [first["snippet"][s:t] for s, t in first["matches"]] == ["failed"]
    assert {r["snippet"][s:t] for r in rest for s, t in r["matches"]} == {"fails", "failing"}


def test_inflected_matches_page_after_the_exact_ones(inflections):
    e, ids = inflections
    seen = []
    cursor = None
    while True:
        page = e.search("fails", Filters(), ALL, limit=1, cursor=cursor)
        seen += _ids(page.hits)
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert seen[0] == ids["fails"] and sorted(seen[1:]) == sorted([ids["failed"],
                                                                   ids["failing"]])


@pytest.mark.parametrize("query", [
    '"build fail"',  # a quoted phrase stays exact: "build fails" is not "build fail"
    "getUserByIds",  # identifiers are not English words
    "src/test/fixtures.ts",  # nor are paths
    "a1b2c3d4e",  # nor hashes
    "fixtureIds",
])
def test_phrases_identifiers_paths_and_hashes_stay_exact(inflections, query):
    e, _ = inflections
    assert hits(e, query) == []


def test_exact_identifiers_and_paths_still_match(inflections):
    e, ids = inflections
    assert _ids(hits(e, "src/testing/fixtures.ts")) == [ids["call"]]
    assert _ids(hits(e, "a1b2c3d4e5")) == [ids["path"]]
    assert _ids(hits(e, '"build fails"')) == [ids["fails"]]


def test_inflections_through_the_cli(inflections):
    _, ids = inflections
    data = cli_json("search", "--all", "--exact", "updated lockfile")
    assert [h["entryId"] for h in data["hits"]] == [ids["failed"]]
    data = cli_json("search", "--all", "updated lockfile")  # then the partial hits, marked
    assert data["hits"][0]["entryId"] == ids["failed"] and data["hits"][0]["missing"] == []
    # each partial hit says what it lacks itself (the question's answer holding "updated" lends
    # it weight, not a word)
    assert {h["entryId"]: h["missing"] for h in data["hits"][1:]} == {
        ids["fails"]: ["updated"], ids["updating"]: ["lockfile"]}
    data = cli_json("search", "--all", "tested")
    assert {h["entryId"] for h in data["hits"]} == {ids["testing"], ids["tests"], ids["call"]}


def test_a_common_word_ranks_by_length_and_pages_cleanly(pi_home):
    """More matching fragments than the scored order holds: the shortest first, then pages of
    the rest with no event twice, to the last."""
    from pi_event_search.query.evidence import weights

    sb = SessionBuilder(pi_home.sessions, "/home/dev/full")
    long_ids = [sb.user("alpha " + "filler words " * (20 + i % 7))
                for i in range(weights().max_events)]
    name = sb.session_info("alpha")
    short = sb.user("alpha now")
    e = engine(pi_home.index)
    e.refresh()
    first = e.search("alpha", Filters(), ALL, limit=20)
    # the shortest texts holding the word first, the long ones after
    assert [h["entryId"] for h in first.hits[:2]] == [name, short]
    seen = [h["entryId"] for h in first.hits]
    cursor = first.next_cursor
    for _ in range(4):
        page = e.search("alpha", Filters(), ALL, limit=20, cursor=cursor)
        seen += [h["entryId"] for h in page.hits]
        cursor = page.next_cursor
    assert len(seen) == len(set(seen)) == 100 and set(seen) <= {name, short, *long_ids}
    # walking to the end lists every event holding the word once, past the scored order
    everything, cursor = [], None
    while True:
        page = e.search("alpha", Filters(), ALL, limit=200, cursor=cursor)
        everything += [h["entryId"] for h in page.hits]
        if (cursor := page.next_cursor) is None:
            break
    assert len(everything) == len(set(everything)) == len(long_ids) + 2


def test_tool_filter_narrowed_in_fts_equals_the_sql_filter(indexed):
    e, _ = indexed
    for tools in (["bash"], ["read"], ["edit"], ["nope"]):
        for kinds in (["tool.result"], ["tool.result", "bash.output"], ["bash.command"]):
            narrowed = {h["ref"] for h in hits(e, "ws", tools=tools, kinds=kinds)}
            every = {h["ref"] for h in hits(e, "ws", kinds=kinds) if h["toolName"] in tools}
            assert narrowed == every, (tools, kinds)


# (path as typed, the file it names relative to the project; None: a directory, every file below)
PATH_FORMS = [
    ("src/ws.ts", "src/ws.ts"),
    ("./src/ws.ts", "src/ws.ts"),
    ("src/../src/ws.ts", "src/ws.ts"),
    ("../proj/src/ws.ts", "src/ws.ts"),
    (".env", ".env"),
    ("./.env", ".env"),
    (".github/workflows/ci.yml", ".github/workflows/ci.yml"),
    ("docs/my notes.md", "docs/my notes.md"),
    ("  @docs/my notes.md ", "docs/my notes.md"),
    ("{proj}/.env", ".env"),
    ("{proj}/.github", ".github/workflows/ci.yml"),
    ("{proj}/./src/../docs/my notes.md", "docs/my notes.md"),
    ("env", "env"),  # a file named env, not .env
    ("github/workflows/ci.yml", None),
]


@pytest.fixture
def path_forms(pi_home, tmp_path):
    proj = tmp_path / "proj"
    sb = SessionBuilder(pi_home.sessions, str(proj))
    sb.user("touch some files")
    ids = {}
    for rel in ("src/ws.ts", ".env", ".github/workflows/ci.yml", "docs/my notes.md", "env"):
        ids[rel] = sb.assistant(tool_calls=[(rel, "edit", {"path": rel, "edits": [
            {"oldText": "a", "newText": "b"}]})])
        sb.tool_result(rel, "edit", "ok")
    e = engine(pi_home.index)
    e.refresh()
    return e, proj, ids


@pytest.mark.parametrize(("typed", "named"), PATH_FORMS, ids=[t for t, _ in PATH_FORMS])
def test_file_filter_and_history_take_every_path_form(path_forms, typed, named):
    """Relative paths resolve against the root; nothing is stripped as characters (`.env` is
    not `env`), `..` stays within the root, spaces are part of the name."""
    e, proj, ids = path_forms
    from pi_event_search.core.authz import Scope

    scope = Scope.of([str(proj)])
    path = typed.replace("{proj}", str(proj))
    expected = {ids[named]} if named else set()
    found = {h["entryId"] for h in e.search("", Filters(file=path), scope, limit=50).hits}
    assert found == expected, typed
    if not typed.startswith("{proj}/.github"):  # a directory has no file history
        history = e.file_history(path, scope)
        assert {h["entryId"] for h in history.hits} == expected, typed


def test_a_word_is_written_apart_only_into_words_the_history_holds():
    """query/expansions.py `written_apart`: the split whose rarer part is commonest, parts of
    three letters or more, and no split at all outside 6-24 letters or for anything not letters."""
    from pi_event_search.query.expansions import written_apart
    held = {"type": 120, "check": 80, "typec": 3, "heck": 2, "non": 30, "zero": 12, "nonz": 1,
            "ero": 40, "no": 500, "nzero": 0}
    asked: list[str] = []

    def count(token: str) -> int:
        asked.append(token)
        return held.get(token, 0)

    assert written_apart("typecheck", count) == ("type", "check")
    assert written_apart("nonzero", count) == ("non", "zero")  # not (nonz, ero): nonz is rarer
    assert len(asked) <= 2 * len("typecheck") + 2 * len("nonzero")  # two counts a split
    assert written_apart("zzzzzzzz", count) is None  # no split the history holds
    assert written_apart("typecheck2", count) is None and written_apart("type-check", count) is None
    assert written_apart("nozero", count) is None  # `no` is shorter than three letters
    asked.clear()
    assert written_apart("typecheck" * 3, count) is None and asked == []  # past 24: not tried
