"""Past benchmark runs (bench/results/history.json) printed back as markdown.

    .venv/bin/python bench/history.py                  # every record, oldest first
    .venv/bin/python bench/history.py --list           # one line per record: id, date, issue, area, title
    .venv/bin/python bench/history.py --area cold-index --issue 16
    .venv/bin/python bench/history.py --id round3-cold-index --id round5-quiet-1G

docs/benchmarks.md holds the method and the current figures; every earlier run, with its tables and
its notes, is a record of history.json: id, date, issue, commits, area, corpus, title, and blocks
(text, code, or a table as {columns, align, rows}) in the order the section had them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import orjson

HISTORY = Path(__file__).resolve().parent / "results" / "history.json"


def table(t: dict[str, Any]) -> str:
    def line(cells: list[str]) -> str:
        return "|" + "|".join(f" {c} " if c else " " for c in cells) + "|"

    align = t.get("align") or ["---"] * len(t["columns"])
    return "\n".join([line(t["columns"]), "|" + "|".join(align) + "|", *map(line, t["rows"])])


def block(b: dict[str, Any]) -> str:
    if "table" in b:
        return table(b["table"])
    if "code" in b:
        return f"```{b.get('lang', '')}\n{b['code']}\n```"
    return str(b["text"])


def record(r: dict[str, Any]) -> str:
    facts = [r["date"], f"issue {r['issue']}" if r.get("issue") else None, r["area"],
             r.get("corpus"), ", ".join(f"`{c}`" for c in r.get("commits") or []) or None]
    head = f"## {r['title']}\n\n_{' · '.join(f for f in facts if f)} · id `{r['id']}`_"
    return "\n\n".join([head, *(block(b) for b in r["blocks"])])


def select(records: list[dict[str, Any]], args: argparse.Namespace) -> list[dict[str, Any]]:
    out = [r for r in records
           if (not args.id or r["id"] in args.id)
           and (not args.area or r["area"] in args.area)
           and (not args.issue or r.get("issue") in args.issue)]
    return sorted(out, key=lambda r: r["date"])  # stable: a section's parts keep their order


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--file", type=Path, default=HISTORY)
    p.add_argument("--list", action="store_true", help="one line per record")
    p.add_argument("--id", action="append", help="a record's id (repeatable)")
    p.add_argument("--area", action="append", help="method, cold-index, query-latency, relevance, ...")
    p.add_argument("--issue", action="append", type=int)
    args = p.parse_args(argv)
    records = select(orjson.loads(args.file.read_bytes())["records"], args)
    if not records:
        print("no record matches", file=sys.stderr)
        return 1
    if args.list:
        for r in records:
            print(f"{r['id']:32} {r['date']}  issue {r.get('issue') or '-':>3}  {r['area']:14} {r['title']}")
    else:
        print("\n\n".join(record(r) for r in records))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
