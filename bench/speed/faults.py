"""How long each fault of issue 31 costs, with real processes (bench only: the tests in
tests/multiproc/ say that each fault heals; this says how long it takes, N times each).

    .venv/bin/python -m bench.speed.faults [--runs 3] [--only stopped_writer,disk_full,...]

Every fault is set up as its test sets it up, with the test's own helpers (imported from tests/):
real servers over stdio (`pi-event-search serve` of this checkout, bench/common/lspclient.py), a real
SIGSTOP, real garbage bytes in a real index, a real tmpfs (root only), a real HOME without `.pi`.
The failed bulk load is the exception the unit test injects at each step of a pass, in process.
Each run has a fresh directory; times are from the fault (or from the moment the cause went
away) until the client sees the answer it was missing, polled every 0.05 to 0.1 s as the tests
poll. Writes bench/results/faults-<date>.json (every run, median and max per measure, the load
average around each fault) and prints a markdown table. Timings on a shared machine are noisy:
the load average is recorded.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

BENCH = Path(__file__).resolve().parents[1]
REPO = BENCH.parent
for _p in (REPO / "tests" / "multiproc", REPO / "tests"):
    sys.path.insert(0, str(_p))

import pytest  # noqa: E402 - the unit test's MonkeyPatch injects the bulk load's faults
import test_disk_full as disk  # noqa: E402
import test_open_faults as opening  # noqa: E402
import test_stopped_mid_pass as mid_pass  # noqa: E402
from crowd import SERVE, WORD, fresh_home, history  # noqa: E402
from test_missing_pi_dir import inotify_watches  # noqa: E402
from test_one_writer import _check_index, _hits, _server_state, _until  # noqa: E402

import test_pass_scope as scope  # noqa: E402
from bench.common.corpus import generate, parse_size  # noqa: E402
from bench.common.lspclient import LspClient, RpcError  # noqa: E402
from builder import SessionBuilder  # noqa: E402
from pi_event_search.index.bulk import firstload, ftsload  # noqa: E402
from pi_event_search.service.engine import Engine  # noqa: E402
from pi_event_search.source.discovery import default_dirs  # noqa: E402

ROOT = "/home/dev/proj"
Run = dict[str, Any]


def since(t0: float, cond: Callable[[], Any], bound: float, what: str) -> float:
    """Seconds from t0 until cond() holds (polled by the tests' _until, every 0.05 s)."""
    _until(cond, bound, what)
    return round(time.monotonic() - t0, 2)


def serve(env: dict[str, str], options: dict[str, Any] | None = None) -> LspClient:
    c = LspClient(SERVE, env)
    c.initialize([ROOT], options)
    return c


def close(servers: list[LspClient]) -> int:
    """Shut the servers down; the number of their full-text workers still alive afterwards
    (other work on a shared machine runs workers too: only these servers' children count)."""
    pids = {c.proc.pid for c in servers}
    workers = [w for w in _ftsworkers() if _parent(w) in pids]
    for c in servers:
        if c.proc.poll() is None:
            c.close()
    time.sleep(0.5)
    return sum(1 for w in workers if _running(w))


def _ftsworkers() -> list[int]:
    """Every full-text worker process on the machine (close() keeps its servers' own)."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if b"ftsworker" in Path(f"/proc/{entry}/cmdline").read_bytes():
                    out.append(int(entry))
            except OSError:
                continue
    return out


def _parent(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat[stat.rindex(")") + 2:].split()[1])


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


# -- a stopped writer ----------------------------------------------------------------------------
def stopped_writer(tmp: Path) -> Run:
    """Two servers; SIGSTOP of the writer, then an append: the other says `writer stalled`, takes
    the lease after 5 s of silence and answers the append; after SIGCONT the old writer follows."""
    home = fresh_home(tmp)
    history(home, sessions=4, turns=5)
    live = SessionBuilder(home.sessions, ROOT, name_seed="live")
    live.user("the first line of a live session")
    servers: list[LspClient] = []
    stopped: int | None = None
    out: Run = {}
    try:
        for _ in range(2):
            servers.append(serve(home.env()))
            _until(lambda c=servers[-1]: _hits(c, WORD), 60, "first hits")
        writer = next(c for c in servers if _server_state(c)["role"] == "writer")
        other = next(c for c in servers if c is not writer)
        os.kill(writer.proc.pid, signal.SIGSTOP)
        stopped, t0 = writer.proc.pid, time.monotonic()
        live.user("the dingoappend line, written while the writer is stopped")

        def step() -> bool:
            now = round(time.monotonic() - t0, 2)
            state = _server_state(other)
            if (state["lastError"] or "").startswith("writer stalled"):
                out.setdefault("stalled_said_s", now)
            if state["role"] == "writer":
                out.setdefault("takeover_s", now)
            if _hits(other, "dingoappend"):
                out["heal_s"] = now  # the append answered by the server that took over
                return True
            return False

        _until(step, 60, "the append answered after a takeover")
        t1 = time.monotonic()
        other.request("piEvents/reindex", {}, timeout=30)
        out["reindex_after_s"] = round(time.monotonic() - t1, 3)
        os.kill(stopped, signal.SIGCONT)
        stopped, t2 = None, time.monotonic()
        out["resumed_follows_s"] = since(t2, lambda: _server_state(writer)["role"] == "reader",
                                         30, "the resumed writer follows")
        live.user("the emuappend line, after the old writer resumed")
        t3 = time.monotonic()
        out["next_append_everywhere_s"] = max(
            since(t3, lambda c=c: _hits(c, "emuappend"), 30, "the next append") for c in servers)
    finally:
        if stopped is not None:
            os.kill(stopped, signal.SIGCONT)
        close(servers)
    _check_index(home.index, 5)
    return out


# -- a failed bulk load (in process: the unit test's injected exception) -------------------------
def failed_bulk_load(tmp: Path) -> Run:
    """An exception at each step of a bulk load (tests/test_pass_scope.py's sites); the same
    engine's next pass, at once. Before issue 31 it waited OTHER_LOADER_WAIT (120 s) on its own
    side-file lock and failed, every time."""
    out: Run = {"sites": {}}
    for n, (site, (owner, name, when)) in enumerate(scope.SITES.items()):
        base = tmp / f"site-{n}"
        sessions = scope._corpus(base, sessions=20)
        sizes = sorted(f.stat().st_size for f in sessions.rglob("*.jsonl"))
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("PIES_FTS_LOAD", "1")
            mp.setattr(firstload, "FIRST_SLICE_BYTES", sum(sizes[-2:]))  # the rest: side load
            assert ftsload.OTHER_LOADER_WAIT == 120.0  # the product's wait, not the test's 3 s
            hits = scope._fail_once(mp, owner, name, when or (lambda *a, **k: True))
            e = Engine(base / "index.sqlite3", default_dirs(sessions, []))
            try:
                t0 = time.monotonic()
                with contextlib.suppress(scope.Injected):
                    e.refresh()
                failed = time.monotonic() - t0
                assert hits, f"the pass never reached {site}"
                left = len(scope._worker_children())
                t1 = time.monotonic()
                e.refresh()
                out["sites"][site] = {"failed_after_s": round(failed, 3),
                                      "next_pass_s": round(time.monotonic() - t1, 3),
                                      "workers_left": left}
            finally:
                e.close()
    clean = Engine(tmp / "clean.sqlite3", default_dirs(scope._corpus(tmp / "clean", 20), []))
    try:
        t0 = time.monotonic()
        clean.refresh()
        out["clean_pass_s"] = round(time.monotonic() - t0, 3)
    finally:
        clean.close()
    out["heal_s"] = max(s["next_pass_s"] for s in out["sites"].values())
    out["workers_left"] = sum(s["workers_left"] for s in out["sites"].values())
    return out


# -- a corrupt cache ---------------------------------------------------------------------------
def _damaged(damage: Callable[[Path], None] | None) -> Callable[[Path], Run]:
    def run(tmp: Path) -> Run:
        """A real index of 10 sessions (the CLI's), damaged; two servers started on it: until
        every needle answers in both."""
        home = fresh_home(tmp)
        opening._history(home)
        t = time.monotonic()
        opening._indexed(home)
        out: Run = {"cli_index_s": round(time.monotonic() - t, 2)}
        if damage is not None:
            damage(home.index)
        servers: list[LspClient] = []
        t0 = time.monotonic()
        try:
            servers = [serve(home.env()), serve(home.env())]
            out["heal_s"] = max(since(t0, lambda c=c, w=w: opening._answers(c, w), 120,
                                      f"{w} answered") for c in servers for w in opening.NEEDLES)
            said = [s["index"].get("recovered") for s in map(opening._status, servers)]
            out["said_by"] = sum(1 for r in said if r)
        finally:
            close(servers)
        return out
    return run


# -- an open error that is not transient ---------------------------------------------------------
def impossible_index_path(tmp: Path) -> Run:
    """indexPath inside a regular file: until status says `failed`, then a search's answer."""
    home = fresh_home(tmp)
    opening._history(home)
    blocker = tmp / "a-file"
    blocker.write_text("not a directory")
    t0 = time.monotonic()
    c = serve(home.env(), {"indexPath": str(blocker / "index.sqlite3")})
    out: Run = {"started_s": round(time.monotonic() - t0, 2)}  # initialize answered
    try:
        out["status_first_s"] = since(t0, lambda: opening._status(c)["server"], 30, "a status")
        out["heal_s"] = since(t0, lambda: opening._status(c)["server"]["state"] == "failed", 30,
                              "state failed")
        t1 = time.monotonic()
        try:
            c.request("piEvents/search", {"query": opening.NEEDLES[0]}, timeout=30)
            out["search_error"] = None
        except RpcError as exc:
            out["search_error"] = str(exc)
        out["search_answer_s"] = round(time.monotonic() - t1, 3)
    finally:
        close([c])
    return out


# -- a full disk -------------------------------------------------------------------------------
def _disk_full(sessions: int, size: str, full_for: float = 0.0) -> Callable[[Path], Run]:
    def run(tmp: Path) -> Run:
        """The index on a tmpfs too small for it (the test's), two servers; once status says the
        disk is full (and `full_for` seconds more), the tmpfs is remounted larger: until every
        needle answers in both servers, the index is complete, the error gone."""
        where = tmp / "index"
        where.mkdir(parents=True)
        if os.geteuid() != 0 or not disk._mount(where, size):
            return {"skipped": "mounting a tmpfs needs root"}
        home = fresh_home(tmp)
        disk._history(home, sessions)
        servers: list[LspClient] = []
        out: Run = {}
        try:
            t = time.monotonic()
            servers = [serve(home.env()), serve(home.env())]
            out["full_seen_s"] = since(t, lambda: any("full" in (_server_state(c)["lastError"]
                                                                 or "") for c in servers),
                                       180, "the disk fills")
            for c in servers:  # answering from what is committed meanwhile
                c.request("piEvents/search", {"query": "step"}, timeout=30)
            time.sleep(full_for)
            assert disk._mount(where, "512m", remount=True)
            t0 = time.monotonic()
            out["heal_s"] = max(since(t0, lambda c=c, w=w: disk._answers(c, w), 300,
                                      f"{w} answered") for c in servers for w in disk.NEEDLES)
            out["complete_s"] = since(t0, lambda: all(
                c.request("piEvents/search", {"query": "step"}, timeout=30)["indexing"] is None
                for c in servers), 120, "the index complete")
            out["error_cleared_s"] = since(
                t0, lambda: not any(_server_state(c)["lastError"] for c in servers), 60,
                "the error cleared")
        finally:
            out["workers_left"] = close(servers)
            try:
                _check_index(home.index, sessions)
            finally:
                subprocess.run(["umount", "-l", str(where)], capture_output=True, check=False)
        return out
    return run


# -- no Pi directory yet -----------------------------------------------------------------------
def missing_pi_dir(tmp: Path) -> Run:
    """A HOME without `.pi`, an archive directory that is not there; 300 folders appear in HOME;
    then Pi's first session, then the archive: until each is searchable."""
    home = tmp / "home"
    home.mkdir()
    archive = home / "mnt" / "archive" / "sessions"
    env = {k: v for k, v in os.environ.items() if k != "PI_CODING_AGENT_DIR"}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(tmp / "cache"),
               PI_EVENT_SEARCH_INDEX=str(tmp / "index" / "index.sqlite3"))
    c = LspClient(SERVE, env)
    out: Run = {}
    try:
        c.initialize([str(home / "proj")], {"sessionDirs": [str(archive)]})
        _until(lambda: _server_state(c)["role"] == "writer"
               and _server_state(c)["state"] == "ready", 60, "the server indexes")
        for i in range(300):
            (home / f"folder-{i}").mkdir()
            (home / f"folder-{i}" / "notes.txt").write_text("a file in a folder of $HOME\n")
        time.sleep(2)
        out["watches_after_300_folders"] = inotify_watches(c.proc.pid)
        live = SessionBuilder(home / ".pi" / "agent" / "sessions", str(home / "proj"),
                              name_seed="late")
        t0 = time.monotonic()
        live.user("the first koalaappear line, once Pi has run")
        out["heal_s"] = since(t0, lambda: _hits(c, "koalaappear"), 30, "the sessions directory")
        t1 = time.monotonic()
        SessionBuilder(archive, str(home / "proj"), name_seed="archived").user(
            "an archived wallabyappear line")
        out["archive_s"] = since(t1, lambda: _hits(c, "wallabyappear"), 30, "the archive")
        t2 = time.monotonic()
        live.user("the second koalaappend line")
        out["next_append_s"] = since(t2, lambda: _hits(c, "koalaappend"), 30, "an append")
        out["watches_at_end"] = inotify_watches(c.proc.pid)
    finally:
        close([c])
    return out


# -- a writer stopped mid-pass -------------------------------------------------------------------
def _stopped_mid_first_index(size: str) -> Callable[[Path], Run]:
    def run(tmp: Path) -> Run:
        """tests/multiproc/test_stopped_mid_pass.py's scenario on a `size` corpus: server A is
        stopped 1 s into its first index, B beside it; an append. Times from the SIGSTOP."""
        out = mid_pass.stopped_mid_pass(tmp, size)
        sessions, events, fragments = out.pop("counts")
        out.pop("manifest")
        out.pop("index")
        out["heal_s"] = out["append_s"]
        out["sessions"], out["events"], out["fragments"] = sessions, events, fragments
        return out
    return run


# -- bounded waits -----------------------------------------------------------------------------
REINDEX_BURST = 8


def _reindex_corpus(base: Path, size: str) -> Path:
    """bench/common/corpus.py's seeded corpus, generated once per bench run and copied per run."""
    corpus = base / f"corpus-{size}"
    if not (corpus / "manifest.json").exists():
        generate(corpus, parse_size(size))
    return corpus


def _reindex_during_first_index(size: str) -> Callable[[Path], Run]:
    def run(tmp: Path) -> Run:
        """One server on an empty index of bench/common/corpus.py's corpus; while its first index runs,
        a burst of reindex requests, and a search every 0.2 s: until each reindex answers."""
        m = orjson.loads((_reindex_corpus(tmp.parent, size) / "manifest.json").read_bytes())
        env = dict(os.environ, PI_CODING_AGENT_DIR=m["agent_dir"],
                   PI_EVENT_SEARCH_INDEX=str(tmp / "index.sqlite3"),
                   XDG_CACHE_HOME=str(tmp / "cache"))
        c = LspClient(SERVE, env)
        out: Run = {}
        try:
            t = time.monotonic()
            c.initialize(m["roots"])
            _until(lambda: _server_state(c)["state"] == "indexing", 60, "a first index under way")
            out["indexing_seen_s"] = round(time.monotonic() - t, 2)
            answers: list[tuple[float, Any]] = []

            def reindex() -> None:
                t0 = time.monotonic()
                try:
                    got: Any = c.request("piEvents/reindex", {}, timeout=120)
                except Exception as exc:  # noqa: BLE001 - recorded as this request's answer
                    got = f"{type(exc).__name__}: {exc}"
                answers.append((time.monotonic() - t0, got))

            burst = [threading.Thread(target=reindex) for _ in range(REINDEX_BURST)]
            for th in burst:
                th.start()
            searches: list[float] = []
            while any(th.is_alive() for th in burst):
                t0 = time.monotonic()
                c.request("piEvents/search", {"query": "error", "limit": 20}, timeout=60)
                searches.append(time.monotonic() - t0)
                time.sleep(0.2)
            for th in burst:
                th.join()
            waits = sorted(a for a, _ in answers)
            out["heal_s"] = round(waits[-1], 2)  # the last reindex of the burst answered
            out["reindex_first_s"] = round(waits[0], 2)
            out["errors"] = [g for _, g in answers if not isinstance(g, dict)]
            out["search_max_s"] = round(max(searches), 3)
            out["searches"] = len(searches)
            out["first_index_s"] = since(t, lambda: _server_state(c)["state"] == "ready", 600,
                                         "the first index complete")
        finally:
            close([c])
        return out
    return run


FAULTS: dict[str, Callable[[Path], Run]] = {
    "stopped_writer": stopped_writer,
    "stopped_mid_first_index": _stopped_mid_first_index("200M"),
    "failed_bulk_load": failed_bulk_load,
    "corrupt_header": _damaged(opening._garbage_header),
    "corrupt_pages": _damaged(opening._garbage_pages),
    "intact_index": _damaged(None),  # the reference: the same start on an undamaged index
    "impossible_index_path": impossible_index_path,
    "disk_full_slice": _disk_full(100, "8m"),
    "disk_full_bulk": _disk_full(300, "40m"),
    "disk_full_slice_60s": _disk_full(100, "8m", full_for=60.0),
    "missing_pi_dir": missing_pi_dir,
    "reindex_during_first_index": _reindex_during_first_index("300M"),
}


def summary(runs: list[Run]) -> dict[str, Any]:
    """Median and max of every numeric measure over the runs."""
    keys = [k for k, v in runs[0].items() if isinstance(v, int | float) and not isinstance(v, bool)]
    out: dict[str, Any] = {}
    for k in keys:
        values = [r[k] for r in runs if isinstance(r.get(k), int | float)]
        out[k] = {"median": round(statistics.median(values), 3), "max": max(values)}
    return out


def table(results: dict[str, Any]) -> str:
    lines = ["| fault | heals after: median / max s (runs) | other measures: median / max |",
             "|---|---:|---|"]
    for name, r in results.items():
        s = r["summary"]
        heal = s.get("heal_s")
        other = ", ".join(f"{k} {v['median']:g} / {v['max']:g}" for k, v in s.items()
                          if k != "heal_s")
        lines.append(f"| {name} | {heal['median']:g} / {heal['max']:g} ({len(r['runs'])})"
                     if heal else f"| {name} | - ({len(r['runs'])})")
        lines[-1] += f" | {other} |"
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", default="", help=f"comma-separated subset of {', '.join(FAULTS)}")
    ap.add_argument("--results", type=Path,
                    default=BENCH / "results" / f"faults-{time.strftime('%Y-%m-%d')}.json")
    args = ap.parse_args()
    names = [n for n in args.only.split(",") if n] or list(FAULTS)
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    res: dict[str, Any] = {"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                           "cores": os.cpu_count(), "commit": commit, "runs": args.runs,
                           "faults": {}}
    if args.results.exists():  # a run of a subset keeps the other faults' results
        res["faults"] = orjson.loads(args.results.read_bytes()).get("faults", {})
    base = Path(tempfile.mkdtemp(prefix="pies-faults-"))
    try:
        for name in names:
            runs: list[Run] = []
            for i in range(args.runs):
                tmp = base / f"{name}-{i}"
                tmp.mkdir()
                load = round(os.getloadavg()[0], 2)
                run = FAULTS[name](tmp)
                run["load"] = [load, round(os.getloadavg()[0], 2)]
                runs.append(run)
                shown = {k: v for k, v in run.items() if k != "sites"}
                print(f"{name} {i}: {orjson.dumps(shown).decode()}", file=sys.stderr, flush=True)
                shutil.rmtree(tmp, ignore_errors=True)
            res["faults"][name] = {"runs": runs, "summary": summary(runs)}
            args.results.write_bytes(orjson.dumps(res, option=orjson.OPT_INDENT_2))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(table(res["faults"]))


if __name__ == "__main__":
    main()
