"""Domain results -> LSP types (symbols, hover Markdown, locations). No queries here."""

from __future__ import annotations

import re
from datetime import datetime

from lsprotocol import types as t

from pi_event_search.core.wire import Fragment, Hit, ReadResult, Source

KIND_TAGS = {
    "user.text": ("user", t.SymbolKind.String),
    "assistant.text": ("assistant", t.SymbolKind.Constant),
    "tool.call": ("call", t.SymbolKind.Function),
    "tool.result": ("result", t.SymbolKind.Event),
    "bash.command": ("bash", t.SymbolKind.Function),
    "bash.output": ("bash-out", t.SymbolKind.Event),
    "summary.compaction": ("compaction", t.SymbolKind.Namespace),
    "summary.branch": ("branch", t.SymbolKind.Namespace),
    "custom.message": ("custom", t.SymbolKind.Object),
    "custom.entry": ("entry", t.SymbolKind.Struct),
    "session.name": ("name", t.SymbolKind.Module),
    "system.prompt": ("system", t.SymbolKind.Interface),
    "context.edit": ("edit", t.SymbolKind.Operator),
    "python.code": ("python", t.SymbolKind.Function),
    "python.output": ("python-out", t.SymbolKind.Event),
    "file.mention": ("mention", t.SymbolKind.File),
    "ttsr.rules": ("rules", t.SymbolKind.Property),
    "session.task": ("task", t.SymbolKind.String),
}
HOVER_LINES = 12
HOVER_CHARS = 600


def tag(hit: Hit) -> str:
    name, _ = KIND_TAGS.get(hit["kind"], (hit["kind"], t.SymbolKind.Event))
    if hit["kind"] in ("tool.call", "tool.result") and hit.get("toolName"):
        bang = "!" if hit.get("isError") else ""
        return f"{name}{bang} {hit['toolName']}"
    return str(name)


def when(ts: str | None) -> str:
    if not ts:
        return ""
    try:
        return datetime.fromisoformat(ts.replace("Z", "+00:00")).strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return ts


def location(source: Source) -> t.Location:
    line = max(0, int(source["line"]) - 1)
    return t.Location(uri=source["uri"], range=t.Range(t.Position(line, 0), t.Position(line, 0)))


def symbol(hit: Hit) -> t.SymbolInformation:
    where = hit.get("sessionName") or hit.get("cwd") or hit["sessionId"]
    _, kind = KIND_TAGS.get(hit["kind"], ("", t.SymbolKind.Event))
    return t.SymbolInformation(
        name=f"[{tag(hit)}] {hit['snippet']}", kind=kind, location=location(hit["source"]),
        container_name=f"{where} · {when(hit.get('timestamp'))}")


def _preview(fragments: list[Fragment]) -> str:
    text = "\n".join(f["text"] for f in fragments).strip()
    lines = text.splitlines()[:HOVER_LINES]
    out = "\n".join(lines)
    if len(out) > HOVER_CHARS:
        out = out[:HOVER_CHARS]
    cut = out != text
    return out + ("\n…" if cut else "")


def hover_markdown(read: ReadResult) -> str:
    """An event as hover Markdown. Recorded text cannot become Markdown: the body sits in a fence
    longer than any run of backticks in it, names and paths are escaped (no link, image or
    autolink can come from them), ids sit in code spans."""
    ev, src = read["event"], read["source"]
    # the kinds and a parsed time are the server's words; an entry type or a time it could not
    # parse are recorded text
    kinds = ", ".join(ev.get("kinds") or []) or escape(ev["entryType"])
    stamp = when(ev.get("timestamp"))
    tool = f" · {escape(str(ev['toolName']))}" if ev.get("toolName") else ""
    err = " · **error**" if ev.get("isError") else ""
    session = ev.get("sessionName") or ev.get("cwd") or ev["sessionId"]
    body = _preview(read["fragments"])
    fence = "`" * max(4, _longest_run(body, "`") + 1)
    return "\n".join([
        f"**{kinds}**{tool}{err} · {stamp if _PARSED.fullmatch(stamp) else escape(stamp)}",
        "",
        f"session: {escape(session)}  ",
        f"branch: {_code(ev['branchState'])} · selection: {_code(ev['selectionState'])} · "
        f"context: {_code(ev['contextRole'])}",
        "",
        *([f"{fence}text", body, fence] if body else ["_(no text)_"]),
        "",
        f"[open source line](<{src['uri']}#L{src['line']}>) · {_code(ev['ref'])}",
    ])


_PARSED = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d|")
_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")


def escape(text: str) -> str:
    """Text shown as itself in Markdown: every ASCII punctuation character backslash-escaped (so
    no emphasis, link, image, HTML or autolink, `https://…` and `www.…` included), lines joined."""
    return _PUNCTUATION.sub(r"\\\1", " ".join(text.split()))


def _code(text: str) -> str:
    """A code span that holds `text` whatever backticks it has."""
    text = " ".join(text.split())
    ticks = "`" * (_longest_run(text, "`") + 1)
    return f"{ticks} {text} {ticks}"


def _longest_run(text: str, char: str) -> int:
    runs = re.findall(f"{re.escape(char)}+", text)
    return max(map(len, runs), default=0)
