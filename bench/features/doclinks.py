"""textDocument/documentLink on a note with many `pi-event:` references, over stdio.

    python -m bench.features.doclinks --corpus DIR --index PATH [--refs 500] [--rounds 10] \
        [--server PYTHONPATH]

The note references `--refs` visible events drawn (seeded) from the corpus's index, one per line.
The server is the installed `pi-event-search serve`, or with `--server` the package found on that
PYTHONPATH (to time an older revision: `git archive REV server | tar -x -C /tmp/old`, then
`--server /tmp/old/server`). Prints the timings as JSON.
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import orjson

from bench.common.lspclient import LspClient
from bench.speed.run import dist


def refs_from(index: Path, roots: list[str], n: int, seed: int) -> list[str]:
    conn = sqlite3.connect(f"file:{index}?mode=ro", uri=True)
    rows = conn.execute(
        "SELECT s.session_id, e.entry_id FROM events e JOIN sessions s ON s.sid = e.sid "
        "WHERE " + " OR ".join("s.cwd_canon = ? OR s.cwd_canon LIKE ?" for _ in roots),
        [x for r in roots for x in (r, r.rstrip("/") + "/%")]).fetchall()
    conn.close()
    return [f"pi-event:{s}/{e}" for s, e in random.Random(seed).sample(rows, min(n, len(rows)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--index", required=True)
    ap.add_argument("--refs", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--server", help="PYTHONPATH holding the pi_event_search to time")
    args = ap.parse_args()
    m = orjson.loads((Path(args.corpus) / "manifest.json").read_bytes())
    index = Path(args.index).resolve()
    env = {**os.environ, "PI_CODING_AGENT_DIR": m["agent_dir"], "PI_EVENT_SEARCH_INDEX": str(index),
           "XDG_CACHE_HOME": str(index.parent / "cache")}
    if args.server:
        env["PYTHONPATH"] = args.server
    client = LspClient([sys.executable, "-m", "pi_event_search", "serve"], env)
    client.initialize(m["roots"], {"watch": False})
    client.request("piEvents/status", {})  # the engine is open and the index current
    refs = refs_from(index, m["roots"], args.refs, args.seed)
    note = index.parent / "note.md"
    text = "".join(f"- {r}\n" for r in refs)
    note.write_text(text)
    uri = note.as_uri()
    client.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "markdown", "version": 1, "text": text}})
    times: list[float] = []
    linked = 0
    for _ in range(args.rounds + 1):
        t0 = time.perf_counter()
        links = client.request("textDocument/documentLink", {"textDocument": {"uri": uri}})
        times.append((time.perf_counter() - t0) * 1000)
        linked = sum(1 for x in links if x.get("target"))
    client.close()
    out: dict[str, Any] = {"refs": len(refs), "linked": linked, "ms": dist(times[1:]),
                           "loadavg": [round(x, 2) for x in os.getloadavg()],
                           "server": args.server or "installed"}
    sys.stdout.write(orjson.dumps(out, option=orjson.OPT_INDENT_2).decode() + "\n")


if __name__ == "__main__":
    main()
