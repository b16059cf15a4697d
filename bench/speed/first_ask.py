"""What a first ask of a query costs by words alone (bench only; no test uses it).

    PYTHONPATH=REV/server .venv/bin/python -m bench.speed.first_ask CORPUS_DIR INDEX [--rounds 2] \
        [--out FILE]

In-process, on the existing index, PI_EVENT_SEARCH_MEANING=off: the candidates, their scores and the
order, as a query asked for the first time computes them (the connection's memo emptied before
each; a query asked again costs a slice of the kept order). The queries: the relevance set's dev
split from memory (68, the queries whose candidates cost most: several words, some common) and
five of the speed mix. Thread CPU ms per search: p50, p95, max. The code measured is whichever
`pi_event_search` comes first on the path (PYTHONPATH names an older revision's server/).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

MIX = ["the deploy script broke after upgrade", "tests failing since lockfile change",
       "websocket reconnect bug", "error", "build failing since lockfile"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", type=Path)
    ap.add_argument("index", type=Path)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    os.environ["PI_EVENT_SEARCH_MEANING"] = "off"
    import pi_event_search
    from bench.relevance import real
    from pi_event_search.core.authz import Scope
    from pi_event_search.query.search import Filters
    from pi_event_search.service.engine import Engine
    from pi_event_search.source.discovery import SessionDir

    manifest = json.loads((args.corpus / "manifest.json").read_text(encoding="utf-8"))
    engine = Engine(args.index.resolve(), [SessionDir(manifest["sessions_dir"], live=True)])
    scope = Scope.of(manifest["roots"])
    queries = [q["query"] for q in real.queries("dev") if q["style"] == "memory"] + MIX
    for q in queries[:3]:  # warm the page cache and the process
        engine.search(q, Filters(), scope, limit=20)
    spent: list[tuple[float, str]] = []
    for _ in range(args.rounds):
        for q in queries:
            engine.reader().memo.clear()
            t0 = time.thread_time()
            engine.search(q, Filters(), scope, limit=20)
            spent.append(((time.thread_time() - t0) * 1000, q))
    ms = sorted(t for t, _ in spent)
    res: dict[str, Any] = {
        "server": str(Path(pi_event_search.__file__).parent), "queries": len(queries),
        "rounds": args.rounds, "load_average": os.getloadavg()[0],
        "cpu_ms": {"p50": round(statistics.median(ms), 1), "p95": round(ms[int(len(ms) * 0.95)], 1),
                   "max": round(ms[-1], 1)},
        "dearest": [{"ms": round(t, 1), "query": q} for t, q in sorted(spent)[-5:]]}
    text = json.dumps(res, indent=2)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
