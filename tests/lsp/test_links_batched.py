"""documentLink on a note with hundreds of references: one batched pass (events/locate.py) that
gives every visible reference the same target a read gives, with or without a fragment, a second
object of a joined line included; invisible, missing and rewritten ones get none."""

from __future__ import annotations

from lsprotocol import types as t

from builder import SessionBuilder


async def test_a_note_with_hundreds_of_references(start, pi_home, tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    sb = SessionBuilder(pi_home.sessions, str(proj))
    for n in range(150):
        sb.user(f"question {n}")
        sb.assistant(f"answer {n}")
    glued = [sb.dumps({"type": "message", "id": f"glue000{k}", "parentId": sb.leaf,
                       "timestamp": sb.tick(), "message": {"role": "user", "content": f"g{k}"}})
             for k in (1, 2)]
    sb.write_raw(glued[0] + glued[1] + b"\n")
    hidden = SessionBuilder(pi_home.sessions, str(tmp_path / "elsewhere"))
    hidden.user("not for this root")
    refs = [f"pi-event:{sb.session_id}/{e}" for e in [*sb.ids, "glue0001", "glue0002"]]
    refs[3] += "#L2"
    refs += [f"pi-event:{hidden.session_id}/{hidden.ids[0]}", f"pi-event:{sb.session_id}/nope1234"]
    note = proj / "notes.md"
    text = "".join(f"- see {r} here\n" for r in refs)
    note.write_text(text)
    client = await start([str(proj)], {"watch": False})  # the rewrite below stays unindexed
    uri = note.as_uri()
    client.text_document_did_open(t.DidOpenTextDocumentParams(t.TextDocumentItem(
        uri=uri, language_id="markdown", version=1, text=text)))
    links = await client.text_document_document_link_async(t.DocumentLinkParams(
        t.TextDocumentIdentifier(uri)))
    assert len(links) == len(refs) == 304
    lines = sb.path.read_bytes().split(b"\n")
    for link, ref in zip(links[:-2], refs[:-2], strict=True):
        entry = ref.split("/")[-1].split("#")[0]
        assert link.target is not None and link.target.startswith(sb.path.as_uri() + "#L"), ref
        line = int(link.target.rsplit("#L", 1)[1])
        assert f'"id":"{entry}"'.encode() in lines[line - 1], ref
    assert [x.target for x in links[-2:]] == [None, None]
    # a session file rewritten since it was indexed: its lines are not trusted any more
    sb.path.write_bytes(sb.path.read_bytes().replace(b"question 1", b"QUESTION 1"))
    links = await client.text_document_document_link_async(t.DocumentLinkParams(
        t.TextDocumentIdentifier(uri)))
    changed = {i for i, raw in enumerate(lines) if b"question 1" in raw}
    for link, ref in zip(links[:-2], refs[:-2], strict=True):
        line = next(i for i, raw in enumerate(lines) if f'"id":"{ref.split("/")[-1][:8]}"'.encode()
                    in raw)
        assert (link.target is None) == (line in changed), ref
