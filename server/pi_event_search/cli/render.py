"""Human-readable CLI output (tables, progress lines). JSON output lives in cli.py."""

from __future__ import annotations

import sys
import time

from pi_event_search.core.wire import Hit, ReadResult, StatusResult, TraceResult
from pi_event_search.index.indexer import Progress
from pi_event_search.service.engine import Engine


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


INDEX_WAIT = 3600.0  # seconds `index` waits for another process's pass (then says how far)


def indexing_note(engine: Engine) -> None:
    """One line on stderr while the index is still being built (docs/protocol.md)."""
    state = engine.indexing()
    if state is not None:
        print(f"still indexing: {state['percent']}% of sessions", file=sys.stderr)


def index(engine: Engine, watch: bool) -> int:
    started = time.monotonic()
    report = engine.refresh_or_wait(progress_printer(), INDEX_WAIT)
    if not engine.writer:
        print(f"pid {engine.writer_pid()} indexes this index; waited for it", file=sys.stderr)
    changes = ", ".join(f"{n} {k}" for k, n in sorted(report.changed.items())) or "nothing"
    print(f"indexed {report.files} files in {time.monotonic() - started:.1f}s: {changes}; "
          f"{report.events} new events, {report.removed} sessions removed", file=sys.stderr)
    if watch:
        # Imported here, not above: watchfiles and asyncio cost every other command about 25 ms.
        # Nothing watch imports comes back here (tests/test_imports.py).
        from pi_event_search.service.watch import watch_forever

        watch_forever(engine, lambda r: print(
            f"updated: {r.changed_sessions} sessions, {r.events} new events", file=sys.stderr))
    return 0


def status(s: StatusResult) -> None:
    print(f"index      {s['index']['path']} ({s['index']['bytes'] / 1e6:.1f} MB)")
    print(f"sessions   {s['sessions']}   events {s['events']}   fragments {s['fragments']}")
    print(f"dirs       {', '.join(s['sessionDirs'])}")
    for key in ("stale", "unavailable"):
        for item in s[key]:
            print(f"{key:<10} {item['path']}: {item['error']}")
    for dup in s["duplicates"]:
        print(f"duplicate  {dup['path']} (canonical: {dup['canonicalPath']})")
    for bad in s["badLines"]:
        print(f"bad lines  {bad['path']}: {bad['badLines']}")
    for skip in s["skipped"]:
        print(f"skipped    {skip['path']}: {skip['reason']}")


def hits(items: list[Hit], next_cursor: str | None) -> None:
    if not items:
        print("no hits", file=sys.stderr)
        return
    for h in items:
        where = h["sessionName"] or h["cwd"] or ""
        err = " ERROR" if h["isError"] else ""
        print(f"{(h['timestamp'] or '')[:16]:<16}  {h['kind']:<18} {where[:40]}{err}")
        print(f"    {h['snippet']}")
        print(f"    {h['ref']}  {h['source']['path']}:{h['source']['line']}")
    if next_cursor:
        print(f"more: --cursor {next_cursor}", file=sys.stderr)


def read(r: ReadResult) -> None:
    ev = r["event"]
    print(f"{ev['ref']}  {ev['entryType']} {ev.get('role') or ''}  {ev['timestamp']}")
    print(f"branch {ev['branchState']}  context {ev['contextRole']}  "
          f"selection {ev['selectionState']}")
    print(f"source {r['source']['path']}:{r['source']['line']} (byte {r['source']['byteOffset']})")
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
