"""What a cold index cannot spend less on: each piece it must do, alone, on one core.

    python -m bench.speed.floors CORPUS INDEX [--peer mnemo-search==0.7.0 | --peer-s S] [--out FILE.json]

INDEX is a cold index of CORPUS (`pi-event-search index`, or bench/speed/run.py's --keep-corpus). Every
piece runs by itself over the same bytes, with no Python of ours around it beyond one call per
line or text, and is timed in CPU seconds of this one thread:

- read + parse: every line of every .jsonl file through orjson;
- mask: core.secrets.scan_many over each batch of texts (a first index masks a batch at a time);
- compress: the index's own Packer over each text, given the UTF-8 the masking made;
- parts: fulltext.identifier_parts of each text;
- full text: the rows into an empty side table with the bulk load's settings, then FTS5's optimize:
  once as (text, meta) and once with the parts column (the table the index has).

The FTS5 table is one writer: its insert and merge cannot be shared by two cores. --peer times
mnemo-search's cold index of CORPUS before and after the floors (its own venv, as bench/speed/run.py;
the better run counts), or --peer-s gives its time from elsewhere. Twice its speed on the
machine's cores is the budget this prints, with what the floors leave of it for the rest
(projection, the events and fragments tables, the hand-over to the full-text process, the
first-answer slice).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "server"))
from bench.speed import run  # noqa: E402  (its measuring launcher and the peer's venv)
from pi_event_search.core import secrets  # noqa: E402
from pi_event_search.index import fulltext, store, textcodec  # noqa: E402
from pi_event_search.index.bulk import ftsload, mode  # noqa: E402


def _parse(corpus: str) -> tuple[float, int, int]:
    """CPU s to read and parse every line; bytes; lines parsed."""
    size = lines = 0
    start = time.process_time()
    for folder, _, names in os.walk(corpus):
        for name in names:
            if not name.endswith(".jsonl"):
                continue
            with open(os.path.join(folder, name), "rb") as fh:
                data = fh.read()
            size += len(data)
            for line in data.split(b"\n"):
                if line:
                    try:
                        orjson.loads(line)
                        lines += 1
                    except orjson.JSONDecodeError:
                        pass
    return time.process_time() - start, size, lines


def _side(path: str, parts: bool) -> sqlite3.Connection:
    side = sqlite3.connect(path, isolation_level=None)
    side.execute("PRAGMA journal_mode = TRUNCATE")  # as the bulk load's full-text process
    side.execute("PRAGMA synchronous = OFF")
    side.execute("PRAGMA cache_size = -16000")
    table = store.FTS_TABLE.format(name="fts")
    if not parts:
        table = table.replace("text, meta, parts,", "text, meta,")
    side.execute(table)
    side.execute("INSERT INTO fts(fts, rank) VALUES ('automerge', 0)")
    side.execute("INSERT INTO fts(fts, rank) VALUES ('hashsize', ?)", (mode.BULK_FTS_HASH,))
    side.execute("BEGIN")
    return side


def measure(corpus: str, index: str) -> dict[str, Any]:
    took: dict[str, float] = dict.fromkeys(
        ("mask", "compress", "parts", "fts_text_meta", "fts_with_parts"), 0.0)
    took["read_parse"], size, lines = _parse(corpus)
    conn = sqlite3.connect(f"file:{index}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row  # as the index's own connections
    textcodec.load(conn)
    packer = textcodec.packer(conn)
    texts = chars = 0
    with tempfile.TemporaryDirectory() as tmp:
        plain, full = _side(f"{tmp}/plain.sqlite3", False), _side(f"{tmp}/full.sqlite3", True)
        for flat in ftsload._committed(conn):  # as the index's own catch-up reads them
            texts += len(flat)
            chars += sum(len(text) for _, text, _ in flat)
            t = time.process_time()
            _, utf8 = secrets.scan_many([text for _, text, _ in flat])  # a batch, as a first index
            took["mask"] += time.process_time() - t
            t = time.process_time()
            for (_, text, _), data in zip(flat, utf8 or [None] * len(flat), strict=True):
                packer.pack(text, data)
            took["compress"] += time.process_time() - t
            t = time.process_time()
            with_parts = [(fid, text, meta, fulltext.identifier_parts(text))
                          for fid, text, meta in flat]
            took["parts"] += time.process_time() - t
            t = time.process_time()
            plain.executemany("INSERT INTO fts (rowid, text, meta) VALUES (?,?,?)", flat)
            took["fts_text_meta"] += time.process_time() - t
            t = time.process_time()
            full.executemany(fulltext.INSERT_SQL, with_parts)
            took["fts_with_parts"] += time.process_time() - t
        for name, side in (("fts_text_meta", plain), ("fts_with_parts", full)):
            t = time.process_time()
            side.execute("COMMIT")
            side.execute("INSERT INTO fts(fts) VALUES ('optimize')")
            took[name + "_merge"] = time.process_time() - t
            took[name] += took[name + "_merge"]
            side.close()
    return {"corpus_mb": round(size / 1e6, 1), "lines": lines, "texts": texts,
            "text_mchars": round(chars / 1e6, 1),
            "cpu_s": {k: round(v, 2) for k, v in took.items()}}


def _agent(corpus: str) -> Path:
    """The corpus' Pi agent directory (bench/common/corpus.py's manifest names it)."""
    manifest = Path(corpus, "manifest.json")
    if manifest.exists():
        return Path(json.loads(manifest.read_text())["agent_dir"])
    return Path(corpus, "agent")


def peer_seconds(corpus: str, spec: str, out: Path) -> float:
    """The peer's cold index wall time of CORPUS (bench/speed/run.py's way)."""
    exe = run.peer_exe(out, spec)
    with tempfile.TemporaryDirectory() as tmp:
        r = run.peer_index(exe, _agent(corpus), Path(tmp, "peer.db"), Path(tmp, "home"))
    return float(r["wall_s"])


def ours_seconds(corpus: str) -> dict[str, Any]:
    """Our own cold index of CORPUS (this checkout's CLI): wall s, CPU s, the indexer's account."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PI_CODING_AGENT_DIR=str(_agent(corpus)), PIES_INDEX_STATS="1",
                   PI_EVENT_SEARCH_INDEX=f"{tmp}/index.sqlite3", XDG_CACHE_HOME=tmp)
        r = run.measured([run.CLI, "index"], env)
    if r["rc"] != 0:
        raise RuntimeError(f"pi-event-search index failed ({r['rc']})")
    return {"wall_s": r["wall_s"], "cpu_s": round(r["user_s"] + r["sys_s"], 2),
            "stats": r["stats"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("corpus")
    ap.add_argument("index")
    ap.add_argument("--peer", help="time this peer's cold index of CORPUS too (mnemo-search==0.7.0)")
    ap.add_argument("--peer-s", type=float, help="mnemo-search's cold index s of CORPUS, same run")
    ap.add_argument("--cores", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", help="write the figures here as JSON too")
    args = ap.parse_args()
    peer_runs: list[float] = []
    ours: list[dict[str, Any]] = []

    def both() -> None:  # the peer's and our cold index, taking turns with the floors
        if args.peer:
            peer_runs.append(peer_seconds(args.corpus, args.peer, run.BENCH / "out"))
            ours.append(ours_seconds(args.corpus))

    both()
    out = measure(args.corpus, args.index)
    both()
    if args.peer:
        args.peer_s = min(peer_runs)
        out["peer"] = {"name": args.peer, "runs_s": peer_runs}
        out["ours"] = min(ours, key=lambda r: float(r["wall_s"]))
        out["ours"]["runs_s"] = [r["wall_s"] for r in ours]
    cpu = out["cpu_s"]
    floor = sum(cpu[k] for k in ("read_parse", "mask", "compress", "parts", "fts_with_parts"))
    out["floor_core_s"] = round(floor, 2)
    out["load1"] = os.getloadavg()[0]
    out["date"] = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    out["commit"] = subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"],
                                   capture_output=True, text=True).stdout.strip()
    print(f"{out['corpus_mb']} MB, {out['texts']:,} texts of {out['text_mchars']} M characters "
          f"(load {out['load1']:.2f})")
    for name, seconds in cpu.items():
        print(f"  {name:<16} {seconds:6.2f} s")
    print(f"  sum (parts included, FTS5 with parts): {floor:.2f} core-s")
    if "ours" in out:
        print(f"  ours, cold index: {out['ours']['runs_s']} s wall (best: "
              f"{out['ours']['cpu_s']} s of CPU); {args.peer}: {peer_runs} s")
    if args.peer_s:
        out["peer_s"] = args.peer_s
        budget = args.peer_s / 2
        out["budget"] = {"wall_s": round(budget, 2), "core_s": round(budget * args.cores, 2),
                         "fts_share_of_one_core": round(cpu["fts_with_parts"] / budget, 2),
                         "left_core_s": round(budget * args.cores - floor, 2)}
        print(f"  2x mnemo-search ({args.peer_s} s): {budget:.2f} s wall, "
              f"{budget * args.cores:.2f} core-s on {args.cores} cores; FTS5 alone fills "
              f"{cpu['fts_with_parts'] / budget:.0%} of one core; left for the rest: "
              f"{budget * args.cores - floor:.2f} core-s")
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
