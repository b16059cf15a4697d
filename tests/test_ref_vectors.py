"""The server's reference finder against the shared vectors (tests/data/ref-vectors.json), which
the VS Code and Neovim clients are tested against too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_event_search.core import eventref
from pi_event_search.core.errors import InvalidRef
from pi_event_search.core.eventref import Ref

VECTORS: list[dict[str, Any]] = json.loads(
    (Path(__file__).parent / "data" / "ref-vectors.json").read_text(encoding="utf-8"))["vectors"]


def expected(vector: dict[str, Any]) -> list[tuple[int, int, int, str, str, str | None]]:
    return [(r["line"], r["start"], r["end"], r["sessionId"], r["entryId"], r.get("fragmentId"))
            for r in vector["refs"]]


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_in_text(vector: dict[str, Any]) -> None:
    found = [(f.line, f.start, f.end, f.ref.session_id, f.ref.entry_id, f.ref.fragment)
             for f in eventref.in_text(vector["text"])]
    assert found == expected(vector)


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_at_every_end(vector: dict[str, Any]) -> None:
    """A position touches a reference from its first character to just after its last."""
    for line, start, end, session, entry, _ in expected(vector):
        for column in (start, end):
            found = eventref.at(vector["text"], line, column)
            assert found is not None and (found.ref.session_id, found.ref.entry_id) == \
                (session, entry), column


def test_vectors_cover_the_edge_cases() -> None:
    """The table keeps its edge cases: a vector lost in an edit would silently stop testing one."""
    names = " | ".join(v["name"] for v in VECTORS)
    for word in ("full stop", "tilde", "~ id", "fragment", "markdown", "parentheses", "non-ASCII",
                 "astral", "adjacent", "look-behind", "CRLF"):
        assert word in names, word
    assert len(VECTORS) >= 40


WHOLE: list[dict[str, Any]] = json.loads(
    (Path(__file__).parent / "data" / "ref-vectors.json").read_text(encoding="utf-8"))["whole"]


@pytest.mark.parametrize("vector", WHOLE, ids=[repr(v["text"]) for v in WHOLE])
def test_parse_whole(vector: dict[str, Any]) -> None:
    want = vector["ref"]
    try:
        ref = Ref.parse(vector["text"])
    except InvalidRef:
        assert want is None
        return
    assert want is not None
    assert (ref.session_id, ref.entry_id, ref.fragment) == \
        (want["sessionId"], want["entryId"], want.get("fragmentId"))
