"""Two engines, the same query mix, through the running server, interleaved (bench only).

    .venv/bin/python -m bench.speed.query_ab CORPUS_DIR INDEX --engine before=REV --engine after=HEAD
    .venv/bin/python -m bench.speed.query_ab CORPUS_DIR INDEX --cold --engine before=REV@INDEX1 \
        --engine after=HEAD@INDEX2 --results bench/results/NAME.json

On a shared machine, two benchmark runs minutes apart see different loads. This alternates the
engines in rounds (each round: a fresh server per engine, every class of run.py's query mix plus
the corpus' rare words) so both see the same load, and reports per engine and class the latency
distribution and the server's own CPU per query (from /proc), which load does not inflate. With
--cold, each engine first indexes its own (emptied) index with the CLI in every round, measured
as run.py's cold index is (wall time, MB/s, CPU of the indexer and its worker, peak RSS); the
order of the engines is reversed every other round (A B B A ...), so neither always runs first.
With --interleave, every engine's server runs at once and each query goes to one engine, then
the next (the first of each turn rotating), so that the engines meet the same load at the same
moment; without it, each engine's searches run in a round of their own. The engines are
committed revisions, exported like run.py's --engine. Prints JSON (and writes it to --results).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson

from bench.common.lspclient import LspClient
from bench.speed.run import QUERY_MIX, dist, measured, proc_cpu_ms

BENCH = Path(__file__).resolve().parents[1]
REPO = BENCH.parent


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


def engine_env(path: str, corpus: Path, index: Path, m: dict[str, Any]) -> dict[str, str]:
    return dict(os.environ, PI_CODING_AGENT_DIR=m["agent_dir"], PI_EVENT_SEARCH_INDEX=str(index),
                XDG_CACHE_HOME=str(corpus / "cache"), PYTHONPATH=path)


def cold_index(path: str, corpus: Path, index: Path, m: dict[str, Any], src: int
               ) -> dict[str, Any]:
    """The engine's CLI indexes an emptied index of the corpus (run.py's cold index)."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{index}{suffix}").unlink(missing_ok=True)
    for side in index.parent.glob(f"{index.name}.fts-load*"):  # any lease's side file
        side.unlink(missing_ok=True)
    load = round(os.getloadavg()[0], 2)
    r = measured([sys.executable, "-m", "pi_event_search", "index"],
                 dict(engine_env(path, corpus, index, m), PIES_INDEX_STATS="1"))
    if r["rc"] != 0:
        raise RuntimeError(f"index failed ({r['rc']})")
    return {"seconds": r["wall_s"], "mb_per_s": round(src / 1e6 / r["wall_s"], 1),
            "cpu_s": round(r["user_s"] + r["sys_s"], 1), "peak_rss_mb": r["maxrss_mb"],
            "load_before": load, "stats": r["stats"]}


def one_round(path: str, corpus: Path, index: Path, m: dict[str, Any],
              mix: dict[str, list[dict[str, Any]]], n: int) -> dict[str, Any]:
    # `python -m`: the console script's entry point moved with the package layout (issue 22),
    # the module entry did not, so engines from either side of the move run the same way.
    env = engine_env(path, corpus, index, m)
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


def interleaved_round(engines: dict[str, tuple[str, str, Path]], corpus: Path,
                      m: dict[str, Any], mix: dict[str, list[dict[str, Any]]], n: int
                      ) -> dict[str, dict[str, Any]]:
    """Every engine's server up at once, each query sent to one, then the next, in turn (the
    first of each turn rotates): the engines meet the same load at the same moment. Runs one
    after the other met the machine at different speeds (this VM's drifts by 10 to 30% within
    minutes), and the engine listed first was 5 to 15% slower."""
    clients = {}
    out: dict[str, dict[str, Any]] = {lb: {} for lb in engines}
    try:
        for label, (_, path, index) in engines.items():
            c = LspClient([sys.executable, "-m", "pi_event_search", "serve"],
                          engine_env(path, corpus, index, m), cwd=str(corpus))
            clients[label] = c
            c.initialize(m["roots"], {"watch": False})
            c.wait_notification("piEvents/indexChanged", timeout=3600)
        labels = list(clients)
        for cls, variants in mix.items():
            for q in variants:
                for c in clients.values():
                    c.request("piEvents/search", {"limit": 20, **q})
            times: dict[str, list[float]] = {lb: [] for lb in labels}
            cpu0 = {lb: proc_cpu_ms(c.proc.pid) for lb, c in clients.items()}
            for i in range(n):
                q = {"limit": 20, **variants[i % len(variants)]}
                for k in range(len(labels)):
                    lb = labels[(i + k) % len(labels)]
                    t0 = time.perf_counter()
                    clients[lb].request("piEvents/search", q)
                    times[lb].append((time.perf_counter() - t0) * 1000)
            for lb, c in clients.items():
                out[lb][cls] = {"times": times[lb], "cpu": proc_cpu_ms(c.proc.pid) - cpu0[lb]}
    finally:
        for c in clients.values():
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
    ap.add_argument("--out", type=Path, default=BENCH / "out")
    ap.add_argument("--cold", action="store_true",
                    help="each round, each engine first cold-indexes its own index (the CLI)")
    ap.add_argument("--results", type=Path, default=None, help="also write the JSON here")
    ap.add_argument("--interleave", action="store_true",
                    help="searches: every engine's server at once, one query to each in turn "
                         "(after the round's cold indexes, if any)")
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
        lb: {c: {"times": [], "cpu": 0.0, "round_p95": []} for c in mix} for lb in engines}
    loads = []
    src = sum(f.stat().st_size for f in Path(m["sessions_dir"]).glob("*/*.jsonl"))
    cold: dict[str, list[dict[str, Any]]] = {lb: [] for lb in engines}

    def add(label: str, per: dict[str, dict[str, Any]]) -> None:
        for cls, r in per.items():
            acc[label][cls]["times"] += r["times"]
            acc[label][cls]["cpu"] += r["cpu"]
            acc[label][cls]["round_p95"].append(round(dist(r["times"])["p95"], 2))

    for rnd in range(args.rounds):
        order = list(engines.items())
        for label, (_, path, index) in order if rnd % 2 == 0 else reversed(order):
            if args.cold:
                cold[label].append(cold_index(path, args.corpus, index, m, src))
                print(f"round {rnd} {label}: cold index {cold[label][-1]['seconds']} s "
                      f"({cold[label][-1]['mb_per_s']} MB/s, CPU {cold[label][-1]['cpu_s']} s, "
                      f"load {cold[label][-1]['load_before']})", file=sys.stderr, flush=True)
            if args.interleave:
                continue
            loads.append(round(os.getloadavg()[0], 2))
            add(label, one_round(path, args.corpus, index, m, mix, args.queries))
        if args.interleave:
            loads.append(round(os.getloadavg()[0], 2))
            for label, per in interleaved_round(engines, args.corpus, m, mix,
                                                args.queries).items():
                add(label, per)
    total = args.rounds * args.queries
    res = {"load_average": loads, "rounds": args.rounds, "queries_per_class": total,
           "interleaved": args.interleave,
           "engines": {lb: engines[lb][0] for lb in engines},
           "classes": {lb: {c: {**{k: round(v, 2) for k, v in dist(x["times"]).items()},
                                "server_cpu_ms": round(x["cpu"] / total, 2),
                                "p95_per_round": x["round_p95"],
                                "p95_round_median": round(statistics.median(x["round_p95"]), 2)}
                            for c, x in per.items()} for lb, per in acc.items()}}
    if args.cold:
        res["source_bytes"] = src
        res["cold_index"] = {lb: {"runs": runs, **{
            f"{k}_{stat.__name__}": stat([x[k] for x in runs])
            for k in ("seconds", "mb_per_s", "cpu_s") for stat in (min, statistics.median, max)}}
            for lb, runs in cold.items()}
    text = orjson.dumps(res, option=orjson.OPT_INDENT_2)
    if args.results is not None:
        args.results.write_bytes(text)
    print(text.decode())


if __name__ == "__main__":
    main()
