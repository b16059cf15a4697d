"""References found by the real server (documentLink ranges) match the shared vectors
(tests/data/ref-vectors.json), in the position encoding each client negotiated."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lsprotocol import types as t

VECTORS: list[dict[str, Any]] = json.loads(
    (Path(__file__).parents[1] / "data" / "ref-vectors.json").read_text(encoding="utf-8"))["vectors"]


def encoding(caps: t.ClientCapabilities | None) -> str:
    """The server takes the client's first encoding it knows, else UTF-16 (LSP 3.17)."""
    offered = caps.general.position_encodings if caps and caps.general else None
    return next((e for e in offered or [] if e in ("utf-8", "utf-16", "utf-32")), "utf-16")


def units(line: str, column: int, enc: str) -> int:
    head = line[:column]
    if enc == "utf-8":
        return len(head.encode("utf-8"))
    if enc == "utf-16":
        return len(head.encode("utf-16-le")) // 2
    return column


async def test_document_links_match_the_vectors(start, tmp_path):
    client = await start([str(tmp_path)], wait_indexed=False)
    enc = encoding(client.capabilities)
    for i, vector in enumerate(VECTORS):
        uri = (tmp_path / f"note{i}.md").as_uri()
        client.text_document_did_open(t.DidOpenTextDocumentParams(t.TextDocumentItem(
            uri=uri, language_id="markdown", version=1, text=vector["text"])))
        links = await client.text_document_document_link_async(t.DocumentLinkParams(
            t.TextDocumentIdentifier(uri)))
        lines = vector["text"].splitlines()
        want = [(r["line"], units(lines[r["line"]], r["start"], enc),
                 units(lines[r["line"]], r["end"], enc)) for r in vector["refs"]]
        got = [(lk.range.start.line, lk.range.start.character, lk.range.end.character)
               for lk in links]
        assert got == want, (vector["name"], enc)
