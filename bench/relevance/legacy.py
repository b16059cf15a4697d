"""Relevance of search, two sets.

The three-style set (issue 37; bench/relevance/sessions.py, bench/relevance/queries.py):

    .venv/bin/python -m bench.relevance [--scale alone|250M] [--repo PATH] [--engines ...]

writes the set's sessions (half with Pi's own SessionManager), optionally inside a generated
history of other templates (bench/common/corpus.py, seed 37), and asks every engine every query:
recall@1, recall@10, MRR@10 and the zero-hit rate per style. Engines: `ours` (this project's
server over the LSP, from --repo's code), `rg` (ripgrep), `mnemo` (mnemo-search 0.7.0 in its own
venv), `orbm25` (every word OR-ed in SQLite FTS5, porter, camelCase split, bm25). See
bench/relevance/styles.py for the engines and docs/benchmarks.md for the method.

The older inflection set (bench/relevance/inflection.py), which bench/speed/run.py also measures:

    .venv/bin/python -m bench.relevance --legacy CORPUS_DIR INDEX

`plant` adds one small session per relevance item to a generated corpus (visible projects,
timestamps spread over the corpus' time span, a separate seeded RNG: the corpus' own files are not
touched) and records the expected (sessionId, entryId) of every query in the manifest. `measure`
asks the running server each query (limit 10) and scores the rank of the expected event.
The CLI plants (if needed), indexes (the CLI `index`, incremental) and measures through a server.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from bench.common.corpus import DEV_WORDS, VISIBLE_ROOT, encoded_dir, iso

from .inflection import ITEMS, queries

HERE = Path(__file__).resolve().parent

VERSION = 1
K = 10


def _filler(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(DEV_WORDS[18:120]) for _ in range(n)).capitalize() + "."


class _Session:
    def __init__(self, rng: random.Random, cwd: str, ms: int) -> None:
        self.rng, self.cwd, self.clock = rng, cwd, ms
        h = f"{ms:012x}{rng.getrandbits(80):020x}"
        self.sid = f"{h[:8]}-{h[8:12]}-7{h[13:16]}-8{h[17:20]}-{h[20:32]}"
        self.lines = [orjson.dumps({"type": "session", "version": 3, "id": self.sid,
                                    "timestamp": iso(ms), "cwd": cwd})]
        self.leaf: str | None = None
        self.append("model_change", {"provider": "anthropic", "modelId": "claude-sonnet-4-5"})

    def append(self, etype: str, payload: dict[str, Any]) -> str:
        self.clock += self.rng.randint(500, 30_000)
        eid = f"{self.rng.getrandbits(32):08x}"
        entry = {"type": etype, "id": eid, "parentId": self.leaf, "timestamp": iso(self.clock),
                 **payload}
        if etype == "message":
            entry["message"]["timestamp"] = self.clock
        self.lines.append(orjson.dumps(entry))
        self.leaf = eid
        return eid

    def user(self, text: str) -> str:
        return self.append("message", {"message": {"role": "user",
                                                   "content": [{"type": "text", "text": text}]}})

    def assistant(self, content: list[dict[str, Any]], stop: str = "stop") -> str:
        return self.append("message", {"message": {
            "role": "assistant", "content": content, "api": "anthropic-messages",
            "provider": "anthropic", "model": "claude-sonnet-4-5", "stopReason": stop,
            "usage": {"input": 10, "output": 10, "cacheRead": 0, "cacheWrite": 0,
                      "totalTokens": 20, "cost": {"input": 0, "output": 0, "cacheRead": 0,
                                                  "cacheWrite": 0, "total": 0}}}})


def _build(shape: tuple[Any, ...], s: _Session) -> str:
    """Write the item's event between filler turns; returns its entry id."""
    rng = s.rng
    kind = shape[0]
    if kind != "user":
        s.user(_filler(rng, rng.randint(8, 30)))
    if kind == "user":
        target = s.user(shape[1])
    elif kind == "assistant":
        target = s.assistant([{"type": "text", "text": shape[1]}])
    elif kind == "result":
        _, tool, args, output = shape
        cid = f"toolu_{rng.getrandbits(64):016x}"
        s.assistant([{"type": "toolCall", "id": cid, "name": tool, "arguments": args}],
                    "toolUse")
        target = s.append("message", {"message": {
            "role": "toolResult", "toolCallId": cid, "toolName": tool,
            "content": [{"type": "text", "text": output}], "isError": False}})
    elif kind == "bash":
        target = s.append("message", {"message": {
            "role": "bashExecution", "command": shape[1], "output": shape[2], "exitCode": 1,
            "cancelled": False, "truncated": False}})
    elif kind == "name":
        target = s.append("session_info", {"name": shape[1]})
    else:
        raise ValueError(kind)
    s.assistant([{"type": "text", "text": _filler(rng, rng.randint(10, 40))}])
    return target


def plant(corpus_dir: Path, manifest: dict[str, Any], seed: int = 7) -> dict[str, Any]:
    """Add the relevance sessions once; the manifest then lists the expected event per query.
    Queries may be edited without replanting (targets are kept per item)."""
    if manifest.get("relevance_version") != VERSION:
        for path in manifest.get("relevance_files", []):
            Path(path).unlink(missing_ok=True)
        manifest["relevance_items"], manifest["relevance_files"] = _plant(manifest, seed)
        manifest["relevance_version"] = VERSION
    elif "relevance_items" not in manifest:  # planted before targets were kept per item
        by_item = {q["item"]: [q["sessionId"], q["entryId"]] for q in manifest["relevance"]}
        manifest["relevance_items"] = [by_item[i] for i in range(len(by_item))]
    targets = manifest["relevance_items"]
    manifest["relevance"] = [{**q, "sessionId": targets[q["item"]][0],
                              "entryId": targets[q["item"]][1]} for q in queries()]
    (corpus_dir / "manifest.json").write_bytes(orjson.dumps(manifest))
    return manifest


def _plant(manifest: dict[str, Any], seed: int) -> tuple[list[list[str]], list[str]]:
    rng = random.Random(seed * 1_000_003 + VERSION)
    sessions = Path(manifest["sessions_dir"])
    prefix = encoded_dir(VISIBLE_ROOT + "/")[:-2]
    projects = sorted(d.name for d in sessions.iterdir()
                      if d.name.startswith(prefix) and "live-" not in d.name)
    start = int(datetime(2025, 10, 1, tzinfo=UTC).timestamp() * 1000)
    span = 250 * 86_400_000
    targets: list[list[str]] = []
    files: list[str] = []
    for shape, _ in ITEMS:
        folder = rng.choice(projects)
        cwd = VISIBLE_ROOT + "/" + folder[len(prefix):-2]
        ms = start + rng.randrange(span)
        s = _Session(rng, cwd, ms)
        targets.append([s.sid, _build(shape, s)])
        stamp = iso(ms).replace(":", "-").replace(".", "-")
        path = sessions / folder / f"{stamp}_{s.sid}.jsonl"
        path.write_bytes(b"\n".join(s.lines) + b"\n")
        files.append(str(path))
    return targets, files


def measure(search: Any, manifest: dict[str, Any]) -> dict[str, Any]:
    """`search(query) -> hits` (limit K). MRR@K and recall@K, overall and per category."""
    per: dict[str, list[float]] = {}
    misses: list[dict[str, Any]] = []
    ranks: list[float] = []
    for q in manifest["relevance"]:
        hits = search(q["query"])[:K]
        rank = next((i + 1 for i, h in enumerate(hits)
                     if h["sessionId"] == q["sessionId"] and h["entryId"] == q["entryId"]), None)
        rr = 1.0 / rank if rank else 0.0
        ranks.append(rr)
        per.setdefault(q["category"], []).append(rr)
        if rank is None:
            misses.append({"query": q["query"], "category": q["category"], "hits": len(hits)})
    n = len(ranks)
    return {
        "queries": n, "k": K, "mrr": round(sum(ranks) / n, 4),
        "recall": round(sum(1 for r in ranks if r > 0) / n, 4),
        "by_category": {c: {"queries": len(v), "mrr": round(sum(v) / len(v), 4),
                            "recall": round(sum(1 for r in v if r > 0) / len(v), 4)}
                        for c, v in sorted(per.items())},
        "missed": misses,
    }


def legacy(corpus: Path, index: Path, no_index: bool) -> None:
    from bench.common.lspclient import LspClient

    manifest = plant(corpus, orjson.loads((corpus / "manifest.json").read_bytes()))
    cli = str(Path(sys.executable).parent / "pi-event-search")
    env = dict(os.environ, PI_CODING_AGENT_DIR=manifest["agent_dir"],
               PI_EVENT_SEARCH_INDEX=str(index.resolve()),
               XDG_CACHE_HOME=str(corpus / "cache"))
    if not no_index:
        subprocess.run([cli, "index"], env=env, check=True, stdout=subprocess.DEVNULL)
    c = LspClient([cli, "serve"], env, cwd=str(corpus))
    try:
        c.initialize(manifest["roots"], {"watch": False})
        c.wait_notification("piEvents/indexChanged", timeout=3600)
        res = measure(lambda q: c.request("piEvents/search", {"query": q, "limit": K})["hits"],
                      manifest)
    finally:
        c.close()
    print(orjson.dumps(res, option=orjson.OPT_INDENT_2).decode())


def main() -> None:
    if "--legacy" in sys.argv:
        ap = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawTextHelpFormatter)
        ap.add_argument("--legacy", action="store_true")
        ap.add_argument("corpus", type=Path)
        ap.add_argument("index", type=Path)
        ap.add_argument("--no-index", action="store_true", help="measure the index as it is")
        args = ap.parse_args()
        legacy(args.corpus, args.index, args.no_index)
        return
    if "--set" in sys.argv and sys.argv[sys.argv.index("--set") + 1:][:1] == ["real"]:
        from .real import main as real_main

        real_main()
        return
    from .styles import main as styles_main

    styles_main()


if __name__ == "__main__":
    main()
