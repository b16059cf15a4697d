"""Where the time goes: profiles of the operations that miss their targets (bench only).

    .venv/bin/python -m bench.speed.hotspots --size 100M

- cold index: `py-spy record` (installed into the venv on first use) on `pi-event-search index`,
  reported as the hottest functions by own time and by inclusive time;
- index size: bytes per table and index (SQLite's dbstat), when available;
- queries, a no-change refresh, a refresh after one append, a read: cProfile in-process, plus the
  SQL plan of the ranked query and the time of its bare FTS5 MATCH;
- server start: import time of the server modules.

Writes bench/out/hotspots-<size>.json and prints a readable summary.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import orjson

from bench.common.corpus import generate, iso, parse_size
from bench.speed.run import QUERY_MIX, measured, use_engine

BENCH = Path(__file__).resolve().parents[1]

VENV_BIN = Path(sys.executable).parent


def py_spy() -> str:
    exe = VENV_BIN / "py-spy"
    if not exe.exists():
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "py-spy"], check=True)
    return str(exe)


def collapsed_top(path: Path, n: int = 15) -> dict[str, Any]:
    """Own and inclusive sample shares per function from py-spy's collapsed stacks."""
    own: Counter[str] = Counter()
    incl: Counter[str] = Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack:
            continue
        c = int(count)
        total += c
        frames = [f.split(" (")[0] + " (" + f.split(" (")[1].split(":")[0].rsplit("/", 1)[-1] + ")"
                  if " (" in f else f for f in stack.split(";")]
        own[frames[-1]] += c
        for f in set(frames):
            incl[f] += c
    return {"samples": total,
            "own": [(f, round(100 * c / total, 1)) for f, c in own.most_common(n)],
            "inclusive": [(f, round(100 * c / total, 1)) for f, c in incl.most_common(n + 10)]}


def cprofile(fn: Any, n: int = 14) -> dict[str, Any]:
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    fn()
    prof.disable()
    wall = time.perf_counter() - t0
    buf = io.StringIO()
    stats = pstats.Stats(prof, stream=buf)
    rows = []
    for (file, line, name), (_, calls, tt, ct, _) in stats.stats.items():  # type: ignore[attr-defined]
        rows.append((f"{name} ({Path(file).name}:{line})", calls, tt, ct))
    own = sorted(rows, key=lambda r: -r[2])[:n]
    cum = sorted(rows, key=lambda r: -r[3])[:n]
    return {"wall_ms": round(wall * 1000, 1),
            "own": [(r[0], r[1], round(r[2] * 1000, 1)) for r in own],
            "cumulative": [(r[0], r[1], round(r[3] * 1000, 1)) for r in cum]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="100M")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", default=str(BENCH / "out"))
    ap.add_argument("--keep-corpus", action="store_true")
    ap.add_argument("--engine", default="HEAD", help="git revision of server/, or 'worktree'")
    args = ap.parse_args()
    label = args.size
    engine_rev = use_engine(args.engine, Path(args.out))
    base = (Path(args.out) / f"profile-corpus-{label}").resolve()
    m = generate(base, parse_size(args.size), args.seed)
    index = base / "index.sqlite3"
    for s in ("", "-wal", "-shm"):
        Path(str(index) + s).unlink(missing_ok=True)
    env = dict(os.environ, PI_CODING_AGENT_DIR=m["agent_dir"], PI_EVENT_SEARCH_INDEX=str(index))
    os.environ.update(PI_CODING_AGENT_DIR=m["agent_dir"], PI_EVENT_SEARCH_INDEX=str(index))
    out: dict[str, Any] = {"size": label, "engine": engine_rev}

    # 1. cold index under py-spy
    raw = base / "index.collapsed"
    subprocess.run([py_spy(), "record", "--format", "raw", "--rate", "200", "-o", str(raw),
                    "--", str(VENV_BIN / "pi-event-search"), "index"], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out["cold_index"] = collapsed_top(raw)

    # 2. index size by table
    import sqlite3

    conn = sqlite3.connect(index)
    try:
        rows = conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name "
                            "ORDER BY 2 DESC").fetchall()
        out["index_tables"] = [(n, b) for n, b in rows[:12]]
        text = conn.execute("SELECT sum(length(CAST(text AS BLOB))) FROM fragments").fetchone()[0]
        out["fragment_text_bytes"] = text
    except sqlite3.OperationalError as exc:
        out["index_tables"] = f"dbstat unavailable: {exc}"
    conn.close()

    # 3. in-process: queries, refreshes, reads
    from pi_event_search.core.authz import Scope
    from pi_event_search.query.search import Filters
    from pi_event_search.service.engine import Engine

    engine = Engine.open(index, [])
    scope = Scope.of(m["roots"])
    rconn = engine.reader()
    for cls, variants in QUERY_MIX.items():
        q = variants[0]
        f = q.get("filters", {})

        def run_q(q: dict[str, Any] = q, f: dict[str, Any] = f) -> None:
            for _ in range(10):
                engine.search(q["query"], Filters(kinds=f.get("kind", []), tools=f.get("tool", [])),
                              scope, limit=20, prefix_last=q.get("prefixLast", False))

        run_q()
        out[f"query_{cls}"] = cprofile(run_q)
    from pi_event_search.query.parse import parse

    match = parse("error").match
    t0 = time.perf_counter()
    n = rconn.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (match,)).fetchone()[0]
    out["fts_match_error"] = {"rows": n, "count_ms": round((time.perf_counter() - t0) * 1000, 1)}
    t0 = time.perf_counter()
    rconn.execute("SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY rank LIMIT 20",
                  (match,)).fetchall()
    out["fts_match_error"]["top20_by_rank_ms"] = round((time.perf_counter() - t0) * 1000, 1)
    rare = list(m["rare"])[:3]

    def run_rare() -> None:
        for _ in range(4):
            for w in rare:
                engine.search(w, Filters(), scope, limit=20)

    run_rare()
    out["query_rare"] = cprofile(run_rare)
    out["refresh_no_change"] = cprofile(engine.refresh)
    for live in m["live"]:
        def append_then_refresh(live: dict[str, Any] = live) -> None:
            line = orjson.dumps({"type": "message", "id": "0badcafe", "parentId": live["leaf"],
                                 "timestamp": iso(live["clock"] + 1000),
                                 "message": {"role": "user", "content": [
                                     {"type": "text", "text": "profile append"}],
                                     "timestamp": live["clock"] + 1000}}) + b"\n"
            with open(live["path"], "ab") as fh:
                fh.write(line)
            engine.refresh()

        out[f"refresh_after_append_{live['label']}"] = cprofile(append_then_refresh)
    refs = [f"pi-event:{x['sessionId']}/{x['entryId']}" for x in m["needles"] if x["visible"]
            and x["kind"] == "tool.result"][:20]

    def reads() -> None:
        for r in refs:
            engine.read(r, scope)

    reads()
    out["read_x20"] = cprofile(reads)

    def traces() -> None:
        for r in refs:
            engine.trace(r, scope)

    out["trace_x20"] = cprofile(traces)
    engine.close()

    # peak RSS of a cold index of the biggest file alone
    big = max(m["live"], key=lambda x: x["bytes"])
    solo = base / "solo"
    shutil.rmtree(solo, ignore_errors=True)
    folder = solo / "agent" / "sessions" / "--solo--"
    folder.mkdir(parents=True)
    os.link(big["path"], folder / Path(big["path"]).name)
    senv = dict(env, PI_CODING_AGENT_DIR=str(solo / "agent"),
                PI_EVENT_SEARCH_INDEX=str(solo / "index.sqlite3"))
    r = measured([str(VENV_BIN / "pi-event-search"), "index"], senv)
    out["solo_big_file_index"] = {"file_mb": round(big["bytes"] / 1e6, 1),
                                  "seconds": r["wall_s"], "peak_rss_mb": r["maxrss_mb"]}

    # 4. server import time
    imp = subprocess.run([sys.executable, "-X", "importtime", "-c",
                          "import pi_event_search.lsp.server, pi_event_search.lsp.handlers"],
                         capture_output=True, text=True).stderr.splitlines()
    parsed = []
    for ln in imp:
        parts = ln.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            parsed.append((parts[2].rstrip(), int(parts[1])))
    parsed.sort(key=lambda x: -x[1])
    out["server_imports_us"] = parsed[:8]

    Path(args.out, f"hotspots-{label}.json").write_bytes(orjson.dumps(out,
                                                                    option=orjson.OPT_INDENT_2))
    print(orjson.dumps(out, option=orjson.OPT_INDENT_2).decode())
    if not args.keep_corpus:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
