"""v1 sessions (no ids, a linear transcript) get the branch and selection states Pi 0.73.1 gives
them after its own migration: checked against SessionManager.open() on copies of the files."""

from __future__ import annotations

from pathlib import Path

from builder import SessionBuilder
from engine_support import engine
from piwriter import open_with_pi
from support import PiHome

V1_HEADER = {"provider": "anthropic", "modelId": "claude-sonnet-4-5", "thinkingLevel": "off"}


def _v1(home: PiHome) -> SessionBuilder:
    return SessionBuilder(home.sessions, "/home/dev/proj", version=None, header_extra=V1_HEADER)


def _compaction(sb: SessionBuilder, summary: str, index: int) -> str:
    return sb.append("compaction", {"summary": summary, "firstKeptEntryIndex": index,
                                    "tokensBefore": 50_000})


def _turn(sb: SessionBuilder, n: int, *, tool: bool = False) -> None:
    sb.user(f"question {n}")
    if tool:
        sb.assistant(f"checking {n}", tool_calls=[(f"call_{n}", "bash", {"command": f"ls {n}"})])
        sb.tool_result(f"call_{n}", "bash", f"file{n}.ts")
    sb.assistant(f"answer {n}")


def _sessions(home: PiHome) -> list[SessionBuilder]:
    plain = _v1(home)  # tool calls, bash runs, a hook message, old model_change shape, events
    plain.append("model_change", {"model": "anthropic/claude-sonnet-4-5"})
    plain.append("thinking_level_change", {"thinkingLevel": "medium"})
    _turn(plain, 1, tool=True)
    plain.bash("npm test", "2 passed", exclude=None)
    plain.append("event", {"event": {"type": "agent_end"}})
    plain.message({"role": "hookMessage", "customType": "hook", "content": "hook text",
                   "display": True})
    _turn(plain, 2)

    compacted = _v1(home)  # one compaction keeping from the middle
    for n in range(1, 5):
        _turn(compacted, n, tool=n % 2 == 0)
    _compaction(compacted, "summary of turns 1-2", 9)
    _turn(compacted, 5)

    twice = _v1(home)  # two compactions: the last one on the path wins
    for n in range(1, 4):
        _turn(twice, n)
    _compaction(twice, "first summary", 3)
    _turn(twice, 4)
    _compaction(twice, "second summary", 8)
    _turn(twice, 5)

    odd = _v1(home)  # indexes Pi cannot resolve: the header, the compaction itself, the future
    _turn(odd, 1)
    _compaction(odd, "keeps nothing (header)", 0)
    _turn(odd, 2)
    _compaction(odd, "keeps itself", 7)
    _turn(odd, 3)
    _compaction(odd, "keeps a later entry", 40)
    _turn(odd, 4)
    return [plain, compacted, twice, odd]


def _states(home: PiHome, session_id: str) -> list[tuple[str, str, str]]:
    e = engine(home.index)
    e.refresh()
    rows = e.conn.execute(
        "SELECT e.entry_id, e.branch_state, e.selection_state FROM events e JOIN sessions s "
        "ON s.sid = e.sid WHERE s.session_id = ? ORDER BY e.seq", (session_id,)).fetchall()
    e.close()
    return [(r[0], r[1], r[2]) for r in rows]


def test_v1_states_equal_pi_after_migration(pi_home: PiHome, tmp_path: Path) -> None:
    sessions = _sessions(pi_home)
    pi = open_with_pi([sb.path for sb in sessions], tmp_path / "v1-oracle.json")
    for sb, rec in zip(sessions, pi, strict=True):
        assert rec["version"] == 3  # Pi did migrate the copy
        got = _states(pi_home, sb.session_id)
        assert [g[0] for g in got] == [f"v1~{n}" for n in range(1, rec["entries"] + 1)]
        selected = [i for i, g in enumerate(got) if g[1] == "selected"]
        assert selected == rec["selected"], sb.path.name
        direct = sorted(i for i, g in enumerate(got) if g[2] == "direct")
        assert direct == sorted(rec["context"]), sb.path.name
        assert all(g[1] != "unknown" and g[2] != "unknown" for g in got)


def test_v1_compaction_summarizes_what_it_does_not_keep(pi_home: PiHome) -> None:
    sb = _v1(pi_home)
    for n in range(1, 4):
        _turn(sb, n)
    _compaction(sb, "summary", 5)  # keeps from entry 5 (question 3)
    got = dict((g[0], g[2]) for g in _states(pi_home, sb.session_id))
    assert [got[f"v1~{n}"] for n in range(1, 8)] == (
        ["summarized"] * 4 + ["direct"] * 3)
