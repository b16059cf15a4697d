"""Past benchmark runs (bench/results/history.json) printed back as markdown.

    .venv/bin/python -m bench.report.history              # every record, oldest first
    .venv/bin/python -m bench.report.history --list       # one line per record: id, date, issue, area, title
    .venv/bin/python -m bench.report.history --area cold-index --issue 16
    .venv/bin/python -m bench.report.history --id round3-cold-index --id round5-quiet-1G
    .venv/bin/python -m bench.report.history --add run.md --id round6-cold-index --date 2026-12-05 \
        --area cold-index --issue 41 --corpus "1.1 GB bench corpus"   # a finished section becomes a record

docs/benchmarks.md holds the method and the current figures; every earlier run, with its tables and
its notes, is a record of history.json: id, date, issue, commits, area, corpus, title, and blocks
(text, code, or a table as {columns, align, rows}) in the order the section had them.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

import orjson

HISTORY = Path(__file__).resolve().parents[1] / "results" / "history.json"


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


def dump(doc: dict[str, Any]) -> str:
    """The file's own layout: one line per table row and per list of commits, readable in a diff."""
    text = json.dumps(doc, indent=1, ensure_ascii=False)
    strings = r'"(?:[^"\\]|\\.)*"'
    return re.sub(rf"\[\s*({strings}(?:,\s*{strings})*)\s*\]",
                  lambda m: "[" + re.sub(r'",\s*\n\s*"', '", "', m.group(1)) + "]", text) + "\n"


def parse_blocks(lines: list[str]) -> list[dict[str, Any]]:
    """Markdown as blocks: fenced code, tables as {columns, align, rows}, and the text between them."""
    out: list[dict[str, Any]] = []
    i = 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
        elif lines[i].startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            out.append({"code": "\n".join(lines[i + 1:j]), "lang": lines[i][3:]})
            i = j + 1
        elif lines[i].startswith("|"):
            j = i
            while j < len(lines) and lines[j].startswith("|"):
                j += 1
            rows = [[c.strip() for c in re.split(r"(?<!\\)\|", r.strip()[1:-1])] for r in lines[i:j]]
            out.append({"table": {"columns": rows[0], "align": rows[1], "rows": rows[2:]}})
            i = j
        else:
            j = i
            while j < len(lines) and lines[j].strip() and not lines[j].startswith(("|", "```")):
                j += 1
            out.append({"text": "\n".join(lines[i:j])})
            i = j
    return out


def from_markdown(text: str, args: argparse.Namespace) -> list[dict[str, Any]]:
    """One record per heading of the file (`id`, `id-2`, ...), the first heading's title as the stem."""
    parts: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        m = re.match(r"^#{1,6} (.*)$", line)
        if m or not parts:
            parts.append((m.group(1) if m else "", []))
            if m:
                continue
        parts[-1][1].append(line)
    parts = [(t, ls) for t, ls in parts if any(x.strip() for x in ls)]
    stem = parts[0][0] if parts else ""
    return [{"id": args.new_id if k == 0 else f"{args.new_id}-{k + 1}", "date": args.date,
             "issue": args.issue[0] if args.issue else None,
             "commits": list(dict.fromkeys(re.findall(r"`([0-9a-f]{7,40})`", "\n".join(ls)))),
             "area": args.area[0], "corpus": args.corpus,
             "title": t if k == 0 or t == stem else f"{stem} / {t}", "blocks": parse_blocks(ls)}
            for k, (t, ls) in enumerate(parts)]


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
    p.add_argument("--add", type=Path, metavar="FILE.md", help="append FILE's sections as records")
    p.add_argument("--date", help="with --add: YYYY-MM-DD of the run")
    p.add_argument("--corpus", help="with --add: the corpus and its size")
    args = p.parse_args(argv)
    if args.add:
        if not (args.id and len(args.id) == 1 and args.date and args.area):
            p.error("--add needs one --id, --date and --area")
        args.new_id = args.id[0]
        doc = orjson.loads(args.file.read_bytes())
        if any(r["id"].startswith(args.new_id) for r in doc["records"]):
            p.error(f"a record id starting with {args.new_id!r} exists")
        new = from_markdown(args.add.read_text(), args)
        doc["records"].extend(new)
        args.file.write_text(dump(doc))
        print(f"added {len(new)} records to {args.file}", file=sys.stderr)
        return 0
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
