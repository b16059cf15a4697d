"""Human-readable CLI output (tables, progress lines). JSON output lives in cli/main.py."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from pi_event_search.core.secrets import scrub
from pi_event_search.core.wire import (
    DidYouMean,
    Group,
    Hit,
    Indexing,
    ReadResult,
    SecretsResult,
    SessionBase,
    SessionsResult,
    StatusResult,
    TraceResult,
)
from pi_event_search.index.indexer import Progress


class Scrubbed:
    """Standard output for text: recorded text reaches a terminal masked and without control
    bytes or escape sequences, whatever field it came in (tool names, ids and paths are recorded
    text too); `reveal` keeps credentials (a person asked), never control bytes."""

    def __init__(self, stream: TextIO, reveal: bool = False) -> None:
        self.stream = stream
        self.reveal = reveal

    def write(self, text: str) -> int:
        return self.stream.write(scrub(text, reveal=self.reveal))

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()


def progress_printer() -> Progress:
    """A live line on a TTY, plain lines otherwise; quiet for short passes."""
    tty = sys.stderr.isatty()
    start = time.monotonic()
    last = [0.0]

    def report(done: int, total: int, detail: str) -> None:
        now = time.monotonic()
        if now - start < 1.0 or (now - last[0] < (0.2 if tty else 5.0) and done < total):
            return
        last[0] = now
        line = f"indexing {done}/{total} files" + (f", {detail}" if detail else "")
        if tty:
            sys.stderr.write("\r\033[K" + line + ("\n" if done >= total else ""))
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()

    return report


def indexing_note(state: Indexing | None) -> None:
    """One line on stderr while the index is still being built (docs/protocol.md)."""
    if state is not None:
        print(f"still indexing: {state['percent']}% of sessions", file=sys.stderr)


def status(s: StatusResult) -> None:
    print(f"index      {s['index']['path']} ({s['index']['bytes'] / 1e6:.1f} MB)")
    if "readOnly" in s["index"]:
        print(f"read-only  {s['index']['readOnly']}")
    sources = s.get("sessionsBySource") or {}
    names = {"pi": "Pi", "omp": "Oh My Pi"}
    split = f" ({', '.join(f'{names.get(k, k)} {n}' for k, n in sources.items())})" \
        if len(sources) > 1 or set(sources) - {"pi"} else ""
    print(f"sessions   {s['sessions']}{split}   events {s['events']}   fragments {s['fragments']}")
    for d in s["directories"]:
        count = "" if d["sessions"] is None else f": {d['sessions']} sessions"
        missing = "" if d["exists"] else ", does not exist yet"
        print(f"dir        {d['path']} ({d['layout']}, {d['origin']}{missing}){count}")
    print(f"order      {s['order']}")
    if s["secretEvents"]:
        print(f"secrets    {s['secretEvents']} events held credentials (masked; list them with "
              "`pi-event-search secrets`)")
    for key in ("stale", "unavailable"):
        for item in s[key]:
            print(f"{key:<10} {item['path']}: {item['error']}")
    for dup in s["duplicates"]:
        print(f"duplicate  {dup['path']} (canonical: {dup['canonicalPath']})")
    for bad in s["badLines"]:
        print(f"bad lines  {bad['path']}: {bad['badLines']}")
    for skip in s["skipped"]:
        print(f"skipped    {skip['path']}: {skip['reason']}")


def secrets(r: SecretsResult) -> None:
    for e in r["events"]:
        print(f"{(e['timestamp'] or '')[:16]:<16}  {e['ref']}  {e['count']} x {', '.join(e['kinds'])}")
    print(f"{len(r['events'])} events in {r['sessions']} sessions held credentials (masked; "
          "`read --reveal-secrets` shows them)", file=sys.stderr)


def hits(items: list[Hit], next_cursor: str | None) -> None:
    if not items:
        print("no hits", file=sys.stderr)
        return
    for h in items:
        _hit(h, "")
    if next_cursor:
        print(f"more: --cursor {next_cursor}", file=sys.stderr)


def did_you_mean(found: DidYouMean | None) -> None:
    """On stderr, before the hits it explains: they were searched with the corrected words."""
    if found is not None:
        words = ", ".join(f"{c['word']} -> {c['suggestion']}" for c in found["corrections"])
        print(f"did you mean: {found['query']}  ({words}; searched with the correction)",
              file=sys.stderr)


def partial_note(h: Hit) -> str:
    """`matched 3 of 4 words; missing: bug` for a partial hit, "" for a hit holding every word."""
    missing, matched = h.get("missing") or [], h.get("matched") or []
    if not missing:
        return ""
    total = len(matched) + len(missing)
    return f"matched {len(matched)} of {total} words; missing: {', '.join(missing)}"


def _hit(h: Hit, indent: str) -> None:
    where = h["sessionName"] or h["cwd"] or ""
    err = " ERROR" if h["isError"] else ""
    print(f"{indent}{(h['timestamp'] or '')[:16]:<16}  {h['kind']:<18} {where[:40]}{err}")
    if note := partial_note(h):
        print(f"{indent}    [{note}]")
    print(f"{indent}    {h['snippet']}")
    print(f"{indent}    {h['ref']}  {h['source']['path']}:{h['source']['line']}")


def _title(s: SessionBase) -> str:
    return s["name"] or s["firstPrompt"] or "(no prompt)"


def _span(s: SessionBase) -> str:
    return f"{(s['started'] or '')[:16]} .. {(s['updated'] or '')[:16]}"


def groups(items: list[Group], next_cursor: str | None) -> None:
    """One block per session: its name (or first prompt), where and when, how many of its
    events match, then its strongest hit as `search` prints a hit."""
    if not items:
        print("no hits", file=sys.stderr)
        return
    for g in items:
        print(_title(g)[:100])
        print(f"    {g['cwd'] or ''}  {_span(g)}  {g['matches']}/{g['events']} events match")
        _hit(g["top"], "    ")
    if next_cursor:
        print(f"more: --cursor {next_cursor}", file=sys.stderr)


def sessions(r: SessionsResult) -> None:
    """One line per session: last update, name or first prompt, counts, the first event."""
    if not r["sessions"]:
        print("no sessions", file=sys.stderr)
    for s in r["sessions"]:
        users = s["kinds"].get("user.text", 0)
        prompts = "prompt " if users == 1 else "prompts"
        print(f"{(s['updated'] or '')[:16]:<16}  {_title(s)[:60]:<60}  {s['events']:>5} events "
              f"{users:>3} {prompts}  {s['first']['ref']}")
    if r["nextCursor"]:
        print(f"more: --cursor {r['nextCursor']}", file=sys.stderr)


def read(r: ReadResult) -> None:
    ev = r["event"]
    print(f"{ev['ref']}  {ev['entryType']} {ev.get('role') or ''}  {ev['timestamp']}")
    print(f"branch {ev['branchState']}  context {ev['contextRole']}  "
          f"selection {ev['selectionState']}")
    print(f"source {r['source']['path']}:{r['source']['line']} (byte {r['source']['byteOffset']})")
    edit = ev.get("contextEdit")
    if edit is not None:
        what = ("removed from the model context" if edit["replacement"] == "removed"
                else "its content replaced in the model context")
        print(f"context edit: {what} by {edit['ref']} (the text below is the original)")
    for key, value in (ev.get("metadata") or {}).items():
        shown = ", ".join(map(str, value)) if isinstance(value, list) else value
        print(f"{key} {shown}")
    for f in r["fragments"]:
        print(f"\n--- {f['fragmentId']} ({f['offset']}..{f['offset'] + f['length']} of "
              f"{f['totalLength']})")
        print(f["text"])
    for o in r["omitted"]:
        print(f"[omitted {o['field']}: {o['reason']}, {o['bytes']} bytes]")
    n = r["neighbours"]
    for label, items in (("before", n["before"]), ("after", n["after"]),
                         ("alternative", n["alternatives"])):
        for node in items:
            print(f"{label:<11} {node['ref']}  {node['preview']}")


def trace(t: TraceResult) -> None:
    print(f"event   {t['event']['ref']}  {t['event']['preview']}")
    if t["parent"]:
        print(f"parent  {t['parent']['ref']}  {t['parent']['preview']}")
    for key in ("children", "siblings"):
        for node in t[key]:
            print(f"{'child' if key == 'children' else 'sibling':<7} {node['ref']}  "
                  f"{node['preview']}")
    print(f"toward leaf: {t['towardLeaf']} {t['towardLeafRef'] or ''}")
    for rel in t["relations"]:
        linked = rel.get("node")
        target = rel.get("path") or ("(masked)" if linked is not None and "masked" in linked else
                                     linked["ref"] if linked is not None else "")
        print(f"{rel['type']:<20} {rel['direction']:<3} {rel['label']:<8} {target}")
    for item in t["lineage"]:
        print(f"{item['relation']}: {'(masked)' if item.get('masked') else item.get('path')}")
