"""Masking time on adversarial texts, and recall and look-alikes on the planted corpus, for one
version of core/secrets.py or two (a benchmark, not a test: tests/test_secrets.py checks the
linearity by what the rules read, never by time).

    python -m bench.features.masking OUT.json [--secrets NAME=PATH ...] [--sizes 96000,1000000]
                            [--repeats 3] [--cap 60] [--seeds 200]

Each `--secrets` names a secrets.py to load (default: this checkout's, as `after`; e.g.
`--secrets before=/tmp/main-secrets.py` for the parent's, from `git show main:...`). Each
adversarial text is one unit repeated to the size, plus `(`; the time is the best of `--repeats`
runs of `scrub` (a text whose first run passes `--cap` seconds is not run again, nor at a larger
size: its figure is `null` with the time of the size that stopped it). Writes OUT.json and prints a
table.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO / "server"), str(REPO / "tests")]

UNITS = ["token=", "password=", "token=( ", "token: ", "password: x ", "_KEY=a ", 'token="', "api_key='",
         "é token=", "Bearer ", "Basic abcd ", " sk-", "ghp_ ", "eyJaaaaaaaa.", "://", "://a:bcd@",
         "AccountKey=", "private key ", "x\x1b]", "\x9d", "\x1b[", "a\x1b"]


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"secrets_{name}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _timed(secrets: ModuleType, text: str, repeats: int, cap: float) -> float | None:
    best = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        secrets.scrub(text)
        took = time.perf_counter() - t0
        best = took if best is None else min(best, took)
        if took > cap:
            break
    return best


def _corpus(secrets: ModuleType, seeds: int) -> dict[str, object]:
    from secretcorpus import lookalikes, planted
    from test_secrets import leaked

    missed: Counter[str] = Counter()
    total = looks = masked = 0
    masked_texts: Counter[str] = Counter()
    for seed in range(seeds):
        rng = random.Random(seed)
        context = ""
        for p in planted(rng):
            context = p.text or context
            total += 1
            missed[p.kind] += leaked(p.value, secrets.scrub(context))
        for n, text in enumerate(lookalikes(rng)):
            looks += 1
            if secrets.scrub(text) != text:
                masked += 1
                masked_texts[str(n)] += 1
    return {"planted": total, "recall": round(1 - sum(missed.values()) / total, 4),
            "missed": {k: v for k, v in missed.items() if v}, "lookalikes": looks,
            "lookalikes_masked": masked, "lookalike_sets": seeds,
            "lookalikes_masked_by_index": dict(masked_texts)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--secrets", action="append", default=[])
    ap.add_argument("--sizes", default="96000,1000000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--cap", type=float, default=60.0)
    ap.add_argument("--seeds", type=int, default=200)
    args = ap.parse_args()
    versions = dict(s.split("=", 1) for s in args.secrets) or {
        "after": str(REPO / "server/pi_event_search/core/secrets.py")}
    sizes = [int(s) for s in args.sizes.split(",")]
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    result: dict[str, object] = {"commit": commit, "sizes": sizes, "repeats": args.repeats,
                                 "cap_s": args.cap, "load": os.getloadavg(), "versions": {}}
    for name, path in versions.items():
        secrets = _load(name, Path(path))
        times: dict[str, dict[str, float | None]] = {}
        for unit in UNITS:
            row: dict[str, float | None] = {}
            stopped = False
            for size in sizes:
                if stopped:
                    row[str(size)] = None
                    continue
                took = _timed(secrets, unit * (size // len(unit)) + "(", args.repeats, args.cap)
                row[str(size)] = None if took is None else round(took, 4)
                stopped = took is not None and took > args.cap
            times[unit] = row
            print(f"{name:8} {unit!r:16} " + "  ".join(f"{s}: {row[str(s)]}" for s in sizes), flush=True)
        corpus = _corpus(secrets, args.seeds)
        print(f"{name:8} corpus {corpus}", flush=True)
        result["versions"][name] = {"path": path, "times_s": times, "corpus": corpus}  # type: ignore[index]
    result["load_after"] = os.getloadavg()
    args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
