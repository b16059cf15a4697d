"""Where one search's time goes, stage by stage (bench only; no test uses it).

Stage and total times are the thread's CPU time (time.thread_time): on a shared machine, wall
time mostly measures the other processes.

    .venv/bin/python -m bench.speed.query_profile CORPUS_DIR INDEX [--runs 50]

In-process, on the existing index, per query: the engine's whole `search`, its stages (timing
spans wrapped around the search module's functions, whichever of them exist at this revision),
the bare FTS5 MATCH (newest 1,000 rowids, then with bm25), the SQL plan of each statement a search
runs, and the JSON encoding of the page (orjson, and the stdlib json pygls uses after cattrs).
Through the server: the round trip of a search that does no SQL (the protocol floor) and of each
query. Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

QUERIES: list[dict[str, Any]] = [
    {"class": "common", "query": "error"},
    {"class": "two_terms", "query": "websocket reconnect"},
    {"class": "phrase", "query": '"connection refused"'},
    {"class": "filter", "query": "error", "filters": {"tool": ["bash"], "kind": ["tool.result"]}},
    {"class": "prefix", "query": "recon", "prefixLast": True},
    {"class": "rare", "query": None},
    {"class": "inflected", "query": "build failing since lockfile"},
    {"class": "empty", "query": ""},
]
STAGES = ("_ranked", "_recent", "_window", "_coalesce", "snippets", "snippet",
          "hit_from_row", "_hits")


def med(xs: list[float]) -> float:
    return round(statistics.median(xs), 3) if xs else float("nan")


SPANS: dict[str, list[float]] = defaultdict(list)


def wrap_stages() -> None:
    from pi_event_search.query import search as mod

    for name in STAGES:
        fn = getattr(mod, name, None)
        if fn is None or getattr(fn, "_wrapped", False):
            continue

        def timed(*a: Any, _fn: Callable[..., Any] = fn, _n: str = name, **kw: Any) -> Any:
            t0 = time.thread_time()
            try:
                return _fn(*a, **kw)
            finally:
                SPANS[_n].append((time.thread_time() - t0) * 1000)

        timed._wrapped = True  # type: ignore[attr-defined]
        setattr(mod, name, timed)


def in_process(index: Path, roots: list[str], runs: int, queries: list[dict[str, Any]]
               ) -> dict[str, Any]:
    from pi_event_search.core.authz import Scope
    from pi_event_search.index import store
    from pi_event_search.query.search import Filters, search

    conn = store.connect(index, readonly=True)
    scope = Scope.of(roots)
    out: dict[str, Any] = {}
    for q in queries:
        wrap_stages()
        SPANS.clear()
        spans = SPANS
        f = q.get("filters", {})
        filters = Filters(kinds=f.get("kind", []), tools=f.get("tool", []))
        total: list[float] = []
        cpu: list[float] = []
        enc_or: list[float] = []
        enc_js: list[float] = []
        statements: list[str] = []
        for i in range(runs + 1):
            if i == 1:
                spans.clear()
            if i == 0:
                conn.set_trace_callback(statements.append)
            t0, c0 = time.perf_counter(), time.thread_time()
            page = search(conn, q["query"], filters, scope, limit=20,
                          prefix_last=q.get("prefixLast", False))
            total.append((time.perf_counter() - t0) * 1000)
            cpu.append((time.thread_time() - c0) * 1000)
            conn.set_trace_callback(None)
            t0 = time.perf_counter()
            orjson.dumps({"hits": page.hits, "nextCursor": page.next_cursor})
            enc_or.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            json.dumps({"jsonrpc": "2.0", "id": 1,
                        "result": {"hits": page.hits, "nextCursor": page.next_cursor}})
            enc_js.append((time.perf_counter() - t0) * 1000)
        row: dict[str, Any] = {
            "query": q["query"], "hits": len(page.hits), "search_ms": med(total[1:]),
            "search_cpu_ms": med(cpu[1:]),
            "stages_ms": {k: {"calls_per_search": round(len(v) / runs, 2),
                              "ms_per_search": round(sum(v) / runs, 3)}
                          for k, v in spans.items()},
            "orjson_ms": med(enc_or[1:]), "stdlib_json_ms": med(enc_js[1:]),
            "plans": [],
        }
        for sql in statements:
            if not sql.lstrip().upper().startswith(("SELECT", "WITH")):
                continue
            try:
                plan = [r[3] for r in conn.execute("EXPLAIN QUERY PLAN " + sql)]
            except Exception as exc:  # noqa: BLE001 - a plan is informative only
                plan = [f"(no plan: {exc})"]
            row["plans"].append({"sql": " ".join(sql.split())[:300], "plan": plan})
        out[q["class"]] = row
    return out


def bare_fts(index: Path, queries: list[dict[str, Any]], runs: int) -> dict[str, Any]:
    from pi_event_search.index import store
    from pi_event_search.query.parse import parse

    conn = store.connect(index, readonly=True)
    out: dict[str, Any] = {}
    for q in queries:
        if not q["query"]:
            continue
        match = parse(q["query"], prefix_last=q.get("prefixLast", False)).match
        res: dict[str, float] = {}
        for label, sql in (
                ("count_all", "SELECT count(*) FROM fts WHERE fts MATCH ?"),
                ("rowids_1000", "SELECT rowid FROM fts WHERE fts MATCH ? "
                                "ORDER BY rowid DESC LIMIT 1000"),
                ("rowids_bm25_1000", "SELECT rowid, bm25(fts, 1.0, 0.5) FROM fts WHERE fts "
                                     "MATCH ? ORDER BY rowid DESC LIMIT 1000")):
            times = []
            for _ in range(runs):
                t0 = time.thread_time()
                conn.execute(sql, (match,)).fetchall()
                times.append((time.thread_time() - t0) * 1000)
            res[label] = med(times)
        out[q["class"]] = res
    return out


def through_server(corpus: Path, index: Path, m: dict[str, Any], runs: int,
                   queries: list[dict[str, Any]]) -> dict[str, Any]:
    from bench.common.lspclient import LspClient

    cli = str(Path(sys.executable).parent / "pi-event-search")
    env = dict(os.environ, PI_CODING_AGENT_DIR=m["agent_dir"], PI_EVENT_SEARCH_INDEX=str(index),
               XDG_CACHE_HOME=str(corpus / "cache"))
    c = LspClient([cli, "serve"], env, cwd=str(corpus))
    out: dict[str, Any] = {}
    try:
        c.initialize(m["roots"], {"watch": False})
        c.wait_notification("piEvents/indexChanged", timeout=3600)
        for q in [{"class": "floor (no terms)", "query": "!!"}, *queries]:
            params = {"query": q["query"], "limit": 20, "filters": q.get("filters", {}),
                      "prefixLast": q.get("prefixLast", False)}
            times = []
            for i in range(runs + 1):
                t0 = time.perf_counter()
                c.request("piEvents/search", params)
                if i:
                    times.append((time.perf_counter() - t0) * 1000)
            out[q["class"]] = med(times)
    finally:
        c.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("corpus", type=Path)
    ap.add_argument("index", type=Path)
    ap.add_argument("--runs", type=int, default=50)
    args = ap.parse_args()
    m = orjson.loads((args.corpus / "manifest.json").read_bytes())
    queries = [dict(q) for q in QUERIES]
    for q in queries:
        if q["query"] is None:
            q["query"] = next(iter(m["rare"]))
    index = args.index.resolve()
    res = {"load_average": os.getloadavg()[0],
           "engine": in_process(index, m["roots"], args.runs, queries),
           "bare_fts_ms": bare_fts(index, queries, args.runs),
           "server_ms": through_server(args.corpus, index, m, args.runs, queries),
           "load_average_after": os.getloadavg()[0]}
    print(orjson.dumps(res, option=orjson.OPT_INDENT_2).decode())


if __name__ == "__main__":
    main()
