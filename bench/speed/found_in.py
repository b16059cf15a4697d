"""What answering only from a process's own session directories costs a search (core/authz.py
`found_in`): the same searches with and without the predicate, interleaved, CPU time per search.

    .venv/bin/python -m bench.speed.found_in [--sessions 1500] [--rounds 30] \
        [--out bench/results/found-in.json]

Benchmarks are not tests: nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))

from pi_event_search.core.authz import Scope  # noqa: E402
from pi_event_search.query.search import Filters, search  # noqa: E402
from pi_event_search.service.engine import Engine  # noqa: E402
from pi_event_search.source.discovery import default_dirs  # noqa: E402
from sessioncorpus import build  # noqa: E402

QUERIES = ["socket retry", "zanzibar", "failing build", "cache", "deploy timeout", "error"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=1500)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--out", default="bench/results/found-in.json")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        sessions = Path(tmp) / "sessions"
        build(sessions, "/work/x", random.Random(7), args.sessions)
        engine = Engine(Path(tmp) / "index.sqlite3", default_dirs(sessions, []))
        engine.refresh()
        conn = engine.reader()
        rows = []
        for label, roots in (("all", None), ("root", ["/work/x/alpha"])):
            times: dict[bool, list[float]] = {False: [], True: []}
            for _ in range(args.rounds):  # interleaved: a load moves both alike
                for found in (False, True):
                    scope = Scope.of(roots)
                    if found:
                        scope = engine._here(scope)
                    for q in QUERIES:
                        t = time.process_time()
                        search(conn, q, Filters(), scope, limit=20)
                        times[found].append((time.process_time() - t) * 1000)
            for found, ts in times.items():
                ts.sort()
                rows.append({"scope": label, "found_in": found, "n": len(ts),
                             "cpu_median_ms": round(statistics.median(ts), 3),
                             "cpu_p95_ms": round(ts[int(len(ts) * 0.95)], 3)})
        engine.close()
    result = {"sessions": args.sessions, "queries": QUERIES, "rounds": args.rounds,
              "load": os.getloadavg(), "python": platform.python_version(),
              "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "rows": rows}
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print("| scope | found_in | CPU median ms | CPU p95 ms |\n|---|---|---|---|")
    for r in rows:
        print(f"| {r['scope']} | {r['found_in']} | {r['cpu_median_ms']} | {r['cpu_p95_ms']} |")


if __name__ == "__main__":
    main()
