"""A history made of copies of real Pi sessions, to put around the real set (issue 46, item 8).

    .venv/bin/python -m bench.relevance.realfiller OUT --size 250M [--seed 46]

The pool (realpool.json) holds real sessions from public repositories that are not in the set,
read like the set's (real.read_session: fetch mirror, commit, path, sha256; event streams
converted). Each copy gets a fresh session id, a cwd under one of a few made-up projects below
/bench/work, its timestamps moved by whole days so the copies spread over a year, and entry ids
of its own (old id and copy number hashed), so no copy shares an identity with another or with
the set. The text is never changed: a history of real work, as repetitive as its pool is small.
OUT/manifest.json records size, seed, pool and counts.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import random
import shutil
import time
import uuid
from pathlib import Path
from typing import Any

import orjson

from bench.common.corpus import VISIBLE_ROOT, encoded_dir, parse_size

from .real import load_set, session_bytes

HERE = Path(__file__).resolve().parent
POOL = HERE / "realpool.json"
VERSION = 1
PROJECTS = ["ledger-api", "mobile-shell", "infra-notes", "site-builder", "data-pipes",
            "plugin-kit", "ops-scripts", "research-lab"]
# Entry fields that name another entry of the same session, remapped with the ids.
REFS = ("parentId", "firstKeptEntryId", "targetId", "fromId")


def load_pool() -> list[dict[str, Any]]:
    pool: list[dict[str, Any]] = orjson.loads(POOL.read_bytes())["sessions"]
    in_set = {s["sessionId"] for s in load_set()["sessions"]}
    overlap = [p["key"] for p in pool if p["sessionId"] in in_set]
    if overlap:
        raise SystemExit(f"realpool.json: {overlap} are sessions of the set")
    return pool


def _entries(data: bytes) -> list[dict[str, Any]]:
    """The session's entries, header first (made up for a fragment that lost its own)."""
    out: list[dict[str, Any]] = []
    for raw in data.splitlines():
        try:
            out.append(orjson.loads(raw))
        except orjson.JSONDecodeError:
            continue
    if not out or out[0].get("type") != "session":
        first = next((e["timestamp"] for e in out if isinstance(e.get("timestamp"), str)),
                     "2026-01-01T00:00:00.000Z")
        out.insert(0, {"type": "session", "version": 3, "id": "", "timestamp": first, "cwd": ""})
    return out


def _shift(ts: str, days: int) -> str:
    t = dt.datetime.fromisoformat(ts.replace("Z", "+00:00")) + dt.timedelta(days=days)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def copy_session(entries: list[dict[str, Any]], sid: str, cwd: str, days: int,
                 salt: str) -> bytes:
    """One copy: new identity, cwd and dates; the entries' text as it was."""
    ids: dict[str, str] = {}

    def new_id(old: str) -> str:
        if old not in ids:
            ids[old] = hashlib.sha256(f"{salt}:{old}".encode()).hexdigest()[:8]
        return ids[old]

    known = {str(e["id"]) for e in entries[1:] if "id" in e}
    lines = []
    for i, e in enumerate(entries):
        e = dict(e)
        if i == 0:
            e.update(id=sid, cwd=cwd, timestamp=_shift(str(e["timestamp"]), days))
            e.pop("parentSession", None)
            lines.append(orjson.dumps(e))
            continue
        if "id" in e:
            e["id"] = new_id(str(e["id"]))
        for ref in REFS:
            if isinstance(e.get(ref), str):
                # A parent outside the file (a fragment's first entry) starts the tree.
                e[ref] = new_id(e[ref]) if e[ref] in known else None
        if isinstance(e.get("timestamp"), str):
            e["timestamp"] = _shift(e["timestamp"], days)
        msg = e.get("message")
        if isinstance(msg, dict) and isinstance(msg.get("timestamp"), int):
            e["message"] = {**msg, "timestamp": msg["timestamp"] + days * 86_400_000}
        lines.append(orjson.dumps(e))
    return b"\n".join(lines) + b"\n"


def generate(out: Path, size: int, seed: int = 46) -> dict[str, Any]:
    """Write (or reuse, for the same size, seed, pool and version) the history under out/agent."""
    pool = load_pool()
    want = {"size": size, "seed": seed, "version": VERSION,
            "pool": [p["sha256"] for p in pool]}
    manifest = out / "manifest.json"
    if manifest.exists():
        m: dict[str, Any] = orjson.loads(manifest.read_bytes())
        if all(m.get(k) == v for k, v in want.items()):
            return m
    shutil.rmtree(out, ignore_errors=True)
    sessions = out / "agent" / "sessions"
    sessions.mkdir(parents=True)
    rng = random.Random(seed)
    sources = [_entries(session_bytes(p)) for p in pool]
    total = n = 0
    t0 = time.perf_counter()
    while total < size:
        entries = sources[n % len(sources)]
        sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        cwd = f"{VISIBLE_ROOT}/{rng.choice(PROJECTS)}"
        data = copy_session(entries, sid, cwd, rng.randrange(-300, 60), f"{seed}:{n}")
        stamp = str(orjson.loads(data.split(b"\n", 1)[0])["timestamp"])
        dest = sessions / encoded_dir(cwd) / f"{stamp.replace(':', '-').replace('.', '-')}_{sid}.jsonl"
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
        total += len(data)
        n += 1
    m = {**want, "pool_sessions": len(pool), "sessions": n, "bytes": total,
         "agent_dir": str((out / "agent").resolve()), "seconds": round(time.perf_counter() - t0)}
    manifest.write_bytes(orjson.dumps(m))
    return m


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--size", default="250M")
    ap.add_argument("--seed", type=int, default=46)
    args = ap.parse_args()
    print(orjson.dumps(generate(args.out, parse_size(args.size), args.seed)).decode())


if __name__ == "__main__":
    main()
