"""Benchmark of piEvents/fileHistory and piEvents/lineOrigin through the running server (issue 18).

    .venv/bin/python -m bench.features.filehistory --corpus /work/bench-corpus/corpus-1G \
        --index bench/out/index-1G.sqlite3 --results bench/results/filehistory-1G.json

Uses an existing corpus (bench/common/corpus.py) and indexes it into --index first when that index is
missing or behind (the CLI, not timed). Files: the 20 files with the most change events under the
roots plus 80 drawn at random among the files with any evidence. fileHistory asks each file's first
page (limit 50) and its counts. lineOrigin opens each file as an editor would (didOpen; the
corpus' project directories do not exist on disk) with a text made of lines that Pi's edit and
write calls wrote there, plus lines nobody wrote (the worst case: every change call of the file is
looked at), and asks for lines of both kinds. Written lines are those of successful calls on that
very path that the call did not merely carry as context (docs/protocol.md), so each should be
found. Nothing here is a test; no test asserts a timing.
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from bench.common.lspclient import LspClient
from bench.speed.run import dist, machine, pct
from pi_event_search.source.pitools import resolve_path

BENCH = Path(__file__).resolve().parents[1]

CLI = str(Path(sys.executable).parent / "pi-event-search")


def files_to_ask(index: Path, roots: list[str], rng: random.Random) -> list[str]:
    conn = sqlite3.connect(f"file:{index}?mode=ro", uri=True)
    under = " OR ".join("s.cwd_canon = ? OR s.cwd_canon LIKE ?" for _ in roots)
    params = [p for r in roots for p in (r, r.rstrip("/") + "/%")]
    rows = conn.execute(
        "SELECT r.path, sum(r.op = 'changed') AS changed FROM file_refs r JOIN events e "
        f"ON e.eid = r.eid JOIN sessions s ON s.sid = e.sid WHERE ({under}) AND r.path LIKE '%.ts' "
        "GROUP BY r.path ORDER BY changed DESC, r.path", params).fetchall()
    hot = [p for p, _ in rows[:20]]
    rest = [p for p, _ in rows[20:]]
    return hot + rng.sample(rest, min(80, len(rest)))


def written_lines(index: Path, path: str) -> list[str]:
    """Non-trivial lines that successful edit/write calls on `path` wrote (not merely carried as
    context), read from the session files."""
    conn = sqlite3.connect(f"file:{index}?mode=ro", uri=True)
    out: list[str] = []
    for spath, off, sid, cwd in conn.execute(
            "SELECT s.path, e.byte_off, e.sid, s.cwd FROM file_refs r JOIN events e "
            "ON e.eid = r.eid JOIN sessions s ON s.sid = e.sid WHERE r.path = ? "
            "AND r.op = 'changed' AND r.label = 'derived'", (path,)):
        with open(spath, "rb") as fh:
            fh.seek(off)
            entry = orjson.loads(fh.readline())
        for block in entry.get("message", {}).get("content", []):
            args = block.get("arguments") if isinstance(block, dict) else None
            if not isinstance(args, dict) or block.get("name") not in ("edit", "write") \
                    or resolve_path(args.get("path"), cwd) != path or failed(conn, sid, block):
                continue
            pairs = [(args.get("content"), "")] + [(e.get("newText"), e.get("oldText") or "")
                                                   for e in args.get("edits") or []
                                                   if isinstance(e, dict)]
            for new, old in pairs:
                if isinstance(new, str):
                    out += [ln for ln in new.split("\n")
                            if len(ln.strip()) >= 8 and new.count(ln.strip()) > old.count(ln.strip())]
    return out


def failed(conn: sqlite3.Connection, sid: int, block: dict[str, Any]) -> bool:
    row = conn.execute("SELECT max(e.is_error) FROM relations r JOIN events e ON e.eid = r.eid "
                       "WHERE r.target = ? AND r.type = 'tool-result-for' AND e.sid = ?",
                       (block.get("id"), sid)).fetchone()
    return bool(row and row[0])


def _stamp(session: int, second: int) -> str:
    return f"2026-05-{1 + session // 24:02d}T{session % 24:02d}:00:{second:02d}.000Z"


def hot_file(work: Path, edits: int, rounds: int) -> dict[str, Any]:
    """One file changed by `edits` edit calls (10 per session): the worst case of lineOrigin is
    linear in the file's change events. Written as Pi writes sessions, indexed, then asked
    through a server of its own."""
    proj, sessions = "/bench/hot/proj", work / "agent" / "sessions"
    folder = sessions / "--bench-hot-proj--"
    folder.mkdir(parents=True, exist_ok=True)
    rng, written = random.Random(3), []
    for n in range(edits // 10):
        sid = f"01990000-0000-7000-8000-{n:012d}"
        lines = [{"type": "session", "version": 3, "id": sid, "timestamp": _stamp(n, 0),
                  "cwd": proj}]
        parent = None
        for k in range(10):
            new = "\n".join(f"  const v{n}_{k}_{j} = compute(input, {rng.randint(0, 10**6)});"
                            for j in range(30))
            written.append(new.split("\n")[5])
            call = {"type": "toolCall", "id": f"c{k}", "name": "edit", "arguments": {
                "path": "src/hot.ts", "edits": [{"oldText": f"old {n} {k}", "newText": new}]}}
            for entry_id, msg in ((f"a{n:03d}{k:03d}"[:8], {"role": "assistant", "content": [call]}),
                                  (f"r{n:03d}{k:03d}"[:8], {"role": "toolResult", "toolCallId": f"c{k}",
                                   "toolName": "edit", "content": [{"type": "text", "text": "ok"}],
                                   "isError": False})):
                lines.append({"type": "message", "id": entry_id, "parentId": parent,
                              "timestamp": _stamp(n, 2 * k + 1), "message": msg})
                parent = entry_id
        (folder / f"2026-05-01T00-00-00-000Z_{sid}.jsonl").write_bytes(
            b"".join(orjson.dumps(x) + b"\n" for x in lines))
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(work / "agent"),
           "PI_EVENT_SEARCH_INDEX": str(work / "index.sqlite3"), "XDG_CACHE_HOME": str(work)}
    subprocess.run([CLI, "index"], env=env, check=True, capture_output=True)
    client = LspClient([CLI, "serve"], env)
    client.initialize(["/bench/hot"], {"watch": False})
    uri = "file:///bench/hot/proj/src/hot.ts"
    text = [written[0], written[-1], "  const nobody = wrote(this, line);"]
    client.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "typescript", "version": 1, "text": "\n".join(text) + "\n"}})
    out: dict[str, Any] = {"edits": edits}
    for name, line in (("oldest_ms", 0), ("newest_ms", 1), ("nobody_ms", 2)):
        times = []
        for _ in range(rounds):
            t1 = time.perf_counter()
            client.request("piEvents/lineOrigin", {"uri": uri, "line": line})
            times.append((time.perf_counter() - t1) * 1000)
        out[name] = dist(times)
    times = []
    for _ in range(rounds):
        t1 = time.perf_counter()
        client.request("piEvents/fileHistory", {"uri": uri, "limit": 50})
        times.append((time.perf_counter() - t1) * 1000)
    out["fileHistory_ms"] = dist(times)
    client.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--corpus", required=True, help="a corpus directory (with manifest.json)")
    ap.add_argument("--index", required=True)
    ap.add_argument("--results", default=str(BENCH / "results" / "filehistory-1G.json"))
    ap.add_argument("--lines", type=int, default=4, help="lineOrigin requests per file and kind")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--hot", type=int, default=500, help="edits of the synthetic hot file (0: skip)")
    args = ap.parse_args()
    manifest = orjson.loads((Path(args.corpus) / "manifest.json").read_bytes())
    env = {**os.environ, "PI_CODING_AGENT_DIR": manifest["agent_dir"],
           "PI_EVENT_SEARCH_INDEX": str(Path(args.index).resolve()),
           "XDG_CACHE_HOME": str(Path(args.index).resolve().parent / "cache")}
    t0 = time.perf_counter()
    subprocess.run([CLI, "index"], env=env, check=True, capture_output=True)
    index_s = time.perf_counter() - t0
    rng = random.Random(args.seed)
    roots = manifest["roots"]
    files = files_to_ask(Path(args.index), roots, rng)
    client = LspClient([CLI, "serve"], env)
    client.initialize(roots, {"watch": False})
    client.request("piEvents/fileHistory", {"uri": Path(files[0]).as_uri()})  # warm
    history: list[float] = []
    hits = 0
    for path in files:
        t1 = time.perf_counter()
        res = client.request("piEvents/fileHistory", {"uri": Path(path).as_uri(), "limit": 50})
        history.append((time.perf_counter() - t1) * 1000)
        hits += len(res["hits"])
    written: list[float] = []
    unknown: list[float] = []
    found = 0
    for n, path in enumerate(files):
        lines = written_lines(Path(args.index), path)
        if not lines:
            continue
        asked = rng.sample(lines, min(args.lines, len(lines)))
        nobody = [f"// nobody wrote this line {n}-{k}" for k in range(args.lines)]
        uri = Path(path).as_uri()
        client.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": "typescript", "version": 1,
            "text": "\n".join(asked + nobody) + "\n"}})
        for i in range(len(asked) + len(nobody)):
            t1 = time.perf_counter()
            res = client.request("piEvents/lineOrigin", {"uri": uri, "line": i})
            (written if i < len(asked) else unknown).append((time.perf_counter() - t1) * 1000)
            found += int(i < len(asked) and res["hit"] is not None)
    client.close()
    hot = hot_file(Path(tempfile.mkdtemp(prefix="pies-hot-")), args.hot, 50) if args.hot else None
    load = os.getloadavg()
    summary: dict[str, Any] = {
        "machine": machine(), "loadavg": [round(x, 2) for x in load],
        "corpus": {"dir": args.corpus, "bytes": manifest["stats"]["bytes"],
                   "sessions": manifest["stats"]["sessions"]},
        "refresh_before_s": round(index_s, 1), "files": len(files), "history_hits": hits,
        "fileHistory_ms": dist(history), "lineOrigin_written_ms": dist(written),
        "lineOrigin_unknown_ms": dist(unknown),
        "lineOrigin_found": f"{found}/{len(written)}",
        "hot_file": hot, "target_p95_ms": 15.0,
    }
    Path(args.results).parent.mkdir(parents=True, exist_ok=True)
    Path(args.results).write_bytes(orjson.dumps(summary, option=orjson.OPT_INDENT_2) + b"\n")
    print(f"fileHistory p50 {pct(history, .5):.1f} p95 {pct(history, .95):.1f} ms; "
          f"lineOrigin written p95 {pct(written, .95):.1f}, nobody p95 {pct(unknown, .95):.1f} ms "
          f"({found}/{len(written)} found); load {load[0]:.2f}")
    if hot:
        print(f"hot file ({hot['edits']} edits): lineOrigin p95 oldest "
              f"{hot['oldest_ms']['p95']:.1f}, nobody {hot['nobody_ms']['p95']:.1f}, "
              f"fileHistory p95 {hot['fileHistory_ms']['p95']:.1f} ms")


if __name__ == "__main__":
    main()
