"""Two engines, the same query mix, through the running server, interleaved (bench only).

    .venv/bin/python bench/query_ab.py CORPUS_DIR INDEX --engine before=REV --engine after=HEAD

On a shared machine, two benchmark runs minutes apart see different loads. This alternates the
engines in rounds (each round: a fresh server per engine, every class of run.py's query mix plus
the corpus' rare words) so both see the same load, and reports per engine and class the latency
distribution and the server's own CPU per query (from /proc), which load does not inflate. The
engines are committed revisions, exported like run.py's --engine. Prints JSON.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from lspclient import LspClient  # noqa: E402
from run import QUERY_MIX, dist, proc_cpu_ms  # noqa: E402


def export(rev: str, out: Path) -> tuple[str, str]:
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", rev],
                            capture_output=True, text=True, check=True).stdout.strip()
    src = out / f"engine-{commit}"
    shutil.rmtree(src, ignore_errors=True)
    src.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", commit, "server"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    return commit, str(src / "server")


def one_round(path: str, corpus: Path, index: Path, m: dict[str, Any],
              mix: dict[str, list[dict[str, Any]]], n: int) -> dict[str, Any]:
    # `python -m`: the console script's entry point moved with the package layout (issue 22),
    # the module entry did not, so engines from either side of the move run the same way.
    env = dict(os.environ, PI_CODING_AGENT_DIR=m["agent_dir"], PI_EVENT_SEARCH_INDEX=str(index),
               XDG_CACHE_HOME=str(corpus / "cache"), PYTHONPATH=path)
    c = LspClient([sys.executable, "-m", "pi_event_search", "serve"], env, cwd=str(corpus))
    out: dict[str, Any] = {}
    try:
        c.initialize(m["roots"], {"watch": False})
        c.wait_notification("piEvents/indexChanged", timeout=3600)
        for cls, variants in mix.items():
            for q in variants:
                c.request("piEvents/search", {"limit": 20, **q})
            times = []
            cpu0 = proc_cpu_ms(c.proc.pid)
            for i in range(n):
                t0 = time.perf_counter()
                c.request("piEvents/search", {"limit": 20, **variants[i % len(variants)]})
                times.append((time.perf_counter() - t0) * 1000)
            out[cls] = {"times": times, "cpu": proc_cpu_ms(c.proc.pid) - cpu0}
    finally:
        c.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("corpus", type=Path)
    ap.add_argument("index", type=Path)
    ap.add_argument("--engine", action="append", required=True,
                    help="label=REV, or label=REV@INDEX: that engine on its own index (an engine "
                         "of another schema version would rebuild the shared one)")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--queries", type=int, default=50, help="per class, per round")
    ap.add_argument("--out", type=Path, default=HERE / "out")
    args = ap.parse_args()
    m = orjson.loads((args.corpus / "manifest.json").read_bytes())
    mix = dict(QUERY_MIX)
    mix["rare"] = [{"query": w} for w in list(m["rare"])[:5]]
    engines = {}
    for spec in args.engine:
        label, rev = spec.split("=", 1)
        rev, _, own = rev.partition("@")
        engines[label] = (*export(rev, args.out.resolve()),
                          Path(own).resolve() if own else args.index.resolve())
    acc: dict[str, dict[str, dict[str, Any]]] = {
        lb: {c: {"times": [], "cpu": 0.0} for c in mix} for lb in engines}
    loads = []
    for _ in range(args.rounds):
        for label, (_, path, index) in engines.items():
            loads.append(round(os.getloadavg()[0], 2))
            for cls, r in one_round(path, args.corpus, index, m, mix,
                                    args.queries).items():
                acc[label][cls]["times"] += r["times"]
                acc[label][cls]["cpu"] += r["cpu"]
    total = args.rounds * args.queries
    res = {"load_average": loads, "rounds": args.rounds, "queries_per_class": total,
           "engines": {lb: engines[lb][0] for lb in engines},
           "classes": {lb: {c: {**{k: round(v, 2) for k, v in dist(x["times"]).items()},
                                "server_cpu_ms": round(x["cpu"] / total, 2)}
                            for c, x in per.items()} for lb, per in acc.items()}}
    print(orjson.dumps(res, option=orjson.OPT_INDENT_2).decode())


if __name__ == "__main__":
    main()
