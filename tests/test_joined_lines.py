"""Two JSON objects on one line (a torn write followed by the next entry): each is its own event,
and `source.byteOffset` is the exact offset of that event's object, not of the line."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from builder import SessionBuilder
from engine_support import ALL, engine, hits
from pi_event_search.core.authz import Scope
from support import PiHome


def _entry(sb: SessionBuilder, entry_id: str, text: str) -> bytes:
    return sb.dumps({"type": "message", "id": entry_id, "parentId": sb.leaf,
                     "timestamp": "2026-05-01T11:00:00.000Z",
                     "message": {"role": "user", "content": text}})


@pytest.mark.parametrize(("glue", "damage"), [(b"", b""), (b"  ", b""), (b"", b"\xff\xfe")],
                         ids=["adjacent", "spaces", "bad-utf8-inside"])
def test_every_object_on_a_joined_line_has_its_own_offset(pi_home: PiHome, glue: bytes,
                                                           damage: bytes) -> None:
    sb = SessionBuilder(pi_home.sessions, "/p")
    sb.user("an ordinary first line")
    e = engine(pi_home.index)
    e.refresh()  # so that the joined line arrives as an append, then again in a rebuild
    objects = [_entry(sb, "join0001", "glued ünïcode one").replace(b"one", b"one" + damage),
               _entry(sb, "join0002", "glued two"), _entry(sb, "join0003", "glued three")]
    sb.write_raw(objects[0] + glue + objects[1] + objects[2] + b"\n")
    data = sb.path.read_bytes()
    for rebuild in (False, True):
        if rebuild:
            e.close()
            pi_home.index.unlink()
            e = engine(pi_home.index)
        e.refresh()
        found = {h["entryId"]: h["source"] for h in hits(e, "glued")}
        assert set(found) == {"join0001", "join0002", "join0003"}
        assert len({s["line"] for s in found.values()}) == 1
        for obj, entry_id in zip(objects, ("join0001", "join0002", "join0003"), strict=True):
            off = found[entry_id]["byteOffset"]
            assert data[off:off + len(obj)] == obj, entry_id
            read = e.read(f"{sb.session_id}/{entry_id}", ALL)
            assert read["source"]["byteOffset"] == off
            assert "glued" in read["fragments"][0]["text"]


def test_line_origin_reads_the_second_object_of_a_joined_line(pi_home: PiHome, tmp_path) -> None:
    """The edit that wrote a line is found when its entry is the second object of a joined line
    (the entry is read back from the whole line, as `piEvents/read` reads it)."""
    proj = tmp_path / "proj"
    proj.mkdir()
    sb = SessionBuilder(pi_home.sessions, str(proj))
    sb.user("bump the retry budget")
    first = _entry(sb, "join0001", "a torn user message")
    call = {"type": "message", "id": "join0002", "parentId": "join0001",
            "timestamp": "2026-05-01T11:00:01.000Z",
            "message": {"role": "assistant", "stopReason": "toolUse", "content": [
                {"type": "toolCall", "id": "c1", "name": "edit", "arguments": {
                    "path": "cfg.ts", "edits": [{"oldText": "  retries: 3,",
                                                 "newText": "  retryBudget: 7,"}]}}]}}
    sb.write_raw(first + sb.dumps(call) + b"\n")
    e = engine(pi_home.index)
    e.refresh()
    found = e.line_origin(str(proj / "cfg.ts"), "  retryBudget: 7,", Scope.of([str(proj)]))
    assert found["hit"] is not None and found["hit"]["entryId"] == "join0002"
    assert e.read(f"{sb.session_id}/join0002", ALL)["fragments"]


# -- Pi's view: what Pi's loader cannot parse takes no part in anyone's states -------------------

def _join(src: Path, dst_dir: Path, k: int, tag: str) -> Path:
    """A copy of `src` (new session id) whose line k (0 = header) is joined with line k+1."""
    lines = src.read_bytes().rstrip(b"\n").split(b"\n")
    header = json.loads(lines[0])
    header["id"] = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{src}:{k}:{tag}"))
    lines[0] = json.dumps(header, separators=(",", ":")).encode()
    lines[k:k + 2] = [lines[k] + lines[k + 1]]
    dst_dir.mkdir(parents=True, exist_ok=True)
    out = dst_dir / f"{tag}_{header['id']}.jsonl"
    out.write_bytes(b"\n".join(lines) + b"\n")
    return out


def _join_points(path: Path) -> dict[str, int]:
    """Lines worth joining with the next: a plain message in the middle, the line before the
    last compaction (a message glued to a compaction), an entry with children, the last two."""
    body = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()[1:]]
    ids = [e.get("id") for e in body]
    points = {"message": next(i for i in range(len(body) // 2, len(body))
                              if body[i]["type"] == "message") + 1,
              "last": len(body) - 1}
    comps = [i for i, e in enumerate(body) if e["type"] == "compaction"]
    if comps:
        points["compaction"] = comps[-1]  # line of the entry before it (header = line 0)
    parents = [i for i, x in enumerate(ids) if x and any(e.get("parentId") == x for e in body)]
    if parents:
        points["children"] = parents[len(parents) // 2] + 1
    return {k: v for k, v in points.items() if 1 <= v < len(body)}


def _loaded_lines(path: Path) -> list[bool]:
    """Per line (1-based index - 1): whether JSON.parse would read it, as Pi's loader does."""
    out = []
    for raw in path.read_bytes().split(b"\n")[:-1]:
        try:
            out.append(isinstance(json.loads(raw), dict))
        except ValueError:
            out.append(False)
    return out


def _assert_states_equal_pi(e: Any, path: Path, pi: dict[str, Any]) -> None:
    loaded = _loaded_lines(path)
    rows = e.conn.execute(
        "SELECT e.entry_id, e.line, e.branch_state, e.selection_state FROM events e JOIN sessions s "
        "ON s.sid = e.sid WHERE s.path = ? ORDER BY e.seq", (str(path),)).fetchall()
    seen = [r for r in rows if loaded[r["line"] - 1]]
    skipped = [r for r in rows if not loaded[r["line"] - 1]]
    assert len(seen) == pi["entries"] and len(skipped) == 2, path.name
    assert all((r["branch_state"], r["selection_state"]) == ("unknown", "unknown")
               for r in skipped), path.name
    selected = [i for i, r in enumerate(seen) if r["branch_state"] == "selected"]
    assert selected == pi["selected"], path.name
    direct = sorted(i for i, r in enumerate(seen) if r["selection_state"] == "direct")
    assert direct == sorted(pi["context"]), path.name


def _v1_files(sessions: Path) -> list[Path]:
    v1 = {"provider": "anthropic", "modelId": "claude-sonnet-4-5", "thinkingLevel": "off"}
    out = []
    for version in (None, 2):
        sb = SessionBuilder(sessions / "src", "/home/dev/proj", version=version,
                            header_extra=v1 if version is None else None)
        for n in range(1, 6):
            sb.user(f"question {n}")
            sb.assistant(f"answer {n}")
            if n in (2, 4):
                kept = {"firstKeptEntryIndex": 2 * n - 1} if version is None else \
                    {"firstKeptEntryId": sb.ids[-3]}
                sb.append("compaction", {"summary": f"summary {n}", "tokensBefore": 5, **kept})
        out.append(sb.path)
    return out


def test_joined_lines_take_no_part_in_the_states_pi_gives(pi_home: PiHome, tmp_path: Path) -> None:
    """On Pi-written files (v3) and v1/v2 files, with a joined line at a plain message, before a
    compaction, at an entry with children and at the end: the joined objects are `unknown`, every
    other entry has the states Pi's SessionManager.open() and its context give (Pi 1.6)."""
    from piwriter import open_with_pi, write_pi_sessions

    source = tmp_path / "pi"
    oracle = write_pi_sessions(source)
    files = [Path(r["path"]) for r in oracle["sessions"]
             if r["scenario"] in ("b-core-concepts", "c-compaction", "d-branch-summary")]
    files += _v1_files(tmp_path / "v1")
    folder = pi_home.sessions / "--home-dev-proj--"
    points = [(i, f, tag, k) for i, f in enumerate(files) for tag, k in _join_points(f).items()]
    variants = [_join(f, folder, k, f"{i}-{tag}") for i, f, tag, k in points]
    # The same files again, indexed up to the joined line and then appended to.
    appended = [_join(f, folder, k, f"{i}-{tag}-append") for i, f, tag, k in points]
    rest = []
    for path, (_, _, _, k) in zip(appended, points, strict=True):
        data = path.read_bytes()
        cut = sum(len(x) + 1 for x in data.split(b"\n")[:k])
        rest.append(data[cut:])
        path.write_bytes(data[:cut])
    assert len(variants) >= 12
    pi = open_with_pi(variants, tmp_path / "oracle.json")
    e = engine(pi_home.index)
    e.refresh()
    for path, tail in zip(appended, rest, strict=True):
        with path.open("ab") as fh:
            fh.write(tail)
    e.refresh()
    for path, appended_path, rec in zip(variants, appended, pi, strict=True):
        _assert_states_equal_pi(e, path, rec)
        _assert_states_equal_pi(e, appended_path, rec)
    e.close()
