"""CPU time of searches in-process on an existing index, the connection's memo emptied before
each run (bench only; no test uses it).

    .venv/bin/python -m bench.speed.relax_profile INDEX [--queries set|mix] [--runs 3] [--profile]

Per query style: p50/p95 of the thread's CPU time (time.thread_time: on a shared machine, wall
time mostly measures the other processes) and of wall time, with the load average; --profile
prints cProfile's top functions over every run. Prints JSON.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import statistics
import sys
import time
from pathlib import Path
from typing import Any

MIX: dict[str, list[dict[str, Any]]] = {  # bench/speed/run.py's query mix, the relaxed class and beside it
    "two_terms": [{"query": "websocket reconnect"}, {"query": "cache timeout"},
                  {"query": "database migration"}],
    "prefix": [{"query": "recon", "prefixLast": True}, {"query": "webso", "prefixLast": True},
               {"query": "migra", "prefixLast": True}],
    "relaxed": [{"query": "websocket reconnect bug"}, {"query": "cache timeout flaky"},
                {"query": "database migration broken"}, {"query": "deploy release outage"}],
}


def set_queries() -> dict[str, list[dict[str, Any]]]:
    from bench.relevance.queries import MOMENTS
    out: dict[str, list[dict[str, Any]]] = {"copied": [], "memory": [], "agent": []}
    for _key, _marks, copied, memory, agent in MOMENTS:
        for style, text in (("copied", copied), ("memory", memory), ("agent", agent)):
            out[style].append({"query": text})
    return out


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(p * len(xs)))], 2)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("index")
    ap.add_argument("--queries", default="set", choices=["set", "mix"])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    from pi_event_search.core.authz import Scope
    from pi_event_search.index import store
    from pi_event_search.query.search import Filters, search

    conn = store.connect(Path(args.index), readonly=True)
    scope = Scope.of(None)
    classes = set_queries() if args.queries == "set" else MIX
    prof = cProfile.Profile() if args.profile else None
    out: dict[str, Any] = {"index": args.index, "runs": args.runs,
                           "load_before": os.getloadavg()[0], "classes": {}}
    pages: dict[str, Any] = {}
    for cls, qs in classes.items():
        cpu: list[float] = []
        wall: list[float] = []
        for q in qs:
            for _ in range(args.runs):
                conn.memo.clear()  # type: ignore[attr-defined]
                if prof:
                    prof.enable()
                t0, c0 = time.perf_counter(), time.thread_time()
                page = search(conn, q["query"], Filters(), scope, limit=20,
                              prefix_last=q.get("prefixLast", False))
                cpu.append((time.thread_time() - c0) * 1000)
                wall.append((time.perf_counter() - t0) * 1000)
                if prof:
                    prof.disable()
            pages[q["query"]] = [(h["sessionId"], h["entryId"], h.get("missing")) for h in page.hits]
        out["classes"][cls] = {"n": len(cpu), "cpu_p50": pct(cpu, .5), "cpu_p95": pct(cpu, .95),
                               "cpu_mean": round(statistics.mean(cpu), 2),
                               "wall_p50": pct(wall, .5), "wall_p95": pct(wall, .95)}
    out["load_after"] = os.getloadavg()[0]
    print(json.dumps(out, indent=1))
    if os.environ.get("PAGES"):
        Path(os.environ["PAGES"]).write_text(json.dumps(pages, indent=0, sort_keys=True))
    if prof:
        pstats.Stats(prof, stream=sys.stderr).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
