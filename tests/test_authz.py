"""Issue 5, authorization: who may see which session, enforced in every answer.

A property test builds random directory trees (symlinks included) and sessions whose cwds lie
inside, outside, beside and above the roots, then checks that search, read, trace and status
never reveal anything from a session the caller may not see. Named tests pin the edge cases
through the CLI (`pi_event_search.cli.main.main`) and the engine API.

Expectations come from what the fixtures wrote: visibility from the recorded cwd (canonicalised
with the operating system's own `realpath`, compared by path components with `commonpath`), and
the secret strings from the JSONL lines of the sessions the caller may not see.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builder import SessionBuilder, sample_session
from pi_event_search.cli import main as cli
from pi_event_search.core.authz import Scope
from pi_event_search.core.errors import NotFound
from pi_event_search.query.search import Filters
from pi_event_search.service.engine import Engine
from pi_event_search.source.discovery import SessionDir
from support import PiHome

ABSENT = object()  # a header without any "cwd" key
SHARED = "sharedword"  # in several entries of every session
TOKEN = re.compile(r"zq\d{4}")


# -- building a world ------------------------------------------------------------------------------

class Tokens:
    """Unique, fixed-width words (`zq0007`): one never contains another."""

    def __init__(self) -> None:
        self.n = 0

    def __call__(self) -> str:
        self.n += 1
        return f"zq{self.n:04d}"


def fill(sb: SessionBuilder, tok: Tokens, *, branchy: bool = False) -> None:
    """Every common entry kind, each carrying its own token; SHARED in several of them."""
    first = sb.user(f"{SHARED} {tok()} question")
    call = f"call_{tok()}"
    sb.assistant(f"{tok()} answer", tool_calls=[(call, "bash", {"command": f"echo {tok()}"})])
    sb.tool_result(call, "bash", f"{tok()} output {SHARED}")
    sb.label(first, tok())
    if branchy:
        sb.branch(first)
        sb.user(f"{SHARED} {tok()} retry")
    sb.bash(f"ls {tok()}", f"{tok()} listing")
    sb.session_info(f"title {tok()}")
    sb.user(f"{SHARED} {tok()} more")


def set_cwd(sb: SessionBuilder, cwd: object) -> None:
    """Rewrite the header's cwd (absent, null, or any string) in place."""
    header = dict(sb.header)
    if cwd is ABSENT:
        header.pop("cwd", None)
    else:
        header["cwd"] = cwd
    rest = sb.path.read_bytes().split(b"\n", 1)[1]
    sb.path.write_bytes(sb.dumps(header) + b"\n" + rest)
    sb.header = header


@dataclass
class Built:
    sid: str
    path: Path
    cwd: object
    entries: list[tuple[str, bytes]] = field(default_factory=list)  # (entry id, raw line)

    def load(self) -> Built:
        lines = [ln for ln in self.path.read_bytes().split(b"\n")[1:] if ln.strip()]
        self.entries = [(json.loads(ln)["id"], ln) for ln in lines]
        return self


@dataclass
class World:
    roots: list[str]
    sessions: list[Built]
    current: tuple[str, str] | None = None  # (session id, cutoff entry id)

    def __post_init__(self) -> None:
        canon = [os.path.realpath(r) for r in self.roots]
        self.visible = {b.sid for b in self.sessions if _under(b.cwd, canon)}
        # (session, entry) pairs a caller may get back when it targets them explicitly
        self.exposable: set[tuple[str, str]] = set()
        for b in self.sessions:
            if b.sid not in self.visible:
                continue
            ids = [e for e, _ in b.entries]
            if self.current is not None and b.sid == self.current[0]:
                cut = self.current[1]
                ids = ids[: ids.index(cut)] if cut in ids else ids
            self.exposable |= {(b.sid, e) for e in ids}
        shown = set().union(*(set(TOKEN.findall(ln.decode())) for b in self.sessions
                              for e, ln in b.entries if (b.sid, e) in self.exposable))
        every = set().union(*(set(TOKEN.findall(ln.decode())) for b in self.sessions
                              for _, ln in b.entries))
        self.secrets = sorted(every - shown)
        self.secrets += [b.sid for b in self.sessions if b.sid not in self.visible]
        self.secrets += [str(b.path) for b in self.sessions if b.sid not in self.visible]
        self.secrets += [f"pi-event:{b.sid}/{e}" for b in self.sessions for e, _ in b.entries
                         if (b.sid, e) not in self.exposable]

    @property
    def listed(self) -> set[str]:
        """Sessions an unfiltered search may return (the current one is excluded)."""
        return self.visible - ({self.current[0]} if self.current else set())

    def refs(self) -> Iterator[tuple[str, str]]:
        for b in self.sessions:
            for e, _ in b.entries:
                yield b.sid, e

    def scope(self) -> Scope:
        cur = self.current
        return Scope.of(self.roots, cur[0] if cur else None, cur[1] if cur else None)

    def by_sid(self, sid: str) -> Built:
        return next(b for b in self.sessions if b.sid == sid)


def _under(cwd: object, roots: list[str]) -> bool:
    """The oracle: an absolute cwd whose real path is a root or below one, by components."""
    if not isinstance(cwd, str) or not cwd.startswith("/"):
        return False
    real = os.path.realpath(cwd)
    return any(os.path.commonpath([real, r]) == r for r in roots)


def leaks(obj: Any, world: World) -> list[str]:
    text = json.dumps(obj, ensure_ascii=False, default=str)
    return [s for s in world.secrets if s in text]


# -- random plans ------------------------------------------------------------------------------

DIR_NAMES = ("p", "p2", "q", "é x")
VARIANTS = 8  # see spell()


def spell(path: str, variant: int, base: str) -> str:
    """Another way to write (or to step beside, below or above) a path."""
    return [
        path,                                              # as is
        path + "/",                                        # trailing slash
        path + "/ghost",                                   # below, not existing
        path + "2",                                        # string-prefix sibling
        path + "/..",                                      # above
        base + path[len(base):].replace("/", "//"),        # repeated slashes
        path + "/./",                                      # dot
        path + "/../" + os.path.basename(path),            # `..` and back (physically)
    ][variant % VARIANTS]


@dataclass(frozen=True)
class SessionPlan:
    kind: str  # path | relative | empty | absent | null
    place: int
    variant: int
    archive: bool
    fork_of: int | None
    branchy: bool


@dataclass(frozen=True)
class Plan:
    dirs: tuple[tuple[int, str], ...]  # (parent index, name); 0 = w (workspace), 1 = o (outside)
    links: tuple[tuple[int, int, bool], ...]  # (in dir, target candidate, relative target)
    roots: tuple[tuple[int, int], ...]  # (candidate, variant)
    sessions: tuple[SessionPlan, ...]
    current: tuple[int, int] | None  # (session, cutoff position)
    archive_in: int


session_plans = st.builds(
    SessionPlan,
    kind=st.sampled_from(["path"] * 6 + ["relative", "empty", "absent", "null"]),
    place=st.just(1) | st.integers(0, 40),
    variant=st.sampled_from([0, 0, 0, *range(VARIANTS)]), archive=st.booleans(),
    fork_of=st.none() | st.integers(0, 10), branchy=st.booleans())

plans = st.builds(
    Plan,
    dirs=st.lists(st.tuples(st.integers(0, 20), st.sampled_from(DIR_NAMES)), min_size=1,
                  max_size=6).map(tuple),
    links=st.lists(st.tuples(st.integers(0, 20), st.integers(0, 40), st.booleans()),
                   max_size=3).map(tuple),
    roots=st.lists(st.tuples(st.just(1) | st.integers(0, 40),  # 1: the workspace dir `w`
                             st.sampled_from([0, 0, 0, 1, 4, 5, 6, 7])),
                   min_size=1, max_size=2).map(tuple),
    sessions=st.lists(session_plans, min_size=2, max_size=6).map(tuple),
    current=st.none() | st.tuples(st.integers(0, 10), st.integers(0, 40)),
    archive_in=st.integers(0, 20),
)


def materialize(plan: Plan, base: Path) -> tuple[World, Path, Path]:
    """Create the tree, the links and the sessions; return the world, live and archive dirs."""
    b = str(base)
    dirs = [f"{b}/w", f"{b}/o"]
    for parent, name in plan.dirs:
        path = f"{dirs[parent % len(dirs)]}/{name}"
        if path not in dirs:
            dirs.append(path)
    for d in dirs:
        os.makedirs(d, exist_ok=True)
    candidates = [b, *dirs]
    for k, (where, target, relative) in enumerate(plan.links):
        link = f"{dirs[where % len(dirs)]}/l{k}"
        dest = candidates[target % len(candidates)]
        os.symlink(os.path.relpath(dest, os.path.dirname(link)) if relative else dest, link)
        candidates.append(link)
    live = base / "live"
    archive = Path(dirs[plan.archive_in % len(dirs)]) / "archive"
    roots = [spell(candidates[c % len(candidates)], v, b) for c, v in plan.roots]
    tok = Tokens()
    builders: list[SessionBuilder] = []
    built: list[Built] = []
    for i, sp in enumerate(plan.sessions):
        target = candidates[sp.place % len(candidates)]
        cwd: object = {
            "path": spell(target, sp.variant, b), "relative": os.path.relpath(target, b),
            "empty": "", "absent": ABSENT, "null": None}[sp.kind]
        where = archive if sp.archive else live
        writing_cwd = cwd if isinstance(cwd, str) else f"{b}/placeholder"
        if sp.fork_of is not None and builders:
            sb = builders[sp.fork_of % len(builders)].fork(where, writing_cwd,
                                                           name_seed=f"{b}#{i}")
        else:
            sb = SessionBuilder(where, writing_cwd, name_seed=f"{b}#{i}")
        set_cwd(sb, cwd)  # exactly what was planned (a fork given "" would keep its parent's)
        fill(sb, tok, branchy=sp.branchy)
        builders.append(sb)
        built.append(Built(sb.session_id, sb.path, cwd).load())
    current = None
    if plan.current is not None:  # mostly a visible session: the interesting case
        seen = World(roots, built).visible
        pool = [b for b in built if b.sid in seen] if seen and plan.current[0] % 4 else built
        who = pool[plan.current[0] % len(pool)]
        current = (who.sid, who.entries[plan.current[1] % len(who.entries)][0])
    return World(roots, built, current), live, archive


# -- the property ----------------------------------------------------------------------------

def all_pages(engine: Engine, query: str, filters: Filters, scope: Scope) -> list[dict[str, Any]]:
    hits: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = engine.search(query, filters, scope, limit=50, cursor=cursor)
        hits += page.hits
        cursor = page.next_cursor
        if cursor is None:
            return hits


def not_found_message(sid: str, eid: str) -> str:
    return f"Event not found: pi-event:{sid}/{eid}"


def check_world(engine: Engine, world: World) -> None:
    scope = world.scope()
    # search: exactly the listed sessions, nothing secret in any hit
    hits = all_pages(engine, SHARED, Filters(), scope)
    assert {h["sessionId"] for h in hits} == world.listed
    assert not leaks(hits, world)
    recent = all_pages(engine, "", Filters(), scope)
    assert {h["sessionId"] for h in recent} == world.listed
    assert not leaks(recent, world)
    for secret in world.secrets:
        if TOKEN.fullmatch(secret):
            assert engine.search(secret, Filters(), scope).hits == [], secret
    for b in world.sessions:
        targeted = all_pages(engine, SHARED, Filters(session_id=b.sid), scope)
        expected = {e for e, ln in b.entries
                    if (b.sid, e) in world.exposable and SHARED.encode() in ln}
        assert {h["entryId"] for h in targeted} == expected, b.sid
        assert not leaks(targeted, world)
        if isinstance(b.cwd, str):
            assert not leaks(all_pages(engine, "", Filters(cwd=b.cwd), scope), world)
    # read and trace: exposable events answer without secrets, the rest is "not found"
    for sid, eid in world.refs():
        if (sid, eid) in world.exposable:
            for order in ("append", "branch"):
                got = engine.read(f"{sid}/{eid}", scope, before=5, after=5, order=order)
                assert got["event"]["entryId"] == eid
                assert not leaks(got, world), (sid, eid, leaks(got, world))
            traced = engine.trace(f"{sid}/{eid}", scope)
            assert not leaks(traced, world), (sid, eid, leaks(traced, world))
            for node in traced["lineage"]:
                if node.get("masked"):
                    assert node == {"relation": node["relation"], "masked": True}
        else:
            for call in (lambda r: engine.read(r, scope), lambda r: engine.trace(r, scope)):
                with pytest.raises(NotFound) as exc:
                    call(f"{sid}/{eid}")
                assert str(exc.value) == not_found_message(sid, eid)
    # counts
    status = engine.status(scope)
    assert status["sessions"] == len(world.visible)
    assert status["events"] == sum(len(b.entries) for b in world.sessions
                                   if b.sid in world.visible)
    assert not leaks({k: v for k, v in status.items() if k != "events"}, world)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=plans)
def test_property_nothing_invisible_ever_comes_back(plan: Plan) -> None:
    base = Path(os.path.realpath(tempfile.mkdtemp(prefix="authz-")))
    try:
        world, live, archive = materialize(plan, base)
        engine = Engine(base / "index.sqlite3",
                        [SessionDir(str(live), True), SessionDir(str(archive), False)])
        try:
            engine.refresh()
            check_world(engine, world)
        finally:
            engine.reader().close()
            engine.close()
    finally:
        shutil.rmtree(base, ignore_errors=True)


# -- named cases, through the CLI ------------------------------------------------------------

def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    rc = cli.main(list(args))
    out, err = capsys.readouterr()
    return rc, (json.loads(out) if rc == 0 and "--json" in args else out), err


def session(home: PiHome, cwd: str, tok: Tokens, where: Path | None = None, **kw: Any
            ) -> SessionBuilder:
    sb = SessionBuilder(where or home.sessions, cwd, name_seed=f"{cwd}#{tok()}", **kw)
    fill(sb, tok)
    return sb


def found_sessions(capsys: pytest.CaptureFixture[str], *scope: str) -> set[str]:
    rc, data, err = run(capsys, "search", SHARED, "--json", "--limit", "200", *scope)
    assert rc == 0, err
    return {h["sessionId"] for h in data["hits"]}


def assert_hidden(capsys: pytest.CaptureFixture[str], sb: SessionBuilder, *scope: str) -> None:
    """Nothing of sb through search (any filter), read or trace; errors as for a missing event."""
    assert sb.session_id not in found_sessions(capsys, *scope)
    rc, data, _ = run(capsys, "search", "", "--json", "--session", sb.session_id, *scope)
    assert rc == 0 and data["hits"] == []
    rc, data, _ = run(capsys, "search", "", "--json", "--cwd", str(sb.cwd), *scope)
    assert rc == 0 and sb.session_id not in json.dumps(data)
    for command in ("read", "trace"):
        ref = f"{sb.session_id}/{sb.ids[0]}"
        assert run(capsys, command, ref, *scope) == (
            1, "", f"pi-event-search: {not_found_message(sb.session_id, sb.ids[0])}\n")


def assert_shown(capsys: pytest.CaptureFixture[str], sb: SessionBuilder, *scope: str) -> None:
    assert sb.session_id in found_sessions(capsys, *scope)
    rc, data, err = run(capsys, "read", f"{sb.session_id}/{sb.ids[0]}", "--json", *scope)
    assert rc == 0, err
    assert data["event"]["sessionId"] == sb.session_id


@pytest.fixture
def tok() -> Tokens:
    return Tokens()


def test_prefix_sibling_is_not_under_the_root(pi_home: PiHome, tmp_path: Path, capsys: Any,
                                              tok: Tokens) -> None:
    for name in ("proj", "proj2", "proj-old", "proj/sub"):
        (tmp_path / name).mkdir(parents=True)
    inside = session(pi_home, str(tmp_path / "proj"), tok)
    below = session(pi_home, str(tmp_path / "proj/sub"), tok)
    beside = [session(pi_home, str(tmp_path / n), tok) for n in ("proj2", "proj-old")]
    ghost = session(pi_home, str(tmp_path / "projX/never-created"), tok)
    root = ("--root", str(tmp_path / "proj"))
    assert found_sessions(capsys, *root) == {inside.session_id, below.session_id}
    for sb in [*beside, ghost]:
        assert_hidden(capsys, sb, *root)
    assert found_sessions(capsys, "--all") >= {sb.session_id for sb in beside}


def test_dotdot_cannot_escape(pi_home: PiHome, tmp_path: Path, capsys: Any, tok: Tokens) -> None:
    for name in ("proj/sub", "outside", "proj2"):
        (tmp_path / name).mkdir(parents=True)
    proj = str(tmp_path / "proj")
    escapes = [session(pi_home, f"{proj}/../outside", tok),
               session(pi_home, f"{proj}/sub/../../proj2", tok),
               session(pi_home, f"{proj}/..", tok),
               session(pi_home, f"{proj}/missing/../../outside", tok)]
    stays = [session(pi_home, f"{proj}/sub/..", tok), session(pi_home, f"{proj}/./sub", tok)]
    root = ("--root", proj)
    assert found_sessions(capsys, *root) == {sb.session_id for sb in stays}
    for sb in escapes:
        assert_hidden(capsys, sb, *root)
    # the root itself may be written with `..`: it is canonicalised the same way
    assert found_sessions(capsys, "--root", f"{proj}/sub/..") == {sb.session_id for sb in stays}


def test_symlinked_root(pi_home: PiHome, tmp_path: Path, capsys: Any, tok: Tokens) -> None:
    real = tmp_path / "real" / "proj"
    (real / "sub").mkdir(parents=True)
    (tmp_path / "other").mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    by_real = session(pi_home, str(real / "sub"), tok)
    by_link = session(pi_home, str(link), tok)
    other = session(pi_home, str(tmp_path / "other"), tok)
    wanted = {by_real.session_id, by_link.session_id}
    assert found_sessions(capsys, "--root", str(link)) == wanted
    assert found_sessions(capsys, "--root", str(real)) == wanted
    assert_hidden(capsys, other, "--root", str(link))


def test_symlinked_cwd_pointing_outside(pi_home: PiHome, tmp_path: Path, capsys: Any,
                                        tok: Tokens) -> None:
    proj, outside = tmp_path / "proj", tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    proj.mkdir()
    (proj / "escape").symlink_to(outside)
    (proj / "rel-escape").symlink_to(Path("..") / "outside")
    (tmp_path / "way-in").symlink_to(proj)
    escapes = [session(pi_home, str(proj / "escape"), tok),
               session(pi_home, str(proj / "escape/deep"), tok),
               session(pi_home, str(proj / "rel-escape"), tok)]
    way_in = session(pi_home, str(tmp_path / "way-in"), tok)  # outside by name, inside in fact
    root = ("--root", str(proj))
    assert found_sessions(capsys, *root) == {way_in.session_id}
    for sb in escapes:
        assert_hidden(capsys, sb, *root)
    assert found_sessions(capsys, "--root", str(outside)) == {sb.session_id for sb in escapes}


def test_trailing_and_repeated_slashes(pi_home: PiHome, tmp_path: Path, capsys: Any,
                                       tok: Tokens) -> None:
    (tmp_path / "proj/sub").mkdir(parents=True)
    proj = str(tmp_path / "proj")
    spelled = [session(pi_home, proj + "/", tok), session(pi_home, proj + "//sub//", tok),
               session(pi_home, proj.replace("/", "//") + "/", tok)]
    beside = session(pi_home, proj + "2/", tok)
    ids = {sb.session_id for sb in spelled}
    for root in (proj, proj + "/", proj + "///", proj.replace("/", "//")):
        assert found_sessions(capsys, "--root", root) == ids, root
        assert_hidden(capsys, beside, "--root", root)


def test_relative_cwd_is_never_visible(pi_home: PiHome, tmp_path: Path, capsys: Any,
                                       monkeypatch: pytest.MonkeyPatch, tok: Tokens) -> None:
    (tmp_path / "proj").mkdir()
    monkeypatch.chdir(tmp_path)
    relative = [session(pi_home, cwd, tok) for cwd in ("proj", "./proj", ".", "proj/..", "~")]
    anchor = session(pi_home, str(tmp_path / "proj"), tok)
    for scope in (("--root", str(tmp_path)), ("--root", "/"), ("--root", "."), ()):
        assert found_sessions(capsys, *scope) == {anchor.session_id}, scope
        for sb in relative:
            assert_hidden(capsys, sb, *scope)
    # indexed all the same: the trusted opt-out sees them
    assert found_sessions(capsys, "--all") == {sb.session_id for sb in [*relative, anchor]}


@pytest.mark.parametrize("cwd", ["", ABSENT, None, 42, ["/"], "\x00/"])
def test_empty_or_missing_cwd_is_never_visible(pi_home: PiHome, capsys: Any, tok: Tokens,
                                               cwd: object) -> None:
    sb = session(pi_home, "/", tok)
    set_cwd(sb, cwd)
    assert_hidden(capsys, sb, "--root", "/")
    assert found_sessions(capsys, "--all") == {sb.session_id}


def test_archive_directory_grants_nothing(pi_home: PiHome, tmp_path: Path, capsys: Any,
                                          tok: Tokens) -> None:
    proj = tmp_path / "proj"
    archive = proj / "old-sessions"  # an archive kept inside the root itself
    archive.mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    kept = session(pi_home, str(proj), tok, where=archive)
    foreign = session(pi_home, str(tmp_path / "elsewhere"), tok, where=archive)
    # a live file in the folder Pi would use for proj, but recorded elsewhere
    misfiled = session(pi_home, str(tmp_path / "elsewhere"), tok)
    (pi_home.sessions / "--proj--").mkdir()
    misfiled.path.rename(pi_home.sessions / "--proj--" / misfiled.path.name)
    scope = ("--root", str(proj), "--sessions-dir", str(archive))
    assert found_sessions(capsys, *scope) == {kept.session_id}
    for sb in (foreign, misfiled):
        assert_hidden(capsys, sb, *scope)
    assert found_sessions(capsys, "--all", "--sessions-dir", str(archive)) == {
        kept.session_id, foreign.session_id, misfiled.session_id}


def test_fork_parent_outside_root_is_masked(pi_home: PiHome, tmp_path: Path, capsys: Any,
                                            tok: Tokens) -> None:
    (tmp_path / "proj").mkdir()
    (tmp_path / "outside").mkdir()
    parent = session(pi_home, str(tmp_path / "outside"), tok)
    child = parent.fork(pi_home.sessions, str(tmp_path / "proj"), name_seed="child")
    own = child.user(f"{SHARED} {tok()} in the child")
    grandchild = child.fork(pi_home.sessions, str(tmp_path / "outside"), name_seed="grand")
    grandchild.user(f"{tok()} in the grandchild")
    root = ("--root", str(tmp_path / "proj"))
    rc, traced, err = run(capsys, "trace", f"{child.session_id}/{own}", "--json", *root)
    assert rc == 0, err
    assert traced["lineage"] == [{"relation": "session-parent", "masked": True},
                                 {"relation": "session-child", "masked": True}]
    text = json.dumps(traced)
    for hidden in (parent, grandchild):
        assert hidden.session_id not in text and str(hidden.path) not in text
    # the copied prefix belongs to the child (it is in the child's file); the parent stays hidden
    rc, read, _ = run(capsys, "read", f"{child.session_id}/{child.ids[0]}", "--json",
                      "--after", "50", *root)
    assert rc == 0 and parent.session_id not in json.dumps(read)
    assert_hidden(capsys, parent, *root)
    assert_hidden(capsys, grandchild, *root)
    # trusted: the same lineage names both (so the masking above is not an empty answer)
    rc, trusted, _ = run(capsys, "trace", f"{child.session_id}/{own}", "--json", "--all")
    assert [n.get("sessionId") for n in trusted["lineage"]] == [parent.session_id,
                                                                grandchild.session_id]


def test_fork_anchor_and_lineage_of_visible_relatives(pi_home: PiHome, tmp_path: Path,
                                                      capsys: Any, tok: Tokens) -> None:
    (tmp_path / "proj").mkdir()
    parent = session(pi_home, str(tmp_path / "proj"), tok)
    child = parent.fork(pi_home.sessions, str(tmp_path / "proj"), name_seed="child")
    own = child.user(f"{tok()} after the fork")
    rc, traced, err = run(capsys, "trace", f"{child.session_id}/{own}", "--json",
                          "--root", str(tmp_path / "proj"))
    assert rc == 0, err
    (lineage,) = traced["lineage"]
    assert lineage["sessionId"] == parent.session_id
    assert lineage["forkAnchor"]["ref"] == f"pi-event:{parent.session_id}/{parent.leaf}"


def _cutoff_session(home: PiHome, cwd: str, tok: Tokens) -> tuple[SessionBuilder, list[str]]:
    """A session whose later half (from the cutoff on) names and labels the earlier half."""
    sb = SessionBuilder(home.sessions, cwd, name_seed="current")
    early = [sb.user(f"{SHARED} {tok()} early"), sb.assistant(f"{SHARED} {tok()} reply")]
    cutoff = sb.assistant(f"{SHARED} {tok()} calling", tool_calls=[
        ("call_cut", "bash", {"command": f"pi-event-search {SHARED}"})])
    sb.tool_result("call_cut", "bash", f"{SHARED} {tok()} result")
    sb.label(early[0], f"{tok()}")
    sb.session_info(f"{tok()} name")
    sb.user(f"{SHARED} {tok()} late")
    return sb, [*early, cutoff]


def test_current_session_cutoff_cli(pi_home: PiHome, tmp_path: Path, capsys: Any,
                                    tok: Tokens) -> None:
    (tmp_path / "proj").mkdir()
    other = session(pi_home, str(tmp_path / "proj"), tok)
    sb, (first, second, cutoff) = _cutoff_session(pi_home, str(tmp_path / "proj"), tok)
    after = sb.ids[sb.ids.index(cutoff):]
    late_tokens = set(TOKEN.findall(b"".join(
        ln for ln in sb.path.read_bytes().split(b"\n")[1:] if json.loads(ln or b"{}").get("id")
        in after).decode()))
    assert late_tokens
    me = ("--root", str(tmp_path / "proj"), "--current-session", sb.session_id,
          "--cutoff", cutoff)

    def clean(obj: Any) -> None:
        text = json.dumps(obj)
        assert not [t for t in late_tokens if t in text]
        assert not [f"{sb.session_id}/{e}" for e in after if f"{sb.session_id}/{e}" in text]

    # excluded by default
    assert found_sessions(capsys, *me) == {other.session_id}
    assert sb.session_id in found_sessions(capsys, "--root", str(tmp_path / "proj"))
    # targeted: strictly before the cutoff
    rc, data, _ = run(capsys, "search", SHARED, "--json", "--session", sb.session_id, *me)
    assert rc == 0 and {h["entryId"] for h in data["hits"]} == {first, second}
    clean(data)
    rc, data, _ = run(capsys, "search", "", "--json", "--session", sb.session_id, *me)
    assert rc == 0 and {h["entryId"] for h in data["hits"]} <= {first, second}
    clean(data)
    for entry in (first, second):
        for command, extra in (("read", ("--after", "50", "--order", "branch")),
                               ("read", ("--after", "50")), ("trace", ())):
            rc, data, err = run(capsys, command, f"{sb.session_id}/{entry}", "--json", *extra,
                                *me)
            assert rc == 0, err
            clean(data)
    for entry in after:
        for command in ("read", "trace"):
            assert run(capsys, command, f"{sb.session_id}/{entry}", *me) == (
                1, "", f"pi-event-search: {not_found_message(sb.session_id, entry)}\n")
    # without the cutoff the same reads succeed (the fixture really has those entries)
    rc, _, _ = run(capsys, "read", f"{sb.session_id}/{cutoff}", "--root", str(tmp_path / "proj"))
    assert rc == 0
    # naming the own session without its cutoff would show all of it: a usage error
    rc, _, err = run(capsys, "search", SHARED, "--root", str(tmp_path / "proj"),
                     "--current-session", sb.session_id)
    assert rc == 2 and "--cutoff" in err


NOT_FOUND_LINE = "pi-event-search: Event not found: pi-event:REF\n"


def test_invisible_and_missing_give_the_same_error_cli(pi_home: PiHome, tmp_path: Path,
                                                       capsys: Any, tok: Tokens) -> None:
    (tmp_path / "proj").mkdir()
    (tmp_path / "outside").mkdir()
    visible = session(pi_home, str(tmp_path / "proj"), tok)
    hidden = session(pi_home, str(tmp_path / "outside"), tok)
    fake_session = hidden.session_id[:-4] + ("0000" if not hidden.session_id.endswith("0000")
                                             else "1111")
    cases = {
        "invisible": (hidden.session_id, hidden.ids[2]),
        "no such session": (fake_session, hidden.ids[2]),
        "no such entry": (visible.session_id, "0badc0de"),
        "invisible entry id in a visible session": (visible.session_id, hidden.ids[2]),
    }
    root = ("--root", str(tmp_path / "proj"))
    for options in ((), ("--json",), ("--fragment", "user.text:9"), ("--order", "branch"),
                    ("--offset", "5", "--length", "1")):
        answers = {}
        for name, (sid, eid) in cases.items():
            rc, out, err = run(capsys, "read", f"pi-event:{sid}/{eid}", *options, *root)
            answers[name] = (rc, out, err.replace(f"{sid}/{eid}", "REF"))
        assert set(answers.values()) == {(1, "", NOT_FOUND_LINE)}
    for form in ("{}/{}", "pi-event:{}/{}", "pi-event:{}/{}#user.text:0"):
        answers = {}
        for name, (sid, eid) in cases.items():
            rc, out, err = run(capsys, "trace", form.format(sid, eid), *root)
            answers[name] = (rc, out, err.replace(f"{sid}/{eid}", "REF"))
        assert set(answers.values()) == {(1, "", NOT_FOUND_LINE)}
    # and with --all the hidden one is there
    assert run(capsys, "read", f"{hidden.session_id}/{hidden.ids[2]}", "--all")[0] == 0


def test_default_root_is_the_git_worktree(pi_home: PiHome, tmp_path: Path, capsys: Any,
                                          monkeypatch: pytest.MonkeyPatch, tok: Tokens) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo, plain = tmp_path / "repo", tmp_path / "plain"
    (repo / "pkg/sub").mkdir(parents=True)
    (plain / "sub").mkdir(parents=True)
    (tmp_path / "repo2").mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    at_top = session(pi_home, str(repo), tok)
    deeper = session(pi_home, str(repo / "pkg/sub"), tok)
    beside = session(pi_home, str(tmp_path / "repo2"), tok)
    plain_top = session(pi_home, str(plain), tok)
    plain_sub = session(pi_home, str(plain / "sub"), tok)
    monkeypatch.chdir(repo / "pkg")  # inside Git: the worktree root, not the current directory
    assert found_sessions(capsys) == {at_top.session_id, deeper.session_id}
    assert_hidden(capsys, beside)
    monkeypatch.chdir(plain / "sub")  # outside Git: the current directory
    assert found_sessions(capsys) == {plain_sub.session_id}
    assert_hidden(capsys, plain_top)


def test_multiple_roots_and_status_counts(pi_home: PiHome, tmp_path: Path, capsys: Any,
                                          tok: Tokens) -> None:
    for name in ("a", "b", "c"):
        (tmp_path / name).mkdir()
    sbs = {name: session(pi_home, str(tmp_path / name), tok) for name in ("a", "b", "c")}
    sbs["c2"] = sample_session(pi_home.sessions, cwd=str(tmp_path / "c"))
    scope = ("--root", str(tmp_path / "a"), "--root", str(tmp_path / "b"))
    assert found_sessions(capsys, *scope) == {sbs["a"].session_id, sbs["b"].session_id}
    engine = Engine.open(pi_home.index, [])
    try:
        engine.refresh()
        conn = engine.reader()
        all_names = tuple(sbs)
        for roots, names in (([str(tmp_path / "a"), str(tmp_path / "b")], ("a", "b")),
                             ([str(tmp_path / "c")], ("c", "c2")), ([], ()),
                             ([str(tmp_path / "d")], ()), ([str(tmp_path / "a")], ("a",)),
                             ([str(tmp_path / n) for n in "abc"], all_names),
                             (None, all_names)):
            status = engine.status(Scope.of(roots))
            assert status["sessions"] == len(names)
            assert status["events"] == sum(len(sbs[n].ids) for n in names)
            # status counts fragments from the smaller side (status._fragments): the same count
            ids = [sbs[n].session_id for n in names]
            seen = conn.execute(
                "SELECT count(*) FROM fragments f JOIN events e ON e.eid = f.eid JOIN sessions s "
                f"ON s.sid = e.sid WHERE s.session_id IN ({','.join('?' * len(ids))})",
                ids).fetchone()[0]
            assert status["fragments"] == seen and (seen > 0) == bool(names)
            text = json.dumps(status)
            assert not [n for n in sbs if n not in names and sbs[n].session_id in text]
    finally:
        engine.close()


def test_scores_do_not_count_invisible_sessions(pi_home: PiHome, tmp_path: Path,
                                                capsys: Any, tok: Tokens) -> None:
    """Ranking statistics cover the whole index; the numbers shown must not reveal how often a
    term occurs in sessions the caller may not see."""
    (tmp_path / "proj").mkdir()
    visible = SessionBuilder(pi_home.sessions, str(tmp_path / "proj"), name_seed="visible")
    visible.user("deploy the rocket launcher")
    visible.user("rocket rocket, and a much longer message about many other unrelated things")
    visible.user("nothing to see")
    root = ("--root", str(tmp_path / "proj"))
    rc, before, err = run(capsys, "search", "rocket", "--json", *root)
    assert rc == 0 and len(before["hits"]) == 2, err
    hidden = SessionBuilder(pi_home.sessions, str(tmp_path / "elsewhere"), name_seed="hidden")
    for i in range(30):
        hidden.user(f"rocket secret {tok()} number {i}")
    rc, after, _ = run(capsys, "search", "rocket", "--json", *root)
    assert rc == 0 and after == before
    assert run(capsys, "search", "rocket", "--json", "--all", "--limit", "200")[1]["hits"] != \
        before["hits"]  # the hidden session is indexed
