"""Plot of a benchmark summary: cold index time and query p95 against corpus size, ours and rg.

    .venv/bin/python -m bench.report.plot bench/results/latest.json docs/images/benchmarks.png

matplotlib is installed into the running environment on first use (not a project dependency).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson


def _matplotlib() -> Any:
    try:
        import matplotlib
    except ImportError:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "matplotlib"], check=True)
        import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot(summary: dict[str, Any], out: Path) -> None:
    plt = _matplotlib()
    runs = sorted(summary["runs"], key=lambda r: r["corpus"]["bytes"])
    mb = [r["corpus"]["bytes"] / 1e6 for r in runs]
    cores = summary["machine"]["cores"]
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4.8), dpi=90)
    a.plot(mb, [r["cold_index"]["seconds"] for r in runs], "o-", label="pi-event-search cold index")
    rg_scan = [max(v["rg_ms"] for v in r["ripgrep"]["classes"].values()) / 1000 for r in runs]
    a.plot(mb, rg_scan, "s--", label="ripgrep, one query (slowest class)")
    a.plot(mb, [m / 80 for m in mb], ":", color="gray", label="target: 80 MB/s")
    a.set_xlabel("corpus size (MB of JSONL)")
    a.set_ylabel("seconds")
    a.set_title("Cold index time")
    a.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16))
    a.grid(alpha=0.3)
    classes = list(runs[0]["queries"])
    for cls in classes:
        b.plot(mb, [r["queries"][cls]["p95"] for r in runs], "o-", label=f"ours p95: {cls}")
    rg_med = [sorted(v["rg_ms"] for v in r["ripgrep"]["classes"].values()) for r in runs]
    b.plot(mb, [x[len(x) // 2] for x in rg_med], "s--", color="black", label="ripgrep (median class)")
    b.axhline(10, color="gray", linestyle=":", label="target p95: 10 ms")
    b.set_yscale("log")
    b.set_xlabel("corpus size (MB of JSONL)")
    b.set_ylabel("ms per query (through the server)")
    b.set_title("Query latency p95")
    b.legend(fontsize=7, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.16))
    b.grid(alpha=0.3, which="both")
    fig.suptitle(f"pi-event-search benchmarks ({cores} cores)", fontsize=10)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    print(f"wrote {out} ({out.stat().st_size // 1024} KB)")


if __name__ == "__main__":
    plot(orjson.loads(Path(sys.argv[1]).read_bytes()), Path(sys.argv[2]))
