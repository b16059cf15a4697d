"""Domain results -> LSP types (symbols, hover Markdown, locations). No queries here."""

from __future__ import annotations

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
    ev, src = read["event"], read["source"]
    kinds = ", ".join(ev.get("kinds") or []) or ev["entryType"]
    tool = f" · `{ev['toolName']}`" if ev.get("toolName") else ""
    err = " · **error**" if ev.get("isError") else ""
    session = ev.get("sessionName") or ev.get("cwd") or ev["sessionId"]
    fence = "````"
    body = _preview(read["fragments"]) or "_(no text)_"
    return "\n".join([
        f"**{kinds}**{tool}{err} · {when(ev.get('timestamp'))}",
        "",
        f"session: {session}  ",
        f"branch: `{ev['branchState']}` · selection: `{ev['selectionState']}` · "
        f"context: `{ev['contextRole']}`",
        "",
        f"{fence}text", body, fence,
        "",
        f"[open source line]({src['uri']}#L{src['line']}) · `{ev['ref']}`",
    ])
