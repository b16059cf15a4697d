"""Markdown tables from a benchmark summary (for docs/benchmarks.md).

    .venv/bin/python -m bench.report.report bench/results/latest.json
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import orjson


def f1(x: float) -> str:
    return f"{x:.1f}"


def overview(s: dict[str, Any]) -> str:
    runs = sorted(s["runs"], key=lambda r: r["corpus"]["bytes"])
    head = "| | " + " | ".join(f"{r['corpus']['bytes'] / 1e6:.0f} MB" for r in runs) + " | target |"
    rows = [head, "|---|" + "---:|" * len(runs) + "---|"]

    def row(name: str, fn: Any, target: str) -> None:
        vals = []
        for r in runs:
            try:
                vals.append(fn(r))
            except (KeyError, TypeError, ZeroDivisionError):
                vals.append("–")
        rows.append(f"| {name} | " + " | ".join(vals) + f" | {target} |")

    row("files / entries", lambda r: f"{r['corpus']['files']} / {r['corpus']['entries']}", "")
    row("cold index: s", lambda r: f1(r["cold_index"]["seconds"]), "")
    row("cold index: MB/s", lambda r: f1(r["cold_index"]["mb_per_s"]), ">= 60")
    row("cold index: CPU s (user + sys)",
        lambda r: f1(r["cold_index"]["user_s"] + r["cold_index"]["sys_s"]), "")
    row("peer cold index: s / MB/s (same run)",
        lambda r: f"{f1(r['peer']['seconds'])} / {f1(r['peer']['mb_per_s'])}", "")
    row("peer cold index: CPU s / peak RSS MB / index size",
        lambda r: (f"{f1(r['peer']['user_s'] + r['peer']['sys_s'])} / "
                   f"{f1(r['peer']['peak_rss_mb'])} / {r['peer']['index_ratio']:.2f}"), "")
    row("cold index speed-up vs peer", lambda r: f"×{r['peer']['ours_over_peer']}", ">= 2×")
    row("cold index: entries/s", lambda r: str(r["cold_index"]["entries_per_s"]), "")
    row("cold index: peak RSS MB", lambda r: f1(r["cold_index"]["peak_rss_mb"]), "<= 250")
    row("index size / source", lambda r: f"{r['cold_index']['index_ratio']:.2f}", "<= 0.6")
    for label in ("small", "big"):
        row(f"append→searchable p50/p95 ms ({label} live file)",
            lambda r, lb=label: (f"{r['append_to_searchable_ms'][lb]['file_mb']} MB: "
                                 f"{r['append_to_searchable_ms'][lb]['p50']:.0f} / "
                                 f"{r['append_to_searchable_ms'][lb]['p95']:.0f}"), "p95 <= 50")
        row(f"one append, in-process refresh p50 ms ({label})",
            lambda r, lb=label: f1(r["append_cost"][lb]["refresh_ms"]["p50"]), "")
        row(f"one append, apply_file alone p50 ms ({label})",
            lambda r, lb=label: f1(r["append_cost"][lb]["apply_file_ms"]["p50"]), "")
    row("refresh with nothing changed p50 ms (full rescan)",
        lambda r: f1(r["append_cost"]["refresh_no_change_ms"]["p50"]), "<= 10")
    row("refresh with nothing changed p50 ms (watcher-hinted)",
        lambda r: f"{r['append_cost']['refresh_hinted_no_change_ms']['p50']:.2f}", "<= 10")
    for cls in runs[0]["queries"]:
        row(f"query {cls} p50 / p95 / p99 ms",
            lambda r, c=cls: " / ".join(f1(r["queries"][c][k]) for k in ("p50", "p95", "p99")),
            "p95 <= 8, p99 <= 15")
    for cls in runs[0]["queries"]:
        row(f"query {cls}: server CPU ms per query",
            lambda r, c=cls: f"{r['queries'][c]['server_cpu_ms']:.2f}", "")
    for cls in runs[0]["queries"]:
        row(f"ripgrep {cls} ms (speed-up at our p50)",
            lambda r, c=cls: (f"{r['ripgrep']['classes'][c]['rg_ms']:.0f} "
                              f"(×{r['ripgrep']['classes'][c]['speedup_p50']})"), ">= 5×")
    row("median speed-up vs ripgrep", lambda r: f"×{r['ripgrep']['median_speedup']}", ">= 50×")
    row("read p50 / p95 ms", lambda r: f"{f1(r['read_ms']['p50'])} / {f1(r['read_ms']['p95'])}",
        "p95 <= 5")
    row("trace p50 / p95 ms",
        lambda r: f"{f1(r['trace_ms']['p50'])} / {f1(r['trace_ms']['p95'])}", "")
    row("server start → first answer p50 / max ms",
        lambda r: f"{r['server_start_ms']['p50']:.0f} / {r['server_start_ms']['max']:.0f}",
        "<= 500")
    row("server peak RSS MB", lambda r: f1(r["server_peak_rss_mb"]), "")
    row("recall (planted needles)",
        lambda r: f"{r['recall']['found']}/{r['recall']['needles']}", "100%")
    row("rare-word occurrences found", lambda r: r["recall"]["rare_found"], "")
    row("relevance set MRR@10 / recall@10",
        lambda r: (f"{r['relevance']['mrr']:.3f} / {r['relevance']['recall']:.3f} "
                   f"({r['relevance']['queries']} queries)"), "recall >= 0.95")
    row("hits from torn last lines",
        lambda r: f"{r['recall']['torn_hits']} ({r['recall']['torn_tokens']} tokens)", "0")
    row("hits outside the roots",
        lambda r: f"{r['recall']['outside_roots_hits']} ({r['recall']['outside_roots_tokens']} "
                  "tokens)", "0")
    row("needles in an omitted middle found", lambda r: r["recall"]["omitted_middle_found"],
        "(by design)")
    return "\n".join(rows)


def targets(r: dict[str, Any]) -> str:
    lines = ["| metric | value | target | met |", "|---|---:|---:|:---:|"]
    for t in r["targets"]:
        v = t["value"]
        val = (f"{v:.2f}" if t["unit"] == "x" and v < 10 else f"{v:.1f}") \
            if isinstance(v, float) and t["unit"] else str(v)
        lines.append(f"| {t['metric']} | {val} {t['unit']} | {t['op']} {t['target']} {t['unit']} "
                     f"| {'yes' if t['met'] else '**no**'} |")
    return "\n".join(lines)


def main() -> None:
    s = orjson.loads(Path(sys.argv[1]).read_bytes())
    m = s["machine"]
    print(f"Machine: {m['cores']} cores ({m['cpu']}), {m['memory']} RAM, Python {m['python']}, "
          f"SQLite {m['sqlite']}; engine {m.get('engine')}, run {m['date']}.\n")
    print(overview(s))
    big = max(s["runs"], key=lambda r: r["corpus"]["bytes"])
    print(f"\nTargets at {big['corpus']['bytes'] / 1e6:.0f} MB:\n")
    print(targets(big))


if __name__ == "__main__":
    main()
