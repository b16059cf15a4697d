"""The three-style relevance run (issue 37): corpora, engines, scores. Started by
bench/relevance/legacy.py (see its docstring); `--help` lists the options.

Corpora (cached under --out, default bench/out/rel/):
- `alone`: the set's 28 sessions only (set/agent/sessions).
- `250M` (any size): a history of developer work generated from other templates
  (bench/relevance/history.py, seed 37; none of the set's texts), hard-linked, with the set's
  sessions added to it. `--history salad` uses bench/common/corpus.py's word-salad history instead.

Engines, each asked every query for 10 hits:
- `ours`: `pi-event-search serve` over the LSP (`piEvents/search`, limit 10, default options),
  run from --repo's code: its `.venv/bin/pi-event-search` when it has one, else this venv's
  Python with PYTHONPATH=<repo>/server; `--repo PATH@REV` exports that commit's server/ and runs
  it with this venv's Python. The index is built with that code's `index` first and cached per
  tree of server/ (plus its uncommitted diff).
- `rg`: ripgrep over the JSONL, case-insensitive; an entry is a hit when its line holds every
  query word (as a substring); hits newest session first (file name), then in file order.
- `mnemo`: mnemo-search 0.7.0 (own venv, bench/out/peer-venv), `mnemo search --json --limit 10`,
  its hit (file, line) mapped to the entry on that line.
- `orbm25`: calibration; one FTS5 row per entry (porter unicode61; camelCase words also
  indexed by their parts), the query's words (and their parts) OR-ed, ordered by bm25().
Scores per style: recall@1, recall@10, MRR@10 (a hit counts when its (sessionId, entryId) is one
of the query's acceptable answers) and the zero-hit rate (queries answered with nothing).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

from bench.common.corpus import VISIBLE_ROOT, generate, parse_size
from bench.common.lspclient import LspClient
from bench.common.peer import peer_exe

from .queries import STYLES, style_queries
from .sessions import SESSIONS
from .write import step_text, write_set

HERE = Path(__file__).resolve().parent
BENCH = HERE.parent
REPO = BENCH.parent

K = 10
HISTORY_SEED = 37
HEAD_CHARS, TAIL_CHARS = 32_000, 16_000
Hit = tuple[str, str]


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# -- the set's own check: do the queries follow their style? ------------------------------------
class Presence:
    """Whether a word is in a text as FTS5 tokenizes it: table `p` porter-stemmed, `e` as typed
    (the style checks of both sets)."""

    def __init__(self) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE p USING fts5(x, tokenize='porter unicode61')")
        self.db.execute("CREATE VIRTUAL TABLE e USING fts5(x, tokenize='unicode61')")

    def __call__(self, table: str, text: str, word: str) -> bool:
        self.db.execute(f"DELETE FROM {table}")
        self.db.execute(f"INSERT INTO {table}(x) VALUES (?)", (text,))
        phrase = '"' + word.replace('"', '""') + '"'
        return bool(self.db.execute(f"SELECT count(*) FROM {table} WHERE {table} MATCH ?",
                                    (phrase,)).fetchone()[0])


def check_set() -> list[str]:
    """Word rules per style against the answers' text (FTS5 tokens; porter for 'in the event';
    no identifier splitting, so `retry` is not in `retryCount`). Returns the violations."""
    steps = {(s.key, st[1]): st for s in SESSIONS for st in s.steps if st[1]}
    present = Presence()

    bad: list[str] = []
    for q in style_queries():
        answers = q["answers"]
        assert isinstance(answers, list)
        if not 1 <= len(answers) <= 4:
            bad.append(f"{q['query']!r}: {len(answers)} answers")
        missing_marks = [a for a in answers if tuple(a) not in steps]
        if missing_marks:
            bad.append(f"{q['query']!r}: unknown answers {missing_marks}")
            continue
        texts = [step_text(steps[tuple(a)]) for a in answers]
        words = str(q["query"]).split()
        union = "\n".join(texts)
        absent = [w for w in words if not present("p", union, w)]
        style = q["style"]
        if style == "copied":
            if not any(all(present("e", t, w) for w in words) for t in texts):
                bad.append(f"copied {q['query']!r}: not all words in one answer verbatim")
        elif style == "memory":
            if not 2 <= len(words) <= 5 or len(absent) != 1:
                bad.append(f"memory {q['query']!r}: {len(words)} words, absent {absent}")
        elif style == "agent" and (not 3 <= len(words) <= 6 or len(absent) > 1):
            bad.append(f"agent {q['query']!r}: {len(words)} words, absent {absent}")
    return bad


# -- corpora ------------------------------------------------------------------------------------
class Corpus:
    """An agent dir holding the set's sessions (and maybe a history), and the answers' ids."""

    def __init__(self, out: Path, scale: str, history: str = "realistic") -> None:
        self.scale = scale
        self.history = history
        st = write_set(out / "set")
        if scale == "alone":
            self.dir = out / "set"
            self.agent_dir = Path(st["agent_dir"])
        else:
            self.dir = out / (f"scale-{scale}" if history == "realistic"
                              else f"scale-{history}-{scale}")
            self.agent_dir = self._with_history(out, scale, st)
        self.sessions_dir = self.agent_dir / "sessions"
        self.roots = [VISIBLE_ROOT]
        self.answers = {(key, mark): (rec["sessionId"], eid)
                        for key, rec in st["sessions"].items()
                        for mark, eid in rec["marks"].items()}
        self.bytes = sum(f.stat().st_size for f in self.sessions_dir.glob("*/*.jsonl"))
        self.files = sum(1 for _ in self.sessions_dir.glob("*/*.jsonl"))

    def _with_history(self, out: Path, scale: str, st: dict[str, Any]) -> Path:
        if self.history == "salad":
            m = generate(out.parent / f"rel-history-{scale}", parse_size(scale), HISTORY_SEED)
            stats = m["stats"]
        else:
            from .history import generate as generate_realistic

            m = generate_realistic(out.parent / f"rel-history-realistic-{scale}",
                                   parse_size(scale), HISTORY_SEED)
            stats = {k: m[k] for k in ("size", "seed", "version", "sessions", "bytes")}
        stamp = self.dir / "stamp.json"
        want = {"set": st["digest"], "history": stats}
        if stamp.exists() and orjson.loads(stamp.read_bytes()) == want:
            return self.dir / "agent"
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True)
        subprocess.run(["cp", "-al", m["agent_dir"], str(self.dir / "agent")], check=True)
        src = Path(st["sessions_dir"])
        for f in src.glob("*/*.jsonl"):
            dest = self.dir / "agent" / "sessions" / f.parent.name / f.name
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, dest)
        stamp.write_bytes(orjson.dumps(want))
        return self.dir / "agent"

    def jsonl(self) -> Iterator[Path]:
        yield from sorted(self.sessions_dir.glob("*/*.jsonl"))


def sid_of(path: Path) -> str:
    return path.stem.split("_", 1)[1] if "_" in path.stem else path.stem


# -- engines ------------------------------------------------------------------------------------
def repo_digest(repo: Path) -> tuple[str, str]:
    """(HEAD, the key of the code measured: server/'s committed tree plus its uncommitted diff).
    The index is cached per key, so commits that leave server/ alone reuse it."""
    def git(*argv: str) -> bytes:
        return subprocess.run(["git", "-C", str(repo), *argv], capture_output=True,
                              check=True).stdout

    head = git("rev-parse", "--short", "HEAD").decode().strip()
    tree = git("rev-parse", "--short", "HEAD:server").decode().strip()
    diff = git("diff", "HEAD", "--", "server")
    dirty = "-" + hashlib.sha1(diff).hexdigest()[:8] if diff else ""
    return head + dirty, tree + dirty


class Ours:
    def __init__(self, repo: Path, corpus: Corpus, fresh: bool) -> None:
        # PATH@REV: that revision's committed server/, exported and run with this venv's Python
        # (the worktree itself, with whatever is uncommitted, stays untouched).
        path, _, rev = str(repo).partition("@")
        self.repo = Path(path).resolve()
        env = dict(os.environ)
        own = self.repo / ".venv" / "bin" / "pi-event-search"
        if rev:
            commit = subprocess.run(["git", "-C", str(self.repo), "rev-parse", "--short", rev],
                                    capture_output=True, text=True, check=True).stdout.strip()
            tree = subprocess.run(["git", "-C", str(self.repo), "rev-parse", "--short",
                                   f"{commit}:server"], capture_output=True, text=True,
                                  check=True).stdout.strip()
            self.rev, key = commit, tree
            src = corpus.dir.parent / f"engine-src-{commit}"
            if not (src / "server").is_dir():
                src.mkdir(parents=True, exist_ok=True)
                archive = subprocess.run(["git", "-C", str(self.repo), "archive", commit,
                                          "server"], capture_output=True, check=True).stdout
                subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
            self.cli = [sys.executable, "-m", "pi_event_search"]
            env["PYTHONPATH"] = str(src / "server") + os.pathsep + env.get("PYTHONPATH", "")
        elif own.exists():
            self.rev, key = repo_digest(self.repo)
            self.cli = [str(own)]
        else:
            self.rev, key = repo_digest(self.repo)
            self.cli = [sys.executable, "-m", "pi_event_search"]
            env["PYTHONPATH"] = str(self.repo / "server") + os.pathsep + env.get("PYTHONPATH", "")
        index = corpus.dir / f"index-{key}.sqlite3"
        if fresh:
            for suffix in ("", "-wal", "-shm"):
                Path(str(index) + suffix).unlink(missing_ok=True)
        env.update(PI_CODING_AGENT_DIR=str(corpus.agent_dir), PI_EVENT_SEARCH_INDEX=str(index),
                   XDG_CACHE_HOME=str(corpus.dir / "cache"))
        t0 = time.perf_counter()
        subprocess.run([*self.cli, "index"], env=env, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        self.index_s = round(time.perf_counter() - t0, 1)
        self.client = LspClient([*self.cli, "serve"], env, cwd=str(corpus.dir))
        self.client.initialize(corpus.roots, {"watch": False})
        self.client.wait_notification("piEvents/indexChanged", timeout=3600)
        self.name = f"ours@{self.repo.name}:{self.rev}"
        self.times: list[float] = []
        self.extra: dict[str, Any] = {}

    def search(self, query: str) -> list[Hit]:
        t0 = time.perf_counter()
        r = self.client.request("piEvents/search", {"query": query, "limit": K})
        self.times.append((time.perf_counter() - t0) * 1000)
        hits = r["hits"][:K]
        self.extra[query] = [{k: h[k] for k in ("matched", "missing") if k in h} for h in hits]
        return [(h["sessionId"], h["entryId"]) for h in hits]

    def close(self) -> None:
        self.client.close()


_ID = re.compile(rb'"id":"([^"]+)"')


def entry_id(line: bytes) -> str | None:
    """The entry id of a JSONL line (its first "id" key: entries begin type, id)."""
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    v = obj.get("id") if isinstance(obj, dict) else None
    return v if isinstance(v, str) else None


class Ripgrep:
    name = "rg"

    def __init__(self, corpus: Corpus) -> None:
        rg = shutil.which("rg")
        if rg is None:
            raise SystemExit("ripgrep missing: apt-get install -y ripgrep")
        self.rg = rg
        self.root = str(corpus.sessions_dir)
        self.version = subprocess.run([rg, "--version"], capture_output=True,
                                      text=True).stdout.splitlines()[0]

    def search(self, query: str) -> list[Hit]:
        words = query.split()
        # One PCRE2 pattern: a line (one entry) that holds every word, any order; -o with the
        # entry id as the only output keeps the pipe small on a large corpus.
        # The files holding every word are found first with fast literal searches (rg -l).
        look = "".join(f"(?=.*\\Q{w}\\E)" for w in words)
        pat = '^\\{"type":"[^"]*","id":"([^"]+)"' + look
        files = [self.root]
        for w in sorted(words, key=len, reverse=True):
            files = subprocess.run([self.rg, "-l", "-i", "-F", "--no-messages", "-e", w, *files],
                                   capture_output=True, text=True).stdout.splitlines()
            if not files:
                return []
        out = subprocess.run([self.rg, "-i", "-P", "-o", "-n", "-H", "--no-messages", "-r", "$1",
                              "-e", pat, *files], capture_output=True).stdout
        rows: list[tuple[str, int, str]] = []
        for line in out.splitlines():
            path, lineno, eid = line.decode(errors="replace").rsplit(":", 2)
            rows.append((Path(path).name, int(lineno), eid))
        rows.sort(key=lambda r: (_neg(r[0]), r[1]))
        return [(sid_of(Path(name)), eid) for name, _, eid in rows[:K]]

    def close(self) -> None:
        pass


def _neg(name: str) -> tuple[int, ...]:
    return tuple(-ord(c) for c in name)


class Mnemo:
    name = "mnemo-search==0.7.0"

    def __init__(self, corpus: Corpus, out: Path) -> None:
        self.exe = peer_exe(out.parent, self.name)
        self.home = corpus.dir / "mnemo-home"
        shutil.rmtree(self.home, ignore_errors=True)
        self.home.mkdir(parents=True)
        (self.home / ".pi").symlink_to(corpus.agent_dir.parent.resolve())
        self.db = corpus.dir / "mnemo.db"
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(str(self.db) + suffix).unlink(missing_ok=True)
        self.env = dict(os.environ, HOME=str(self.home), MNEMO_ARCHIVE="off")
        t0 = time.perf_counter()
        subprocess.run([self.exe, "--db", str(self.db), "index", "--source", "pi"],
                       env=self.env, check=True, stdout=subprocess.DEVNULL)
        self.index_s = round(time.perf_counter() - t0, 1)
        self.prefix = str(self.home / ".pi")
        self.real = str(corpus.agent_dir.parent.resolve())
        self.lines: dict[str, list[bytes]] = {}

    def search(self, query: str) -> list[Hit]:
        r = subprocess.run([self.exe, "--db", str(self.db), "search", "--json", "--no-sync",
                            "--limit", str(K), *query.split()], env=self.env,
                           capture_output=True)
        try:
            hits = orjson.loads(r.stdout or b"[]")
        except orjson.JSONDecodeError:
            hits = []
        out: list[Hit] = []
        for h in hits[:K]:
            path = h["path"].replace(self.prefix, self.real, 1)
            if path not in self.lines:
                self.lines[path] = Path(path).read_bytes().split(b"\n")
            eid = entry_id(self.lines[path][h["lineno"] - 1])
            out.append((h["session_id"], eid or ""))
        return out

    def close(self) -> None:
        shutil.rmtree(self.home, ignore_errors=True)


_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_WORD = re.compile(r"[A-Za-z0-9]+")


def camel_parts(text: str) -> str:
    """The parts of every mixed-case word (`retryCount` -> `retry Count`), to add beside it."""
    parts = [p for w in _WORD.findall(text) if not w.islower() and not w.isupper()
             for p in _CAMEL.findall(w)]
    return " ".join(parts)


def entry_texts(obj: dict[str, Any]) -> str:
    """The searchable text of one entry (the fields our index projects, roughly)."""
    t = obj.get("type")
    if t == "session_info":
        return str(obj.get("name") or "")
    if t in ("compaction", "branch_summary"):
        return str(obj.get("summary") or "")
    if t == "custom_message":
        c = obj.get("content")
        return c if isinstance(c, str) else _content(c)
    if t != "message":
        return ""
    m = obj.get("message") or {}
    role = m.get("role")
    if role == "bashExecution":
        return f"{m.get('command', '')}\n{m.get('output', '')}"
    c = m.get("content")
    if isinstance(c, str):
        return c
    return _content(c)


def _content(blocks: Any) -> str:
    out: list[str] = []
    for b in blocks or []:
        if not isinstance(b, dict):
            continue
        if b.get("type") == "text":
            out.append(str(b.get("text", "")))
        elif b.get("type") == "toolCall":
            out.append(f"{b.get('name', '')} {orjson.dumps(b.get('arguments')).decode()}")
    return "\n".join(out)


class OrBm25:
    name = "or-bm25"

    def __init__(self, corpus: Corpus) -> None:
        self.path = corpus.dir / "orbm25.sqlite3"
        stamp = corpus.dir / "orbm25.stamp"
        want = f"{corpus.bytes}:{corpus.files}:v1"
        if not (self.path.exists() and stamp.exists() and stamp.read_text() == want):
            self.path.unlink(missing_ok=True)
            t0 = time.perf_counter()
            self._build(corpus)
            stamp.write_text(want)
            log(f"or-bm25: built in {time.perf_counter() - t0:.0f} s")
        self.db = sqlite3.connect(self.path)

    def _build(self, corpus: Corpus) -> None:
        db = sqlite3.connect(self.path)
        db.execute("PRAGMA journal_mode=OFF")
        db.execute("PRAGMA synchronous=OFF")
        db.execute("CREATE TABLE e(id INTEGER PRIMARY KEY, sid TEXT, eid TEXT)")
        db.execute("CREATE VIRTUAL TABLE f USING fts5(x, tokenize='porter unicode61')")
        n = 0
        for path in corpus.jsonl():
            sid = sid_of(path)
            batch = []
            seen: set[str] = set()
            for line in path.read_bytes().split(b"\n"):
                if not line:
                    continue
                try:
                    obj = orjson.loads(line)
                except orjson.JSONDecodeError:
                    continue
                if not isinstance(obj, dict) or not isinstance(obj.get("id"), str):
                    continue
                if obj["id"] in seen:
                    continue
                seen.add(obj["id"])
                text = entry_texts(obj)
                if not text.strip():
                    continue
                if len(text) > HEAD_CHARS + TAIL_CHARS:
                    text = text[:HEAD_CHARS] + "\n" + text[-TAIL_CHARS:]
                n += 1
                batch.append((n, sid, obj["id"], text + "\n" + camel_parts(text)))
            db.executemany("INSERT INTO e VALUES (?, ?, ?)", [b[:3] for b in batch])
            db.executemany("INSERT INTO f(rowid, x) VALUES (?, ?)", [(b[0], b[3]) for b in batch])
        db.commit()
        db.close()

    def search(self, query: str) -> list[Hit]:
        terms: list[str] = []
        for w in query.split():
            for t in _WORD.findall(w) + _CAMEL.findall(w):
                if t.lower() not in terms:
                    terms.append(t.lower())
        if not terms:
            return []
        match = " OR ".join(f'"{t}"' for t in terms)
        rows = self.db.execute("SELECT e.sid, e.eid FROM f JOIN e ON e.id = f.rowid "
                               "WHERE f MATCH ? ORDER BY bm25(f) LIMIT ?", (match, K)).fetchall()
        return [(r[0], r[1]) for r in rows]

    def close(self) -> None:
        self.db.close()


# -- scoring ------------------------------------------------------------------------------------
def score(search: Callable[[str], list[Hit]], corpus: Corpus) -> dict[str, Any]:
    per_query: list[dict[str, Any]] = []
    for q in style_queries():
        answers = {corpus.answers[tuple(a)] for a in q["answers"]}  # type: ignore[attr-defined]
        hits = search(str(q["query"]))[:K]
        rank = next((i + 1 for i, h in enumerate(hits) if h in answers), None)
        per_query.append({"query": q["query"], "style": q["style"], "rank": rank,
                          "hits": len(hits)})
    return {"styles": summarize(per_query), "queries": per_query}


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for style in (*STYLES, "all"):
        sel = [r for r in rows if style == "all" or r["style"] == style]
        n = len(sel)
        out[style] = {
            "queries": n,
            "r@1": round(sum(1 for r in sel if r["rank"] == 1) / n, 3),
            "r@10": round(sum(1 for r in sel if r["rank"]) / n, 3),
            "mrr@10": round(sum(1 / r["rank"] for r in sel if r["rank"]) / n, 3),
            "zero_hit": round(sum(1 for r in sel if r["hits"] == 0) / n, 3),
        }
    return out


def table(results: dict[str, Any]) -> str:
    lines = ["| engine | style | R@1 | R@10 | MRR@10 | zero-hit |", "|---|---|---:|---:|---:|---:|"]
    for name, res in results["engines"].items():
        for style, v in res["styles"].items():
            lines.append(f"| {name} | {style} | {v['r@1']:.2f} | {v['r@10']:.2f} | "
                         f"{v['mrr@10']:.2f} | {v['zero_hit']:.2f} |")
    return "\n".join(lines)


def report(paths: list[Path]) -> str:
    """Markdown: one row per (run, engine), per style R@1 / R@10 / MRR@10 / zero-hit."""
    head = "| corpus | engine | " + " | ".join(
        f"{s}: R@1 / R@10 / MRR / zero" for s in STYLES) + " |"
    lines = [head, "|---|---|" + "---:|" * len(STYLES)]
    for path in paths:
        res = orjson.loads(path.read_bytes())
        where = "sessions alone" if res["scale"] == "alone" else (
            f"{res.get('history') or 'salad'} history, {res['corpus_bytes'] / 1e6:.0f} MB")
        for name, e in res["engines"].items():
            cells = [f"{v['r@1']:.2f} / **{v['r@10']:.2f}** / {v['mrr@10']:.2f} / "
                     f"{v['zero_hit']:.2f}" for v in (e["styles"][s] for s in STYLES)]
            lines.append(f"| {where} | {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    if "--report" in sys.argv:
        print(report([Path(a) for a in sys.argv[sys.argv.index("--report") + 1:]]))
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--scale", default="alone", help="'alone' or a history size (250M)")
    ap.add_argument("--history", default="realistic", choices=["realistic", "salad"],
                    help="the history around the set: developer work from other templates "
                         "(bench/relevance/history.py) or bench/common/corpus.py's word salad")
    ap.add_argument("--repo", action="append", type=Path, default=None,
                    help="a worktree whose server/ to measure as `ours` (repeatable; default: "
                         "this one); PATH@REV: that commit's server/, exported")
    ap.add_argument("--engines", default="ours,rg,mnemo,orbm25")
    ap.add_argument("--out", type=Path, default=BENCH / "out" / "rel")
    ap.add_argument("--results", type=Path, default=None,
                    help="JSON output (default bench/out/rel/<scale>-<engines>.json)")
    ap.add_argument("--fresh-index", action="store_true", help="rebuild our index from scratch")
    ap.add_argument("--check", action="store_true", help="only check the set's style rules")
    ap.add_argument("--show-misses", action="store_true", help="print every query ours missed")
    args = ap.parse_args()
    bad = check_set()
    for b in bad:
        print("set check:", b, file=sys.stderr)
    if args.check or bad:
        n = len(style_queries())
        print(f"{n} queries, {len(bad)} violations")
        sys.exit(1 if bad else 0)
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    corpus = Corpus(out, args.scale, args.history)
    log(f"corpus {args.scale}: {corpus.bytes / 1e6:.1f} MB, {corpus.files} files "
        f"({time.perf_counter() - t0:.0f} s)")
    wanted = args.engines.split(",")
    results: dict[str, Any] = {
        "scale": args.scale, "history": args.history if args.scale != "alone" else None,
        "corpus_bytes": corpus.bytes, "corpus_files": corpus.files,
        "queries": len(style_queries()), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                               time.gmtime()),
        "load_average_start": os.getloadavg()[0], "engines": {}}
    for eng in wanted:
        engines: list[Any] = []
        t1 = time.perf_counter()
        if eng == "ours":
            engines = [Ours(r, corpus, args.fresh_index) for r in (args.repo or [REPO])]
        elif eng == "rg":
            engines = [Ripgrep(corpus)]
        elif eng == "mnemo":
            engines = [Mnemo(corpus, out)]
        elif eng == "orbm25":
            engines = [OrBm25(corpus)]
        else:
            raise SystemExit(f"unknown engine {eng}")
        for e in engines:
            try:
                t2 = time.perf_counter()
                res = score(e.search, corpus)
                res["setup_s"] = round(t2 - t1, 1)
                res["search_s"] = round(time.perf_counter() - t2, 1)
                if isinstance(e, Ours):
                    res["latency_ms"] = {"p50": round(statistics.median(e.times), 1),
                                         "p95": round(sorted(e.times)[int(0.95 * len(e.times))], 1)}
                    res["index_s"] = e.index_s
                    for row in res["queries"]:
                        row["marks"] = e.extra.get(row["query"], [])[:3]
                results["engines"][e.name] = res
                log(f"{e.name}: " + ", ".join(
                    f"{s} R@10 {v['r@10']:.2f}" for s, v in res["styles"].items()))
                if args.show_misses and isinstance(e, Ours):
                    for row in res["queries"]:
                        if not row["rank"]:
                            print(f"  miss [{row['style']}] {row['query']!r} ({row['hits']} hits)",
                                  file=sys.stderr)
            finally:
                e.close()
    results["load_average_end"] = os.getloadavg()[0]
    where = args.scale if args.scale == "alone" or args.history == "realistic" else \
        f"{args.history}-{args.scale}"
    dest = args.results or out / f"{where}-{args.engines.replace(',', '+')}.json"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(orjson.dumps(results, option=orjson.OPT_INDENT_2))
    print(table(results))
    print(f"results: {dest}")


if __name__ == "__main__":
    main()
