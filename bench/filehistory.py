"""Benchmark of piEvents/fileHistory and piEvents/lineOrigin through the running server (issue 18).

    .venv/bin/python bench/filehistory.py --corpus /work/bench-corpus/corpus-1G \
        --index bench/out/index-1G.sqlite3 --results bench/results/filehistory-1G.json

Uses an existing corpus (bench/corpus.py) and indexes it into --index first when that index is
missing or behind (the CLI, not timed). Files: the 20 files with the most change events under the
roots plus 80 drawn at random among the files with any evidence. fileHistory asks each file's first
page (limit 50) and its counts. lineOrigin opens each file as an editor would (didOpen; the
corpus' project directories do not exist on disk) with a text made of lines that Pi's edit and
write calls wrote there, plus lines nobody wrote (the worst case: every change call of the file is
looked at), and asks for lines of both kinds. Nothing here is a test; no test asserts a timing.
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from lspclient import LspClient  # noqa: E402
from run import dist, machine, pct  # noqa: E402

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
    """Non-trivial lines that edit/write calls on `path` wrote, read from the session files."""
    conn = sqlite3.connect(f"file:{index}?mode=ro", uri=True)
    out: list[str] = []
    for spath, off in conn.execute(
            "SELECT s.path, e.byte_off FROM file_refs r JOIN events e ON e.eid = r.eid "
            "JOIN sessions s ON s.sid = e.sid WHERE r.path = ? AND r.op = 'changed' "
            "AND r.label = 'derived'", (path,)):
        with open(spath, "rb") as fh:
            fh.seek(off)
            entry = orjson.loads(fh.readline())
        for block in entry.get("message", {}).get("content", []):
            args = block.get("arguments") if isinstance(block, dict) else None
            if not isinstance(args, dict) or block.get("name") not in ("edit", "write"):
                continue
            texts = [args.get("content")] + [e.get("newText") for e in args.get("edits") or []
                                             if isinstance(e, dict)]
            for text in texts:
                if isinstance(text, str):
                    out += [ln for ln in text.split("\n") if len(ln.strip()) >= 8]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--corpus", required=True, help="a corpus directory (with manifest.json)")
    ap.add_argument("--index", required=True)
    ap.add_argument("--results", default=str(HERE / "results" / "filehistory-1G.json"))
    ap.add_argument("--lines", type=int, default=4, help="lineOrigin requests per file and kind")
    ap.add_argument("--seed", type=int, default=11)
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
    load = os.getloadavg()
    summary: dict[str, Any] = {
        "machine": machine(), "loadavg": [round(x, 2) for x in load],
        "corpus": {"dir": args.corpus, "bytes": manifest["stats"]["bytes"],
                   "sessions": manifest["stats"]["sessions"]},
        "refresh_before_s": round(index_s, 1), "files": len(files), "history_hits": hits,
        "fileHistory_ms": dist(history), "lineOrigin_written_ms": dist(written),
        "lineOrigin_unknown_ms": dist(unknown),
        "lineOrigin_found": f"{found}/{len(written)}",
        "target_p95_ms": 15.0,
    }
    Path(args.results).parent.mkdir(parents=True, exist_ok=True)
    Path(args.results).write_bytes(orjson.dumps(summary, option=orjson.OPT_INDENT_2) + b"\n")
    print(f"fileHistory p50 {pct(history, .5):.1f} p95 {pct(history, .95):.1f} ms; "
          f"lineOrigin written p95 {pct(written, .95):.1f}, nobody p95 {pct(unknown, .95):.1f} ms "
          f"({found}/{len(written)} found); load {load[0]:.2f}")


if __name__ == "__main__":
    main()
