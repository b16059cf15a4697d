"""The relevance set of real Pi sessions (issue 46, item 8): bench/relevance/realset.json.

    .venv/bin/python -m bench.relevance --set real --split dev --scale alone \\
        --engines ours,orbm25 --repo /work/wt-rank [--misses]

The sessions are public repositories' own files, never committed here: each is read from the fetch
tool's mirror (`$PI_BENCH_MIRROR`, default /work/.mirror/<owner>+<name>/repo) at its commit and path,
and its sha256 checked. A missing one stops the run with the repository to fetch. Each moment was
asked three ways (copied / memory / agent, see queries.py) from the session's text, before any
engine ran; its answers are entry ids of its session. The split is by session, stored in the set.

Some sessions are Pi's JSON event stream (`pi --mode json`, as pi-messenger keeps its crew
workers' runs), marked `"format": "pi-events"`: they become the session file Pi itself would have
written (`events_to_session`), so their answers are the entry ids that conversion gives.

`--scale 250M` puts the split's sessions inside a history, hard-linked: by default copies of
other real sessions (realfiller.py, the pool in realpool.json), with `--filler generated` the
generated developer work of history.py (seed 37, shared with the scripted set). Corpora, our index
(per tree of --repo's server/) and the floor's index are cached under bench/out/rel-real/, so a
rerun of `ours` on new code reindexes ours only. `--check` only checks the queries' style rules
(check_real), which every run checks first.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

from bench.common.corpus import VISIBLE_ROOT, encoded_dir, parse_size

from .queries import STYLES
from .styles import HISTORY_SEED, Hit, K, Mnemo, OrBm25, Ours, Presence, Ripgrep, log, summarize

HERE = Path(__file__).resolve().parent
BENCH = HERE.parent
SET = HERE / "realset.json"
MIRROR = Path(os.environ.get("PI_BENCH_MIRROR", "/work/.mirror"))


def load_set() -> dict[str, Any]:
    return dict(orjson.loads(SET.read_bytes()))


def queries(split: str) -> list[dict[str, Any]]:
    """Every query of the split's sessions: style, text, acceptable (sessionId, entryId)s."""
    st = load_set()
    sessions = {s["key"]: s for s in st["sessions"]}
    out: list[dict[str, Any]] = []
    for m in st["moments"]:
        s = sessions[m["session"]]
        if split != "all" and s["split"] != split:
            continue
        answers = {(s["sessionId"], eid) for eid in m["answers"]}
        for style in STYLES:
            out.append({"style": style, "query": m[style], "answers": answers,
                        "session": s["key"], "what": m["what"]})
    return out


def read_session(s: dict[str, Any]) -> bytes:
    """The session's bytes from the fetch mirror, checked against the set's sha256."""
    git_dir = MIRROR / s["repo"].replace("/", "+") / "repo"
    if not git_dir.is_dir():
        raise SystemExit(f"{s['repo']} is not in {MIRROR}: fetch github:{s['repo']} with the fetch "
                         f"tool (or set PI_BENCH_MIRROR to where its git directory lives)")
    r = subprocess.run(["git", "-C", str(git_dir), "show", f"{s['commit']}:{s['path']}"],
                       capture_output=True)
    if r.returncode != 0:
        raise SystemExit(f"{s['repo']}@{s['commit'][:10]}:{s['path']} not in the mirror: "
                         f"{r.stderr.decode().strip()}")
    if hashlib.sha256(r.stdout).hexdigest() != s["sha256"]:
        raise SystemExit(f"{s['repo']}:{s['path']}: sha256 differs from the set's")
    return r.stdout


def session_bytes(s: dict[str, Any]) -> bytes:
    """The session as the index reads it: the file itself, or the file Pi writes for an event stream."""
    data = read_session(s)
    return events_to_session(data) if s.get("format") == "pi-events" else data


def events_to_session(data: bytes) -> bytes:
    """Pi's session file for a `--mode json` event stream.

    Pi's SessionManager persists each `message_end` (a custom-role message as a custom_message
    entry) under the header the stream opens with; the rest of the stream (deltas, tool progress)
    is never written. Entry ids are the session id and the entry's position hashed, so they are
    stable for the set's answers.
    """
    lines = data.split(b"\n")
    header = orjson.loads(lines[0])
    if header.get("type") != "session":
        raise SystemExit("an event stream must open with Pi's session header")
    sid = str(header["id"])
    out = [orjson.dumps(header)]
    parent: str | None = None
    for raw in lines[1:]:
        if b'"message_end"' not in raw[:40]:
            continue
        msg = orjson.loads(raw)["message"]
        eid = hashlib.sha256(f"{sid}:{len(out)}".encode()).hexdigest()[:8]
        ms = msg.get("timestamp")
        ts = (time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms / 1000)) + f".{ms % 1000:03d}Z"
              if isinstance(ms, int) else header["timestamp"])
        entry: dict[str, Any] = {"id": eid, "parentId": parent, "timestamp": ts}
        if msg.get("role") == "custom":
            entry = {"type": "custom_message", **entry, "customType": msg.get("customType"),
                     "content": msg.get("content"), "display": msg.get("display", True)}
            if "details" in msg:
                entry["details"] = msg["details"]
        else:
            entry = {"type": "message", **entry, "message": msg}
        out.append(orjson.dumps(entry))
        parent = eid
    return b"\n".join(out) + b"\n"


def entry_texts(data: bytes) -> dict[str, str]:
    """Each entry's searchable text (message text, thinking, tool calls and results, custom
    messages), for the set's style check."""
    out: dict[str, str] = {}
    for raw in data.splitlines():
        try:
            e = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue  # Pi skips a line it cannot parse, and so does the index
        parts: list[str] = []
        msg = e.get("message") if isinstance(e.get("message"), dict) else e
        content = msg.get("content")
        for b in [{"type": "text", "text": content}] if isinstance(content, str) else content or []:
            if b.get("type") == "text":
                parts.append(str(b.get("text", "")))
            elif b.get("type") == "thinking":
                parts.append(str(b.get("thinking", "")))
            elif b.get("type") == "toolCall":
                parts.append(f"{b.get('name')} {orjson.dumps(b.get('arguments')).decode()}")
        for key in ("command", "output", "summary"):
            if isinstance(msg.get(key), str):
                parts.append(msg[key])
        if "id" in e:
            out[str(e["id"])] = "\n".join(parts)
    return out


def check_real() -> list[str]:
    """The scripted set's style rules (styles.check_set) on the real set: 1-4 answers that exist
    in their session; copied: every word verbatim in one answer; from memory: 2-5 words, one or
    two not in the answers (issue 46's "usually one or two"; the scripted set asks exactly one);
    agent: 3-6 words, at most one not in them."""
    st = load_set()
    sessions = {s["key"]: s for s in st["sessions"]}
    texts = {k: entry_texts(session_bytes(s)) for k, s in sessions.items()}
    present = Presence()

    bad: list[str] = []
    for m in st["moments"]:
        known = texts[m["session"]]
        where = f"{m['session']} ({m['what']})"
        if not 1 <= len(m["answers"]) <= 4:
            bad.append(f"{where}: {len(m['answers'])} answers")
        missing = [a for a in m["answers"] if a not in known]
        if missing:
            bad.append(f"{where}: unknown answers {missing}")
            continue
        answer_texts = [known[a] for a in m["answers"]]
        union = "\n".join(answer_texts)
        for style in STYLES:
            # A word without a letter or digit (`===`, `|`) is no token to any engine.
            words = [w for w in str(m[style]).split() if re.search(r"\w", w)]
            absent = [w for w in words if not present("p", union, w)]
            if style == "copied" and not any(all(present("e", t, w) for w in words)
                                             for t in answer_texts):
                bad.append(f"{where}: copied {m[style]!r} not verbatim in one answer")
            elif style == "memory" and (not 2 <= len(words) <= 5 or not 1 <= len(absent) <= 2):
                bad.append(f"{where}: memory {m[style]!r}: {len(words)} words, absent {absent}")
            elif style == "agent" and (not 3 <= len(words) <= 6 or len(absent) > 1):
                bad.append(f"{where}: agent {m[style]!r}: {len(words)} words, absent {absent}")
    return bad


class RealCorpus:
    """An agent dir holding the split's real sessions, alone or inside a generated history."""

    def __init__(self, out: Path, split: str, scale: str, filler: str = "real") -> None:
        st = load_set()
        chosen = [s for s in st["sessions"] if split == "all" or s["split"] == split]
        self.scale = scale
        self.dir = out / (f"{split}-{scale}" if scale == "alone" or filler == "generated"
                          else f"{split}-{scale}-real")
        self.agent_dir = self.dir / "agent"
        self.sessions_dir = self.agent_dir / "sessions"
        want = {"set": [s["sha256"] for s in chosen], "scale": scale, "events": 1, "cwd": 1,
                "filler": filler if scale != "alone" else None}
        stamp = self.dir / "stamp.json"
        cwds: set[str] = set()
        fresh = not (stamp.exists() and orjson.loads(stamp.read_bytes()) == want)
        if fresh:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir.mkdir(parents=True)
            if scale != "alone":
                self._history(scale, filler)
        for s in chosen:
            data = session_bytes(s)
            first, rest = data.split(b"\n", 1)
            header = orjson.loads(first)
            drive = re.match(r"([A-Za-z]):[\\/](.*)", str(header["cwd"]))
            if drive:
                # A Windows cwd is no workspace root on this machine: the header says where the
                # session ran as Git Bash names it (C:\x -> /c/x), as its own commands do.
                header["cwd"] = f"/{drive[1].lower()}/{drive[2].replace(chr(92), '/')}"
                data = orjson.dumps(header) + b"\n" + rest
            cwds.add(str(header["cwd"]))
            if fresh:
                ts = str(header.get("timestamp", "2026-01-01T00:00:00.000Z")).replace(":", "-")
                dest = self.sessions_dir / encoded_dir(header["cwd"]) / f"{ts}_{header['id']}.jsonl"
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(data)
        if fresh:
            stamp.write_bytes(orjson.dumps(want))
        # The real sessions keep their own cwd (a Windows one as above), so their folders are
        # workspace roots beside the history's; nothing else in them is rewritten.
        self.roots = sorted(cwds | ({VISIBLE_ROOT} if scale != "alone" else set()))
        self.bytes = sum(f.stat().st_size for f in self.sessions_dir.glob("*/*.jsonl"))
        self.files = sum(1 for _ in self.sessions_dir.glob("*/*.jsonl"))

    def _history(self, scale: str, filler: str) -> None:
        if filler == "real":
            from .realfiller import generate as real_history

            m = real_history(BENCH / "out" / f"rel-history-real-{scale}", parse_size(scale))
        else:
            from .history import generate

            m = generate(BENCH / "out" / f"rel-history-realistic-{scale}", parse_size(scale),
                         HISTORY_SEED)
        subprocess.run(["cp", "-al", m["agent_dir"], str(self.agent_dir)], check=True)

    def jsonl(self) -> Iterator[Path]:
        yield from sorted(self.sessions_dir.glob("*/*.jsonl"))


def score(search: Callable[[str], list[Hit]], qs: list[dict[str, Any]]) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    for q in qs:
        hits = search(q["query"])[:K]
        rank = next((i + 1 for i, h in enumerate(hits) if h in q["answers"]), None)
        rows.append({"query": q["query"], "style": q["style"], "session": q["session"],
                     "what": q["what"], "rank": rank, "hits": len(hits)})
    return {"styles": summarize(rows), "queries": rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--set", default="real")
    ap.add_argument("--split", default="dev", choices=["dev", "test", "holdout", "all"])
    ap.add_argument("--scale", default="alone", help="'alone' or a history size (250M)")
    ap.add_argument("--filler", default="real", choices=["real", "generated"],
                    help="the history around the split at --scale: copies of the real sessions of "
                         "realpool.json (realfiller.py) or the generated developer work of "
                         "history.py (seed 37)")
    ap.add_argument("--repo", action="append", type=Path, default=None,
                    help="a worktree whose server/ to measure as `ours` (repeatable; PATH@REV too)")
    ap.add_argument("--engines", default="ours,orbm25")
    ap.add_argument("--out", type=Path, default=BENCH / "out" / "rel-real")
    ap.add_argument("--results", type=Path, default=None)
    ap.add_argument("--fresh-index", action="store_true")
    ap.add_argument("--check", action="store_true", help="only check the set's style rules")
    ap.add_argument("--misses", action="store_true",
                    help="list every query an engine ranked its answer below 1, with the rank")
    args = ap.parse_args()
    bad = check_real()
    for b in bad:
        print("set check:", b, file=sys.stderr)
    if args.check or bad:
        print(f"{len(load_set()['moments'])} moments, {len(bad)} violations")
        sys.exit(1 if bad else 0)
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    corpus = RealCorpus(out, args.split, args.scale, args.filler)
    qs = queries(args.split)
    log(f"real {args.split} {args.scale}: {corpus.bytes / 1e6:.1f} MB, {corpus.files} files, "
        f"{len(qs)} queries ({time.perf_counter() - t0:.0f} s)")
    results: dict[str, Any] = {
        "set": "real", "split": args.split, "scale": args.scale,
        "filler": args.filler if args.scale != "alone" else None, "corpus_bytes": corpus.bytes,
        "corpus_files": corpus.files, "queries": len(qs),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "engines": {}}
    for eng in args.engines.split(","):
        t1 = time.perf_counter()
        engines: list[Any]
        if eng == "ours":
            engines = [Ours(r, corpus, args.fresh_index)  # type: ignore[arg-type]
                       for r in (args.repo or [BENCH.parent])]
        elif eng == "rg":
            engines = [Ripgrep(corpus)]  # type: ignore[arg-type]
        elif eng == "mnemo":
            engines = [Mnemo(corpus, out)]  # type: ignore[arg-type]
        elif eng == "orbm25":
            engines = [OrBm25(corpus)]  # type: ignore[arg-type]
        else:
            raise SystemExit(f"unknown engine {eng}")
        for e in engines:
            try:
                t2 = time.perf_counter()
                res = score(e.search, qs)
                res["setup_s"] = round(t2 - t1, 1)
                if isinstance(e, Ours):
                    res["latency_ms"] = {"p50": round(statistics.median(e.times), 1)}
                    res["index_s"] = e.index_s
                results["engines"][e.name] = res
                log(f"{e.name}: " + ", ".join(f"{s} R@10 {v['r@10']:.2f}"
                                              for s, v in res["styles"].items()))
                if args.misses:
                    for row in res["queries"]:
                        if row["rank"] != 1:
                            print(f"  {e.name} [{row['style']}] {row['query']!r}: rank "
                                  f"{row['rank'] or '-'} ({row['hits']} hits; {row['what']})",
                                  file=sys.stderr)
            finally:
                e.close()
    tag = args.scale if args.scale == "alone" or args.filler == "generated" else f"{args.scale}-real"
    dest = args.results or out / f"{args.split}-{tag}-{args.engines.replace(',', '+')}.json"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(orjson.dumps(results, option=orjson.OPT_INDENT_2))
    print(table(results))
    print(f"results: {dest}")


def table(results: dict[str, Any]) -> str:
    lines = ["| engine | style | R@1 | R@10 | MRR@10 | zero-hit |", "|---|---|---:|---:|---:|---:|"]
    for name, res in results["engines"].items():
        for style, v in res["styles"].items():
            lines.append(f"| {name} | {style} | {v['r@1']:.2f} | {v['r@10']:.2f} | "
                         f"{v['mrr@10']:.2f} | {v['zero_hit']:.2f} |")
    return "\n".join(lines)
