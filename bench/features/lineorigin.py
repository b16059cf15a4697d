"""Line origin precision and recall on edits whose true origin is known.

    python -m bench.features.lineorigin OUT_DIR [--files 24] [--edits 30] [--seed 5]

Real files (this repository's own server sources, as of commit PIN) are edited in a seeded
sequence the way Pi's `edit` tool applies edits (each `oldText` must occur exactly once in the
file; it is replaced by `newText`): whole-line edits, partial-line edits (a value bumped or a name
changed with a little context on either side, often stopping before the line's trailing
`,`/`;`/`:`), and multi-line edits that begin and end inside lines. Half the files start with a
`write` of their content, half existed before the session. Each edit is one assistant tool call
in a v3 session file, with a successful result. After the sequence, the true origin of every
line is the last edit that changed it (difflib over the file's lines after each edit), or none.

Every final line of 8 or more trimmed characters is then asked for its origin (the engine's
line_origin, as `pi-event-search blame` asks): precision = right answers / answers given,
recall = right answers / lines some edit or write wrote. Writes OUT_DIR/lineorigin.json.
"""

from __future__ import annotations

import argparse
import difflib
import random
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson

REPO = Path(__file__).resolve().parents[2]
PIN = "c9666a0"  # the sources edited are this revision's, so every run edits the same files
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}|\d+")


def _mutate(token: str, rng: random.Random) -> str:
    if token.isdigit():
        return str(int(token) + rng.randint(1, 9) * 10 ** rng.randint(0, 2))
    return rng.choice([token + "V2", "new_" + token, token[:1].upper() + token[1:] + "s",
                       token.replace("_", "") + "Fast"])


def _unique(text: str, piece: str) -> bool:
    return bool(piece) and text.count(piece) == 1


def _partial(text: str, lines: list[str], rng: random.Random) -> tuple[str, str] | None:
    """A value or a name inside one line, with 0-12 characters of context either side, stopping
    before the line's end more often than not."""
    i = rng.randrange(len(lines))
    line = lines[i]
    tokens = list(_TOKEN.finditer(line))
    if not tokens:
        return None
    m = rng.choice(tokens)
    start = max(len(line) - len(line.lstrip()), m.start() - rng.randint(0, 12))
    end = min(len(line.rstrip(" ,;:")), m.end() + rng.randint(0, 12))
    if end <= m.start():
        return None
    old = line[start:end]
    for _ in range(20):
        if _unique(text, old):
            break
        start, end = max(0, start - 3), min(len(line), end + 3)
        old = line[start:end]
    if not _unique(text, old) or old == line:
        return None
    new = old.replace(m.group(), _mutate(m.group(), rng), 1)
    return old, new


def _whole(text: str, lines: list[str], rng: random.Random) -> tuple[str, str] | None:
    i = rng.randrange(len(lines))
    line = lines[i]
    tokens = list(_TOKEN.finditer(line))
    if not tokens or not _unique(text, line):
        return None
    m = rng.choice(tokens)
    return line, line[:m.start()] + _mutate(m.group(), rng) + line[m.end():]


def _multi(text: str, lines: list[str], rng: random.Random) -> tuple[str, str] | None:
    """From inside one line to inside a later one (2-4 lines); a token changed at each end and
    sometimes a line inserted."""
    i = rng.randrange(max(1, len(lines) - 3))
    span = lines[i:i + rng.randint(2, 4)]
    if len(span) < 2:
        return None
    first, last = span[0], span[-1]
    a = rng.randint(len(first) - len(first.lstrip()), max(len(first) - len(first.lstrip()),
                                                          len(first) - 1))
    b = rng.randint(1, max(1, len(last.rstrip(" ,;:"))))
    old = "\n".join([first[a:], *span[1:-1], last[:b]])
    if not _unique(text, old) or not old.strip():
        return None
    head, *middle, tail = old.split("\n")
    for part in (0, 1):
        piece = head if part == 0 else tail
        tokens = list(_TOKEN.finditer(piece))
        if tokens:
            m = rng.choice(tokens)
            piece = piece[:m.start()] + _mutate(m.group(), rng) + piece[m.end():]
        head, tail = (piece, tail) if part == 0 else (head, piece)
    if rng.random() < 0.5:
        middle = [*middle, f"    pass  # inserted ({rng.getrandbits(24):06x})"]
    return old, "\n".join([head, *middle, tail])


MAKERS = {"whole": _whole, "partial": _partial, "multi": _multi}


class Session:
    def __init__(self, path: Path, cwd: str) -> None:
        self.path, self.cwd, self.n, self.leaf = path, cwd, 0, None
        self.clock = 1_780_000_000_000
        self.lines = [orjson.dumps({"type": "session", "version": 3, "id": path.stem.split("_")[-1],
                                    "timestamp": self._ts(), "cwd": cwd})]

    def _ts(self) -> str:
        self.clock += 1500
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(self.clock / 1000)) + \
            f".{self.clock % 1000:03d}Z"

    def _entry(self, message: dict[str, Any]) -> str:
        self.n += 1
        eid = f"{self.n:08x}"
        self.lines.append(orjson.dumps({"type": "message", "id": eid, "parentId": self.leaf,
                                        "timestamp": self._ts(), "message": message}))
        self.leaf = eid
        return eid

    def call(self, name: str, args: dict[str, Any]) -> str:
        cid = f"call_{self.n}"
        eid = self._entry({"role": "assistant", "content": [
            {"type": "toolCall", "id": cid, "name": name, "arguments": args}],
            "stopReason": "toolUse", "timestamp": self.clock})
        self._entry({"role": "toolResult", "toolCallId": cid, "toolName": name, "isError": False,
                     "content": [{"type": "text", "text": "ok"}], "timestamp": self.clock})
        return eid

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_bytes(b"\n".join(self.lines) + b"\n")


def build(out: Path, files: int, edits: int, seed: int) -> tuple[Path, list[dict[str, Any]]]:
    """The project, the session and, per file, the final lines with their true origin."""
    rng = random.Random(seed)
    proj = out / "proj"
    listed = subprocess.run(["git", "-C", str(REPO), "ls-tree", "-r", "-l", PIN,
                             "server/pi_event_search"], capture_output=True, text=True,
                            check=True).stdout.splitlines()
    sources = sorted(Path(x.split("\t")[1]) for x in listed
                     if x.endswith(".py") and int(x.split()[3]) > 2000)[:files]
    session = Session(out / "agent" / "sessions" / "--proj--" /
                      "2026-06-01T00-00-00-000Z_0197a000-0000-7000-8000-000000000001.jsonl",
                      str(proj))
    truth = []
    for n, src in enumerate(sources):
        rel = f"src/{src.parent.name}_{src.name}"
        text = subprocess.run(["git", "-C", str(REPO), "show", f"{PIN}:{src}"],
                              capture_output=True, text=True, check=True).stdout
        origin: list[tuple[str | None, str]] = [(None, "original")] * len(text.split("\n"))
        if n % 2 == 0:
            eid = session.call("write", {"path": rel, "content": text})
            origin = [(eid, "write")] * len(origin)
        for _ in range(edits):
            kind = rng.choice(list(MAKERS))
            lines = text.split("\n")
            made = MAKERS[kind](text, lines, rng)
            if made is None:
                continue
            old, new = made
            eid = session.call("edit", {"path": rel, "edits": [{"oldText": old, "newText": new}]})
            after = text.replace(old, new, 1)
            new_lines = after.split("\n")
            carried: list[tuple[str | None, str]] = []
            sm = difflib.SequenceMatcher(None, lines, new_lines, autojunk=False)
            for op, i1, i2, j1, j2 in sm.get_opcodes():
                carried += origin[i1:i2] if op == "equal" else [(eid, kind)] * (j2 - j1)
            text, origin = after, carried
        path = proj / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        truth.append({"path": str(path), "lines": text.split("\n"), "origin": origin})
    session.save()
    return proj, truth


def measure(out: Path, proj: Path, truth: list[dict[str, Any]]) -> dict[str, Any]:
    from pi_event_search.core.authz import Scope
    from pi_event_search.service.engine import Engine
    from pi_event_search.source.discovery import SessionDir

    engine = Engine(out / "index.sqlite3", [SessionDir(str(out / "agent" / "sessions"), True)])
    engine.refresh()
    scope = Scope.of([str(proj)])
    by_kind: dict[str, list[int]] = {}
    answered = right = written = 0
    reasons: dict[str, int] = {}
    times = []
    for f in truth:
        for line, (eid, kind) in zip(f["lines"], f["origin"], strict=True):
            if len(line.strip()) < 8:
                continue
            t0 = time.perf_counter()
            got = engine.line_origin(f["path"], line, scope)
            times.append((time.perf_counter() - t0) * 1000)
            hit = got["hit"]
            stats = by_kind.setdefault(kind, [0, 0, 0])  # lines, answered, right
            stats[0] += 1
            written += eid is not None
            if hit is None:
                reasons[got.get("reason") or "?"] = reasons.get(got.get("reason") or "?", 0) + 1
                continue
            answered += 1
            stats[1] += 1
            ok = hit["entryId"] == eid
            right += ok
            stats[2] += ok
    engine.close()
    times.sort()
    return {"lines": sum(v[0] for v in by_kind.values()), "written": written,
            "answered": answered, "right": right,
            "precision": round(right / max(answered, 1), 4),
            "recall": round(right / max(written, 1), 4),
            "by_truth": {k: {"lines": v[0], "answered": v[1], "right": v[2]}
                         for k, v in sorted(by_kind.items())},
            "unanswered": reasons,
            "ms_p50": round(times[len(times) // 2], 2), "ms_p95": round(times[int(len(times) * .95)], 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--files", type=int, default=24)
    ap.add_argument("--edits", type=int, default=30)
    ap.add_argument("--seed", type=int, default=5)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    proj, truth = build(args.out, args.files, args.edits, args.seed)
    res = measure(args.out, proj, truth)
    res.update(files=len(truth), seed=args.seed, edits_per_file=args.edits)
    (args.out / "lineorigin.json").write_bytes(orjson.dumps(res, option=orjson.OPT_INDENT_2))
    sys.stdout.write(orjson.dumps(res, option=orjson.OPT_INDENT_2).decode() + "\n")


if __name__ == "__main__":
    main()
