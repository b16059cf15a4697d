"""The event_search tool's latency through Pi, and the size of what the model reads.

Runs the real Pi 0.73.1 (clients/pi/node_modules, from scripts/setup.d/50-pi.sh) headless with our
extension (clients/pi) and a bench-only probe (bench/features/pi_tool_probe.ts): a scripted model that calls
event_search once per turn, thinking PI_BENCH_THINK_MS before each call as a model would, and a
timer on every tool execution as Pi runs it (tool_execution_start -> tool_execution_end: the
extension, its JSON-RPC client, the server and the formatting of the answer).

The server sees only the bench corpus (its own PI_CODING_AGENT_DIR and index, set through the
eventSearch.server setting); Pi itself writes its session into a scratch directory, so the corpus is
never touched. The authorization root is the corpus's /bench/work (eventSearch.roots), as in
bench/speed/run.py. The query mix is bench/speed/run.py's, without prefix queries (the tool has none), plus
five rare words.

    .venv/bin/python -m bench.features.pi_tool --corpus /work/bench-corpus/corpus-1G \
        --index /work/pi-bench/index-1G.sqlite3 --rounds 20

Writes bench/results/pi_tool.json. Not a test: nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common.lspclient import LspClient
from bench.speed.run import QUERY_MIX, dist, log, machine

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
EXT = REPO / "clients" / "pi"
PI = EXT / "node_modules" / "@mariozechner" / "pi-coding-agent"
PROBE = HERE / "pi_tool_probe.ts"
SERVER = Path(sys.executable).parent / "pi-event-search"


def tool_args(q: dict[str, Any]) -> dict[str, Any]:
    """A query of the mix as event_search arguments."""
    args: dict[str, Any] = {"query": q["query"]}
    f = q.get("filters") or {}
    if f.get("tool"):
        args["tool"] = f["tool"][0]
    if f.get("kind"):
        args["kinds"] = f["kind"]
    return args


def queries(manifest: dict[str, Any], rounds: int) -> tuple[list[dict[str, Any]], list[str]]:
    mix = {k: v for k, v in QUERY_MIX.items() if k != "prefix"}
    mix["rare"] = [{"query": w} for w in list(manifest["rare"])[:5]]
    one = [(cls, tool_args(q)) for cls, qs in mix.items() for q in qs]
    # One warm-up call first (it starts the server and checks the index), then the rounds.
    script = [one[0], *(item for _ in range(rounds) for item in one)]
    return [a for _, a in script], [c for c, _ in script]


def run_pi(corpus: Path, index: Path, args: list[dict[str, Any]], think_ms: int,
           work: Path) -> list[dict[str, Any]]:
    manifest = json.loads((corpus / "manifest.json").read_text())
    cwd, agent = work / "cwd", work / "agent"
    (cwd / ".pi").mkdir(parents=True)
    agent.mkdir()
    server = ["env", f"PI_CODING_AGENT_DIR={manifest['agent_dir']}",
              f"PI_EVENT_SEARCH_INDEX={index}", str(SERVER), "serve"]
    (cwd / ".pi" / "settings.json").write_text(json.dumps({"eventSearch": {
        "server": server, "roots": manifest["roots"], "timeoutMs": 120_000,
        "startTimeoutMs": 1_800_000}}))
    (agent / "settings.json").write_text(json.dumps({"compaction": {"enabled": False}}))
    (work / "queries.json").write_text(json.dumps(args))
    out = work / "times.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PI_")}
    env.update(PI_CODING_AGENT_DIR=str(agent), PI_BENCH_QUERIES=str(work / "queries.json"),
               PI_BENCH_OUT=str(out), PI_BENCH_THINK_MS=str(think_ms))
    argv = [shutil.which("node") or "node", str(PI / "dist" / "cli.js"), "-p", "--offline",
            "-nc", "-e", str(EXT / "src" / "index.ts"), "-e", str(PROBE),
            "--provider", "bench", "--model", "bench-1", "bench"]
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=7200)
    if done.returncode != 0:
        raise SystemExit(f"pi failed ({done.returncode}): {done.stderr[-3000:]}")
    return [json.loads(line) for line in out.read_text().splitlines()]


def server_alone(manifest: dict[str, Any], index: Path, args: list[dict[str, Any]]
                 ) -> list[float]:
    """The same searches sent straight to the server (bench/common/lspclient.py), without Pi or the
    extension: what the tool adds is the difference."""
    env = {**os.environ, "PI_CODING_AGENT_DIR": manifest["agent_dir"],
           "PI_EVENT_SEARCH_INDEX": str(index)}
    c = LspClient([str(SERVER), "serve"], env)
    try:
        c.initialize(manifest["roots"], {"watch": False})
        c.request("piEvents/reindex", {}, timeout=1800)
        times = []
        for a in args:
            filters: dict[str, Any] = {}
            if "tool" in a:
                filters["tool"] = [a["tool"]]
            if "kinds" in a:
                filters["kind"] = a["kinds"]
            t0 = time.perf_counter()
            c.request("piEvents/search", {"query": a["query"], "limit": 10, "filters": filters})
            times.append((time.perf_counter() - t0) * 1000)
        return times
    finally:
        c.close()


def rounded(d: dict[str, Any]) -> dict[str, Any]:
    return {k: round(v, 2) if isinstance(v, float) else v for k, v in d.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=Path("/work/bench-corpus/corpus-1G"))
    ap.add_argument("--index", type=Path, default=Path("/work/pi-bench/index-1G.sqlite3"))
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--think-ms", type=int, default=300)
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "pi_tool.json")
    a = ap.parse_args()
    if not (PI / "package.json").exists():
        raise SystemExit("Pi is not installed in clients/pi/node_modules: run scripts/setup.d/50-pi.sh")
    manifest = json.loads((a.corpus / "manifest.json").read_text())
    args, classes = queries(manifest, a.rounds)
    load_before = os.getloadavg()
    log(f"{len(args)} event_search calls through Pi on {a.corpus} ({a.index})")
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="pi-tool-bench-") as tmp:
        rows = run_pi(a.corpus, a.index, args, a.think_ms, Path(tmp))
    wall = time.perf_counter() - t0
    log("the same searches straight to the server")
    alone = server_alone(manifest, a.index, args[1:])
    errors = [r for r in rows if r["isError"]]
    if errors:
        raise SystemExit(f"{len(errors)} tool errors, first: {errors[0].get('text')}")
    first, timed, timed_classes = rows[0], rows[1:], classes[1:]
    per_class: dict[str, list[float]] = {}
    for cls, r in zip(timed_classes, timed, strict=True):
        per_class.setdefault(cls, []).append(r["ms"])
    chars = [float(r["chars"]) for r in timed]
    result = {
        "machine": machine(), "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        "corpus": {"path": str(a.corpus), "bytes": manifest["stats"]["bytes"],
                   "sessions": manifest["stats"]["sessions"], "roots": manifest["roots"]},
        "pi": json.loads((PI / "package.json").read_text())["version"],
        "think_ms": a.think_ms, "calls": len(timed), "wall_s": round(wall, 1),
        "first_call_ms": round(first["ms"], 1),
        "event_search_ms": rounded(dist([r["ms"] for r in timed])),
        "server_alone_ms": rounded(dist(alone)),
        "by_class_ms": {c: rounded(dist(v)) for c, v in per_class.items()},
        "result_chars": {k: round(v) if isinstance(v, float) else v
                         for k, v in dist(chars).items()},
        "hits_per_call_p50": sorted(r["hits"] for r in timed)[len(timed) // 2],
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(result, indent=2) + "\n")
    log(f"event_search through Pi: p50 {result['event_search_ms']['p50']} ms, "
        f"p95 {result['event_search_ms']['p95']} ms; result p50 {result['result_chars']['p50']} "
        f"characters -> {a.out}")


if __name__ == "__main__":
    main()
