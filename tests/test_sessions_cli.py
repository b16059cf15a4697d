"""`pi-event-search search --by-session` and `pi-event-search sessions` (issue 32) on the command
line: the same JSON as the engine answers, page after page by `--cursor`; groups that are the
event-level `search --json` regrouped; the text forms; filters, roots and `--reveal-secrets`."""

from __future__ import annotations

import json
import random
from typing import Any

from builder import SessionBuilder
from engine_support import cli, cli_json, engine
from pi_event_search.core.authz import Scope
from pi_event_search.query.search import Filters
from secretcorpus import planted
from sessioncorpus import build
from test_secrets import leaked

SEED = random.randrange(1 << 30)


def pages(*args: str) -> tuple[list[dict[str, Any]], int]:
    """Every item of a paged CLI answer (`sessions` or `hits`), following `--cursor`."""
    out: list[dict[str, Any]] = []
    cursor: str | None = None
    n = 0
    while True:
        page = cli_json(*args, *(["--cursor", cursor] if cursor else []))
        out += page["sessions"] if "sessions" in page else page["hits"]
        n += 1
        cursor = page["nextCursor"]
        if cursor is None:
            return out, n


def test_by_session_is_the_event_level_search_regrouped(pi_home, tmp_path):
    c = build(pi_home.sessions, str(tmp_path / "w"), random.Random(SEED), 60)
    root = ["--root", c.root]
    for query, flags in (("error", []), ("socket retry", ["--kind", "tool.result"]),
                         ("", ["--errors"]), ("failing", ["--since", "2026-05-10"])):
        hits, _ = pages("search", query, *flags, *root, "--limit", "200")
        tops: dict[str, dict[str, Any]] = {}
        for h in hits:
            tops.setdefault(h["sessionId"], h)
        for size in ("5", "50"):
            got, n = pages("search", query, "--by-session", *flags, *root, "--limit", size)
            assert [(g["sessionId"], g["top"]) for g in got] == list(tops.items()), \
                f"{query} {flags} by {size} (seed {SEED})"
            assert [g["matches"] for g in got] == [
                sum(h["sessionId"] == s for h in hits) for s in tops]
            assert n == max(1, -(-len(tops) // int(size)))
    assert tops, f"seed {SEED}"
    e = engine(pi_home.index)
    try:
        want = e.search_groups("error", Filters(), Scope.of([c.root]), limit=4)
        assert cli_json("search", "error", "--by-session", *root, "--limit", "4") == {
            "sessions": json.loads(json.dumps(want.groups)), "nextCursor": want.next_cursor,
            "didYouMean": None, "indexing": None}
    finally:
        e.close()
    rc, out, err = cli("search", "error", "--by-session", *root, "--limit", "3")
    assert rc == 0 and "more: --cursor " in err
    blocks = [b for b in out.split("\n") if b and not b.startswith(" ")]
    assert len(blocks) == 3
    assert out.count(" events match") == 3 and out.count("pi-event:") == 3


def test_sessions(pi_home, tmp_path):
    c = build(pi_home.sessions, str(tmp_path / "w"), random.Random(SEED), 40)
    root = ["--root", c.root]
    everything, _ = pages("sessions", *root, "--limit", "200")
    assert {s["sessionId"] for s in everything} == {s.session_id for s in c.visible()}
    got, n = pages("sessions", *root, "--limit", "5")
    assert got == everything and n == -(-len(everything) // 5)
    e = engine(pi_home.index)
    try:
        assert cli_json("sessions", *root) == json.loads(json.dumps(
            e.sessions(Filters(), Scope.of([c.root]))))
        api = f"{c.root}/api"
        assert cli_json("sessions", *root, "--cwd", api, "--kind", "bash.command")["sessions"] == \
            json.loads(json.dumps(e.sessions(Filters(cwd=api, kinds=["bash.command"]),
                                             Scope.of([c.root]))["sessions"]))
    finally:
        e.close()
    assert len(pages("sessions", "--all", "--limit", "200")[0]) == len(c.sessions)
    assert cli_json("sessions", "--root", str(tmp_path / "nowhere"))["sessions"] == []
    rc, out, _ = cli("sessions", *root)
    lines = out.splitlines()
    assert rc == 0 and len(lines) == len(everything)
    for line, s in zip(lines, everything, strict=True):
        assert line.startswith(s["updated"][:16]) and line.endswith(s["first"]["ref"])
        assert f"{s['events']} events" in line
    assert cli("sessions", *root, "--limit", "0")[0] == 2
    assert cli("sessions", *root, "--cursor", "garbage")[0] == 1


def test_reveal_secrets(pi_home, tmp_path):
    proj = tmp_path / "proj"
    key = next(p for p in planted(random.Random(SEED)) if p.kind == "openai-key")
    sb = SessionBuilder(pi_home.sessions, str(proj))
    sb.user(key.text)
    sb.session_info(f"rotate {key.value}")
    root = ["--root", str(proj)]
    for args in (("sessions",), ("search", "key", "--by-session")):
        masked = json.dumps(cli_json(*args, *root))
        assert not leaked(key.value, masked) and "[redacted: openai-key]" in masked
        shown = cli_json(*args, *root, "--reveal-secrets")["sessions"][0]
        assert shown["name"] == f"rotate {key.value}" and shown["firstPrompt"] == key.text
        rc, out, _ = cli(*args, *root)
        assert rc == 0 and not leaked(key.value, out) and "[redacted: openai-key]" in out
