"""What reading the best hits again for their meaning costs a search (bench only; no test uses it).

    .venv/bin/python -m bench.speed.meaning_cost CORPUS_DIR INDEX [--runs 7] [--out FILE]

In-process, on the existing index (refreshed first), wall time per query class, three ways: words
only (PI_EVENT_SEARCH_MEANING=off); a first ask (no vector known: this process's and the vectors
file emptied before each); vectors known (read before: the order is computed again, the model
reads only the query). Wall time, not thread time: NumPy's BLAS threads do the model's work. The
connection's memo is emptied before each search (a query asked again costs a slice).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import sys
import time
from pathlib import Path
from typing import Any

QUERIES = [("common", "error"), ("two_terms", "websocket reconnect"),
           ("phrase", '"connection refused"'), ("three", "build failed lockfile"),
           ("memory", "the deploy script broke after upgrade")]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", type=Path)
    ap.add_argument("index", type=Path)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "server"))
    from pi_event_search.core.authz import Scope
    from pi_event_search.meaning import minilm, vectors
    from pi_event_search.query.search import Filters
    from pi_event_search.service.engine import Engine
    from pi_event_search.source.discovery import SessionDir

    engine = Engine(args.index, [SessionDir(str(args.corpus / "agent" / "sessions"), live=False)])
    engine.refresh()
    scope = Scope.of(json.loads((args.corpus / "manifest.json").read_text())["roots"])
    started = time.perf_counter()
    minilm.model()
    result: dict[str, Any] = {"load_ms": round((time.perf_counter() - started) * 1000, 1),
                              "runs": args.runs, "classes": {}}
    stored = args.index.with_name(vectors.FILE)
    for mode in ("words", "first", "known"):
        os.environ["PI_EVENT_SEARCH_MEANING"] = "off" if mode == "words" else "on"
        for cls, query in QUERIES:
            times = []
            for _ in range(args.runs):
                engine.reader().memo.clear()
                if mode == "first":
                    vectors.vectors.known.clear()
                    if stored.exists():
                        with sqlite3.connect(stored) as db:
                            db.execute("DELETE FROM vectors")
                started = time.perf_counter()
                engine.search(query, Filters(), scope, limit=20)
                times.append((time.perf_counter() - started) * 1000)
            times.sort()
            result["classes"].setdefault(cls, {})[mode] = {
                "p50": round(statistics.median(times), 1), "max": round(times[-1], 1)}
            print(f"{mode:6s} {cls:10s} p50 {statistics.median(times):7.1f} ms  "
                  f"max {times[-1]:7.1f} ms", file=sys.stderr, flush=True)
    text = json.dumps(result, indent=1)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
