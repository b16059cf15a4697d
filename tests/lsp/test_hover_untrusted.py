"""Hovers show recorded text as text (issue 38): a body holding backtick runs cannot close the
fence, and a session name, cwd or tool name cannot become a link, an image or HTML in the editor's
hover. The real server over stdio."""

from __future__ import annotations

import re

from lsprotocol import types as t

from builder import SessionBuilder

EVIL = "[click me](https://evil.example/x) ![pixel](https://evil.example/p.png) <img src=x> www.evil.example"
BODY = "before\n````\n" + EVIL + "\n`````\nafter ``` and ` ticks"


def _fenced(value: str) -> tuple[str, str, str]:
    """(the fence, the text inside it, everything outside it) of a hover."""
    lines = value.split("\n")
    start = next(n for n, line in enumerate(lines) if re.fullmatch(r"`{3,}text", line))
    fence = lines[start][:-4]
    end = next(n for n in range(start + 1, len(lines)) if lines[n] == fence)
    return fence, "\n".join(lines[start + 1:end]), "\n".join(lines[:start] + lines[end + 1:])


async def test_recorded_text_cannot_become_markdown(start, pi_home, tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    sb = SessionBuilder(pi_home.sessions, str(proj))
    sb.session_info(EVIL)
    user = sb.user(BODY)
    call = sb.assistant(tool_calls=[("c1", "fetch](https://evil.example/t)", {"url": "x"})])
    client = await start([str(proj)])
    note = proj / "notes.md"
    refs = [f"pi-event:{sb.session_id}/{user}", f"pi-event:{sb.session_id}/{call}"]
    note.write_text("\n".join(refs) + "\n")
    for line in range(len(refs)):
        hover = await client.text_document_hover_async(t.HoverParams(
            text_document=t.TextDocumentIdentifier(uri=note.as_uri()), position=t.Position(line, 12)))
        assert hover is not None
        value = hover.contents.value
        fence, inside, outside = _fenced(value)
        longest = max((len(r) for r in re.findall(r"`+", inside)), default=0)
        assert len(fence) > longest, (fence, inside)
        if line == 0:
            assert inside.strip() == BODY  # the body whole, inside one fence
        # outside the fence, recorded text is escaped: no link, image, HTML or autolink
        assert "https://evil" not in outside and "www.evil" not in outside, outside
        assert "](" not in outside.replace("[open source line](<", ""), outside
        assert not re.search(r"(?<!\\)<img", outside), outside
        assert "evil\\.example" in outside  # shown, as text
