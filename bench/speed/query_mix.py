"""The speed bench's query mix through the server on an existing corpus and index (bench only; no
test uses it), without generating a corpus again.

    .venv/bin/python -m bench.speed.query_mix CORPUS_DIR INDEX [--queries 100] [--out FILE]

`pi-event-search serve` over stdio on INDEX (refreshed by the server's first pass), the roots of
CORPUS_DIR/manifest.json. Each class of bench/speed/run.py's QUERY_MIX (and two queries typed from
memory) is asked two ways: its queries once each, a first ask (the connection's memo empty for
them; vectors of events read before may be known), then `--queries` asks cycling through them
(asked again: what run.py's query phase times, and what issue 46's p95 targets were measured on).
Wall time of the round trip, ms.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

from bench.common.lspclient import LspClient, RpcError
from bench.speed.run import CLI, QUERY_MIX, dist, log

MEMORY = [{"query": "the deploy script broke after upgrade"},
          {"query": "tests failing since lockfile change"}]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", type=Path)
    ap.add_argument("index", type=Path)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    manifest = json.loads((args.corpus / "manifest.json").read_text())
    env = dict(os.environ, PI_CODING_AGENT_DIR=manifest["agent_dir"],
               PI_EVENT_SEARCH_INDEX=str(args.index.resolve()),
               XDG_CACHE_HOME=str(args.corpus.resolve() / "cache"))
    client = LspClient([CLI, "serve"], env, cwd=str(args.corpus))
    out: dict[str, Any] = {"index": str(args.index), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                           time.gmtime()),
                           "load_average_start": os.getloadavg()[0], "classes": {}}
    try:
        client.initialize(manifest["roots"], {"watch": False})
        while True:
            try:
                client.request("piEvents/search", {"query": "error", "limit": 20})
                break
            except RpcError:
                time.sleep(0.05)

        def ask(q: dict[str, Any]) -> float:
            t0 = time.perf_counter()
            client.request("piEvents/search", {"limit": 20, **q})
            return (time.perf_counter() - t0) * 1000

        for cls, variants in {**QUERY_MIX, "memory": MEMORY}.items():
            first = [ask(q) for q in variants]
            again = [ask(variants[i % len(variants)]) for i in range(args.queries)]
            out["classes"][cls] = {"queries": [q["query"] for q in variants],
                                   "first_ms": [round(x, 1) for x in first],
                                   "again_ms": dist(again)}
            log(f"{cls}: first {' '.join(f'{x:.0f}' for x in first)} ms; again p50 "
                f"{dist(again)['p50']:.1f} p95 {dist(again)['p95']:.1f} ms")
    finally:
        client.close()
    out["load_average_end"] = os.getloadavg()[0]
    text = json.dumps(out, indent=2)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
