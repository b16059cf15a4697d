"""The typed wire shapes (wire.py), the JSON examples of docs/protocol.md and what the engine
really returns all agree, field by field."""

from __future__ import annotations

import json
import re
import types
import typing
from pathlib import Path
from typing import Any

import pytest

from builder import sample_session
from engine_support import ALL, engine
from pi_event_search.core import wire
from pi_event_search.query.search import Filters

DOCS = Path(__file__).resolve().parent.parent / "docs" / "protocol.md"


def _problems(value: Any, shape: Any, where: str = "$") -> list[str]:
    """Where `value` differs from the type `shape` (TypedDicts checked key by key)."""
    origin = typing.get_origin(shape)
    if origin in (typing.Union, types.UnionType):
        options = [_problems(value, s, where) for s in typing.get_args(shape)]
        return [] if any(not o for o in options) else min(options, key=len)
    if shape is type(None):
        return [] if value is None else [f"{where}: {value!r} is not null"]
    if origin is typing.Literal:
        return [] if value in typing.get_args(shape) else [f"{where}: {value!r} not in {shape}"]
    if origin is list:
        if not isinstance(value, list):
            return [f"{where}: not a list"]
        (item,) = typing.get_args(shape)
        return [p for i, v in enumerate(value) for p in _problems(v, item, f"{where}[{i}]")]
    if shape is Any:
        return []
    if origin is dict:
        if not isinstance(value, dict):
            return [f"{where}: not an object"]
        _, item = typing.get_args(shape)
        return [p for k, v in value.items() for p in _problems(v, item, f"{where}.{k}")]
    if typing.is_typeddict(shape):
        if not isinstance(value, dict):
            return [f"{where}: not an object"]
        hints = typing.get_type_hints(shape)
        out = [f"{where}: missing {k}" for k in shape.__required_keys__ if k not in value]
        out += [f"{where}: unexpected {k}" for k in value if k not in hints]
        for k, v in value.items():
            if k in hints:
                out += _problems(v, _strip(hints[k]), f"{where}.{k}")
        return out
    if shape is float:
        return [] if isinstance(value, int | float) and not isinstance(value, bool) else [
            f"{where}: {value!r} is not a number"]
    return [] if isinstance(value, shape) else [f"{where}: {value!r} is not {shape.__name__}"]


def _strip(hint: Any) -> Any:
    """NotRequired[X] -> X."""
    return typing.get_args(hint)[0] if typing.get_origin(hint) is typing.NotRequired else hint


def test_the_checker_sees_a_wrong_field():
    node = {"ref": "pi-event:S/E", "sessionId": "S", "entryId": "E", "entryType": "message",
            "role": None, "kind": None, "timestamp": None, "preview": "",
            "branchState": "selected",
            "source": {"path": "/p", "uri": "file:///p", "line": 1, "byteOffset": 0}}
    assert _problems(node, wire.Node) == []
    assert _problems({**node, "line": 3}, wire.Node) == ["$: unexpected line"]
    assert _problems({**node, "source": {**node["source"], "line": "1"}}, wire.Node)
    assert _problems({k: v for k, v in node.items() if k != "ref"}, wire.Node) == ["$: missing ref"]


def _doc_examples() -> list[Any]:
    out = []
    for block in re.findall(r"```json\n(.*?)```", DOCS.read_text(), re.S):
        try:
            out.append(json.loads(block))
        except ValueError:
            continue  # an example with placeholders (Node, ...): not JSON
    return out


def _doc_example(test: typing.Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    found = [e for e in _doc_examples() if isinstance(e, dict) and test(e)]
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize(("shape", "test"), [
    (wire.Hit, lambda e: "snippet" in e and "relation" not in e),
    (wire.Node, lambda e: "preview" in e),
    (wire.StatusResult, lambda e: "sessionDirs" in e and "index" in e),
    (wire.EventAt, lambda e: "source" in e and "snippet" not in e and "preview" not in e),
])
def test_the_documented_examples_have_the_typed_fields(shape, test):
    example = _doc_example(test)
    assert _problems(example, shape) == []
    assert set(example) == set(typing.get_type_hints(shape)) - {"indexing"}  # the server adds it


def test_the_documented_notification_has_the_typed_fields():
    example = _doc_example(lambda e: e.get("method") == "piEvents/indexChanged")
    assert _problems(example["params"], wire.IndexChanged) == []


def test_what_the_engine_returns_has_the_typed_fields(pi_home):
    sb = sample_session(pi_home.sessions, "/p")
    child = sb.fork(pi_home.sessions, "/p", upto=sb.ids[4])
    child.user("a question asked in the fork")
    e = engine(pi_home.index)
    e.refresh()
    page = e.search("websocket", Filters(), ALL)
    assert page.hits
    assert _problems({"hits": page.hits, "nextCursor": page.next_cursor},
                     wire.SearchResult) == []
    for ref in sb.ids:
        assert _problems(e.read(f"{sb.session_id}/{ref}", ALL, before=3, after=3,
                                order="branch"), wire.ReadResult) == []
        assert _problems(e.trace(f"{sb.session_id}/{ref}", ALL), wire.TraceResult) == []
    assert _problems(e.trace(f"{child.session_id}/{child.ids[-1]}", ALL), wire.TraceResult) == []
    assert _problems(e.status(None), wire.StatusResult) == []
    at = e.event_at(str(sb.path), 3, ALL)
    assert at is not None and _problems(at, wire.EventAt) == []
    history = e.file_history("/p/src/ws.ts", ALL)
    assert history.hits and _problems(history.hits, list[wire.FileHit]) == []
    assert _problems(e.line_origin("/p/src/ws.ts", "setTimeout(connect, backoff())", ALL),
                     wire.LineOriginResult) == []
