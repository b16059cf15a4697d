"""Seeded, deterministic generator of a realistic Pi sessions tree for benchmarks.

    python -m bench.common.corpus OUT_DIR --size 100M [--seed 7]

writes OUT_DIR/agent/sessions/--<encoded cwd>--/<stamp>_<id>.jsonl
(PI_CODING_AGENT_DIR=OUT_DIR/agent) and OUT_DIR/manifest.json: planted needles with their
expected (sessionId, entryId), torn-line tokens, tokens in sessions no root may see, rare words,
and the two live sessions.

Shape (after pi-session-format.md): many projects, sessions per project with a long-tailed size
distribution, turns of user prompt -> assistant (thinking + tool call) -> tool result loops, most
bytes in tool results; some 50 KB outputs and larger uncapped extension outputs; base64 images in
user prompts and tool results; long expanded user prompts (<skill>, <file> blocks); `!` bash runs;
custom messages and entries; compactions; rewinds with and without branch summaries; labels;
session names; forks that copy entries with their ids; v1 files; a few torn last lines.

Text is sliced from pre-generated pools (cheap); lines are serialised with orjson.
"""

from __future__ import annotations

import argparse
import base64
import math
import os
import random
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

HEAD_CHARS, TAIL_CHARS = 32_000, 16_000  # the engine keeps head+tail of longer fragments
KINDS = ("user.text", "assistant.text", "tool.call", "tool.result", "bash.command", "bash.output",
         "summary.compaction", "summary.branch", "custom.message", "session.name")
VISIBLE_ROOT = "/bench/work"
PRIVATE_ROOT = "/bench/private"

DEV_WORDS = [
    "the", "a", "to", "of", "and", "in", "is", "for", "that", "it", "with", "on", "this", "be",
    "as", "not", "are", "error", "at", "by", "from", "or", "test", "file", "function", "return",
    "const", "value", "if", "we", "will", "use", "can", "should", "data", "new", "type", "server",
    "client", "request", "response", "update", "fix", "build", "run", "add", "check", "config",
    "set", "get", "user", "session", "event", "index", "search", "query", "cache", "timeout",
    "result", "string", "number", "object", "list", "call", "handler", "module", "import",
    "export", "default", "async", "await", "promise", "null", "undefined", "true", "false",
    "class", "method", "property", "state", "store", "path", "line", "output", "input",
    "websocket", "reconnect", "connection", "socket", "retry", "backoff", "message", "queue",
    "worker", "thread", "process", "pool", "database", "table", "column", "schema", "migration",
    "transaction", "commit", "branch", "merge", "rebase", "deploy", "release", "version",
    "package", "dependency", "install", "npm", "node", "python", "pytest", "cargo", "docker",
    "container", "image", "network", "port", "host", "proxy", "route", "router", "controller",
    "service", "api", "endpoint", "token", "auth", "login", "password", "secret", "key", "hash",
    "encode", "decode", "parse", "format", "render", "view", "component", "props", "hook",
    "effect", "memo", "context", "provider", "reducer", "action", "dispatch", "selector", "stream",
    "buffer", "chunk", "byte", "read", "write", "open", "close", "flush", "sync", "lock", "mutex",
    "channel", "signal", "timer", "interval", "delay", "debounce", "throttle", "log", "warn",
    "info", "debug", "trace", "metric", "counter", "gauge", "histogram", "span", "latency",
    "throughput", "memory", "heap", "stack", "frame", "exception", "panic", "assert", "expect",
    "mock", "fixture", "setup", "teardown", "suite", "case", "snapshot", "coverage", "lint",
    "format", "typecheck", "compile", "bundle", "minify", "transpile", "target", "source", "map",
    "watch", "reload", "refresh", "invalidate", "evict", "expire", "ttl", "lru", "size", "limit",
    "offset", "page", "cursor", "sort", "filter", "group", "join", "select", "insert", "delete",
    "upsert", "reconcile", "reconfigure", "recompute", "record", "recover", "redirect", "reduce",
    "refactor", "register", "reject", "release",
]
PHRASES = ["cannot read properties of undefined", "connection refused", "permission denied",
           "no such file or directory", "module not found", "unexpected token",
           "maximum call stack size exceeded", "address already in use", "out of memory"]
TOOLS = ["read", "bash", "edit", "write", "grep", "find", "ls", "mcp__browser__snapshot",
         "subagent", "web_search"]
TOOL_WEIGHTS = [30, 34, 14, 5, 6, 2, 2, 3, 2, 2]


def iso(ms: int) -> str:
    t = datetime.fromtimestamp(ms / 1000, UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def encoded_dir(cwd: str) -> str:
    stripped = cwd[1:] if cwd.startswith(("/", "\\")) else cwd
    return "--" + stripped.replace("/", "-").replace("\\", "-").replace(":", "-") + "--"


def parse_size(text: str) -> int:
    text = text.strip().upper().rstrip("B")
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
    return int(float(text.rstrip("KMG")) * mult)


class Pools:
    """Pre-generated text and base64 pools; every piece of content is a slice of one of them."""

    def __init__(self, rng: random.Random, code_mb: int = 12, prose_mb: int = 3) -> None:
        syll = ["ka", "lo", "mi", "ne", "ru", "ta", "shi", "po", "ven", "dor", "zil", "qua", "bex",
                "tor", "nal", "fi", "gro", "sam", "pel", "vu", "ix", "ost", "ran", "dek"]
        synth: set[str] = set()
        while len(synth) < 30_000:
            synth.add("".join(rng.choice(syll) for _ in range(rng.randint(2, 4))))
        self.vocab = DEV_WORDS + sorted(synth)
        weights = [1.0 / (i + 1) ** 1.05 for i in range(len(self.vocab))]
        self.cum = list(_accumulate(weights))
        self.rng = rng
        self.code = self._code(code_mb << 20)
        self.code_lines = _line_starts(self.code)
        self.prose = self._prose(prose_mb << 20)
        self.prose_lines = _line_starts(self.prose)
        self.b64 = base64.b64encode(rng.randbytes(6 << 20)).decode()

    def words(self, n: int) -> list[str]:
        return self.rng.choices(self.vocab, cum_weights=self.cum, k=n)

    def _code(self, size: int) -> str:
        rng = self.rng
        out: list[str] = []
        total = 0
        while total < size:
            w = self.words(12)
            r = rng.random()
            n = rng.randint(1, 9999)
            if r < 0.22:
                line = (f"2026-05-{n % 28 + 1:02d}T10:{n % 60:02d}:{(n * 7) % 60:02d}Z "
                        f"{rng.choice(['INFO', 'INFO', 'DEBUG', 'WARN', 'ERROR'])} {w[0]}.{w[1]}: "
                        f"{w[2]} {w[3]} {w[4]} {w[5]} in {n % 900}ms")
            elif r < 0.30:
                line = (f"    at {w[0].title()}.{w[1]} "
                        f"(/bench/work/src/{w[2]}/{w[3]}.ts:{n}:{n % 80})")
            elif r < 0.34:
                line = f"Error: {rng.choice(PHRASES)} ({w[0]} '{w[1]}')"
            elif r < 0.56:
                line = f"  const {w[0]}{w[1].title()} = await {w[2]}.{w[3]}({w[4]}, {n});"
            elif r < 0.64:
                line = f"  if ({w[0]} === null) return {w[1]}{w[2].title()};"
            elif r < 0.70:
                line = f"export function {w[0]}{w[1].title()}({w[2]}, {w[3]}) {{"
            elif r < 0.74:
                line = f"import {{ {w[0].title()}{w[1].title()} }} from './{w[2]}/{w[3]}';"
            elif r < 0.84:
                line = f"src/{w[0]}/{w[1]}.ts:{n}:    {w[2]}.{w[3]}({w[4]}, {w[5]});"
            elif r < 0.90:
                mark = "✓" if rng.random() < 0.85 else "✗"
                line = f"  {mark} {w[0]} {w[1]} should {w[2]} {w[3]} ({n % 500} ms)"
            elif r < 0.95:
                line = "}"
            else:
                line = "  // " + " ".join(w[:9])
            out.append(line)
            total += len(line) + 1
        return "\n".join(out) + "\n"

    def _prose(self, size: int) -> str:
        rng = self.rng
        out: list[str] = []
        total = 0
        while total < size:
            w = self.words(rng.randint(8, 22))
            if rng.random() < 0.08:
                w.insert(rng.randrange(len(w)), rng.choice(PHRASES))
            line = " ".join(w).capitalize() + "."
            out.append(line)
            total += len(line) + 1
        return "\n".join(out) + "\n"

    def slice(self, kind: str, n: int) -> str:
        text, starts = (self.code, self.code_lines) if kind == "code" else (self.prose,
                                                                          self.prose_lines)
        n = min(n, len(text) // 2)
        i = starts[self.rng.randrange(len(starts))]
        if i + n > len(text):
            i = max(0, len(text) - n - 1)
            i = text.rfind("\n", 0, i) + 1
        end = text.find("\n", i + n)
        return text[i: end if end > 0 else len(text)]

    def image(self, nbytes: int) -> str:
        n = min(len(self.b64) - 4, (nbytes * 4 // 3) // 4 * 4)
        i = self.rng.randrange(0, len(self.b64) - n) // 4 * 4
        return self.b64[i: i + n]


def _accumulate(xs: list[float]) -> list[float]:
    total = 0.0
    out = []
    for x in xs:
        total += x
        out.append(total)
    return out


def _line_starts(text: str) -> list[int]:
    starts = [0]
    pos = text.find("\n")
    while pos >= 0 and pos + 1 < len(text):
        starts.append(pos + 1)
        pos = text.find("\n", pos + 1)
    return starts


def insert_token(rng: random.Random, text: str, token: str, lo: int = 0, hi: int | None = None
                 ) -> str:
    """Put ` token ` at a space between lo and hi (character positions)."""
    hi = len(text) if hi is None else min(hi, len(text))
    lo = min(lo, hi)
    pos = rng.randint(lo, hi)
    # at whitespace, so that neither a word nor an earlier planted token is split
    ws = [i for i in (text.find(" ", pos, hi), text.find("\n", pos, hi)) if i >= 0]
    if ws:
        pos = min(ws)
    else:
        back = max(text.rfind(" ", lo, pos), text.rfind("\n", lo, pos))
        pos = back if back >= 0 else (hi if hi == len(text) else pos)
    return f"{text[:pos]} {token} {text[pos:]}"


@dataclass
class Plan:
    kinds: list[str] = field(default_factory=list)  # needle kinds to plant
    rare: list[str] = field(default_factory=list)  # rare words to plant
    mid: int = 0  # needles to plant in the omitted middle of a huge output


@dataclass
class Built:
    lines: list[bytes]
    path_entries: list[tuple[str, str | None, bytes]]  # (id, parentId, line) in file order
    entries: int


class SessionGen:
    """One session, built in memory, written in one go."""

    def __init__(self, g: Generator, cwd: str, sid: str, start_ms: int, target: int,
                 version: int | None, plan: Plan, parent: tuple[str, Built] | None = None) -> None:
        self.g, self.rng, self.p = g, g.rng, g.pools
        self.cwd, self.sid, self.clock, self.target = cwd, sid, start_ms, target
        self.v1 = version is None
        self.plan = plan
        self.lines: list[bytes] = []
        self.bytes = 0
        self.ids: set[str] = set()
        self.order: list[tuple[str, str | None, bytes]] = []
        self.leaf: str | None = None
        self.parent_of: dict[str, str | None] = {}
        self.user_ids: list[str] = []
        self.ordinal = 0
        self.name = ""
        header: dict[str, Any] = {"type": "session"}
        if version is not None:
            header["version"] = version
        header.update({"id": sid, "timestamp": iso(start_ms), "cwd": cwd})
        if self.v1:
            header.update({"provider": "anthropic", "modelId": "claude-sonnet-4-5",
                           "thinkingLevel": "medium"})
        if parent is not None:
            header["parentSession"] = parent[0]
        self._raw(orjson.dumps(header))
        if parent is not None:  # /fork: the root..point path, verbatim, same ids
            path = parent[1].path_entries
            by_id = {e[0]: e for e in path}
            cut = path[self.rng.randrange(len(path) // 3, len(path))]
            chain: list[tuple[str, str | None, bytes]] = []
            cur: tuple[str, str | None, bytes] | None = cut
            while cur is not None:
                chain.append(cur)
                cur = by_id.get(cur[1]) if cur[1] else None
            for eid, pid, line in reversed(chain):
                self._raw(line)
                self.ids.add(eid)
                self.ordinal += 1
                self.order.append((eid, pid, line))
                self.parent_of[eid] = pid
                self.leaf = eid
            g.stats["fork_copied"] += len(chain)

    # -- low level ------------------------------------------------------------------------
    def _raw(self, line: bytes) -> None:
        self.lines.append(line)
        self.bytes += len(line) + 1

    def tick(self, lo: int = 300, hi: int = 20_000) -> int:
        self.clock += self.rng.randint(lo, hi)
        return self.clock

    def new_id(self) -> str:
        while True:
            eid = f"{self.rng.getrandbits(32):08x}"
            if eid not in self.ids:
                self.ids.add(eid)
                return eid

    def append(self, etype: str, payload: dict[str, Any]) -> str:
        """Write one entry as a child of the leaf; returns the id the index will give it."""
        entry: dict[str, Any] = {"type": etype}
        self.ordinal += 1
        if self.v1:
            eid = f"v1~{self.ordinal}"
        else:
            eid = self.new_id()
            entry["id"] = eid
            entry["parentId"] = self.leaf
        entry["timestamp"] = iso(self.tick())
        entry.update(payload)
        line = orjson.dumps(entry)
        self._raw(line)
        self.parent_of[eid] = self.leaf
        self.order.append((eid, self.leaf, line))
        self.leaf = eid
        self.g.stats["entries"] += 1
        return eid

    def message(self, msg: dict[str, Any]) -> str:
        msg["timestamp"] = self.clock
        return self.append("message", {"message": msg})

    def needle(self, kind: str, etype_note: str = "") -> str:
        return self.g.new_needle(kind)

    def record(self, token: str, kind: str, eid: str, **extra: Any) -> None:
        self.g.record(token, kind, self.sid, eid, self.cwd, **extra)

    # -- entry shapes -----------------------------------------------------------------------
    def user(self, needles: list[str]) -> str:
        rng, p = self.rng, self.p
        r = rng.random()
        text = p.slice("prose", rng.randint(40, 400))
        if r < 0.08:
            text = (f'<skill name="{p.words(1)[0]}" location="/home/u/.pi/skills/x/SKILL.md">\n'
                    + p.slice("prose", rng.randint(3_000, 20_000)) + "\n</skill>\n" + text)
        elif r < 0.14:
            text = (f'<file name="{self.cwd}/src/{p.words(1)[0]}.ts">\n'
                    + p.slice("code", rng.randint(4_000, 40_000)) + "\n</file>\n" + text)
        toks = []
        for kind in needles:
            tok = self.needle(kind)
            text = insert_token(rng, text, tok, 0, HEAD_CHARS - 100)
            toks.append(tok)
        content: Any = [{"type": "text", "text": text}]
        if rng.random() < 0.01:
            content.append({"type": "image", "data": p.image(rng.randint(30_000, 400_000)),
                            "mimeType": "image/png"})
        if self.v1 and rng.random() < 0.5:
            content = text
        eid = self.message({"role": "user", "content": content})
        self.user_ids.append(eid)
        for tok in toks:
            self.record(tok, "user.text", eid)
        return eid

    def assistant(self, calls: list[tuple[str, str, dict[str, Any]]], text: str | None,
                  stop: str = "toolUse") -> str:
        rng, p = self.rng, self.p
        content: list[dict[str, Any]] = []
        if rng.random() < 0.8:
            content.append({"type": "thinking",
                            "thinking": p.slice("prose", rng.randint(100, 2500)),
                            "thinkingSignature": p.image(rng.randint(200, 1200))})
        if text is not None:
            content.append({"type": "text", "text": text})
        for cid, name, args in calls:
            content.append({"type": "toolCall", "id": cid, "name": name, "arguments": args})
        out = rng.randint(20, 3000)
        msg = {"role": "assistant", "content": content, "api": "anthropic-messages",
               "provider": "anthropic", "model": "claude-sonnet-4-5",
               "usage": {"input": rng.randint(5, 900), "output": out,
                         "cacheRead": rng.randint(0, 90_000), "cacheWrite": rng.randint(0, 5000),
                         "totalTokens": out + 1000,
                         "cost": {"input": 0.0001, "output": out * 1.5e-5, "cacheRead": 0.002,
                                  "cacheWrite": 0.001, "total": 0.0031}},
               "stopReason": stop, "responseId": f"msg_{rng.getrandbits(64):016x}"}
        return self.message(msg)

    def tool_call_args(self, name: str) -> dict[str, Any]:
        rng, p = self.rng, self.p
        w = p.words(4)
        if name == "read":
            return {"path": f"src/{w[0]}/{w[1]}.ts"}
        if name == "bash":
            cmds = [f"npm test -- {w[0]}", f"rg -n {w[0]} src", f"git diff --stat {w[1]}",
                    f"pytest -x tests/test_{w[0]}.py", f"ls -la src/{w[0]}",
                    f"cargo build --release -p {w[0]}"]
            return {"command": rng.choice(cmds), "timeout": 120}
        if name == "edit":
            return {"path": f"src/{w[0]}/{w[1]}.ts", "edits": [
                {"oldText": p.slice("code", rng.randint(40, 600)),
                 "newText": p.slice("code", rng.randint(40, 800))}]}
        if name == "write":
            return {"path": f"src/{w[0]}/{w[1]}.ts", "content": p.slice("code",
                                                                         rng.randint(300, 6000))}
        if name == "grep":
            return {"pattern": w[0], "path": "src"}
        if name in ("find", "ls"):
            return {"pattern": f"**/*{w[0]}*"} if name == "find" else {"path": f"src/{w[0]}"}
        return {"query": " ".join(w), "url": f"https://example.com/{w[0]}"}

    def tool_output(self, name: str, is_error: bool) -> str:
        rng, p = self.rng, self.p
        if self.plan.mid and name == "subagent":
            return p.slice("code", rng.randint(90_000, 200_000))
        if is_error:
            return p.slice("code", rng.randint(80, 1500)) + f"\n\nCommand exited with code {1}"
        r = rng.random()
        if name in ("mcp__browser__snapshot", "subagent", "web_search"):
            n = rng.randint(2_000, 30_000) if r < 0.9 else rng.randint(80_000, 250_000)
        elif r < 0.05:
            n = 51_000  # capped at 50 KB by Pi
        elif name == "read":
            n = rng.randint(800, 24_000)
        elif name == "bash":
            n = rng.randint(60, 9_000)
        elif name in ("grep", "find", "ls"):
            n = rng.randint(100, 6_000)
        else:
            return f"Successfully replaced 1 block(s) in src/{p.words(1)[0]}.ts."
        return p.slice("code", n)

    def tool_loop(self, needles: list[str]) -> None:
        rng, p = self.rng, self.p
        ncalls = 1 if rng.random() < 0.8 else rng.randint(2, 4)
        calls = []
        call_needles: list[tuple[int, str]] = []
        for i in range(ncalls):
            name = rng.choices(TOOLS, TOOL_WEIGHTS)[0]
            if self.plan.mid and i == 0:
                name = "subagent"  # an uncapped extension tool: room for an omitted middle
            args = self.tool_call_args(name)
            if "tool.call" in needles and i == 0:
                needles.remove("tool.call")
                tok = self.needle("tool.call")
                name, args = "bash", {"command": f"rg -n {tok} src && npm test", "timeout": 60}
                call_needles.append((i, tok))
            calls.append((f"toolu_{rng.getrandbits(64):016x}", name, args))
        text = p.slice("prose", rng.randint(30, 300)) if rng.random() < 0.35 else None
        aid = self.assistant(calls, text)
        for _, tok in call_needles:
            self.record(tok, "tool.call", aid)
        for cid, name, _ in calls:
            is_error = rng.random() < 0.06
            out = self.tool_output(name, is_error)
            toks = []
            if "tool.result" in needles:
                needles.remove("tool.result")
                tok = self.needle("tool.result")
                if len(out) > HEAD_CHARS + TAIL_CHARS and rng.random() < 0.5:
                    out = insert_token(rng, out, tok, len(out) - TAIL_CHARS + 200)
                else:
                    out = insert_token(rng, out, tok, 0, HEAD_CHARS - 200)
                toks.append(("tool.result", tok))
            while self.plan.rare and rng.random() < 0.7:
                word = self.plan.rare.pop()
                out = insert_token(rng, out, word, 0, HEAD_CHARS - 200)
                toks.append(("rare", word))
            if self.plan.mid and len(out) > HEAD_CHARS + TAIL_CHARS + 4000:
                self.plan.mid -= 1
                tok = self.g.new_needle("mid")
                mid = HEAD_CHARS + (len(out) - HEAD_CHARS - TAIL_CHARS) // 2
                out = insert_token(rng, out, tok, mid - 200, mid + 200)
                toks.append(("mid", tok))
            content: list[dict[str, Any]] = [{"type": "text", "text": out}]
            if name == "read" and rng.random() < 0.02:
                content.append({"type": "image", "mimeType": "image/png",
                                "data": p.image(rng.randint(20_000, 600_000))})
            msg: dict[str, Any] = {"role": "toolResult", "toolCallId": cid, "toolName": name,
                                   "content": content, "isError": is_error}
            if name == "edit" and not is_error:
                msg["details"] = {"diff": p.slice("code", rng.randint(200, 3000)),
                                  "firstChangedLine": rng.randint(1, 400)}
            elif name == "bash" and len(out) > 50_000:
                msg["details"] = {"truncation": {"truncated": True, "truncatedBy": "bytes",
                                                 "totalLines": 4000, "outputLines": 900},
                                  "fullOutputPath": f"/tmp/pi-bash-{rng.getrandbits(32):08x}.log"}
            rid = self.message(msg)
            for kind, tok in toks:
                if kind == "rare":
                    self.g.rare_hits.setdefault(tok, []).append([self.sid, rid])
                else:
                    self.record(tok, kind, rid)

    def bash_run(self, needles: list[str]) -> None:
        rng, p = self.rng, self.p
        w = p.words(2)
        cmd = rng.choice([f"git log --oneline -n 20 {w[0]}", f"make {w[0]}", f"ls -la {w[0]}",
                          f"docker compose logs {w[1]}"])
        out = p.slice("code", rng.randint(50, 8_000))
        tc = to = None
        if "bash.command" in needles:
            needles.remove("bash.command")
            tc = self.needle("bash.command")
            cmd = f"{cmd} | grep {tc}"
        if "bash.output" in needles:
            needles.remove("bash.output")
            to = self.needle("bash.output")
            out = insert_token(rng, out, to)
        code = 0 if rng.random() < 0.8 else rng.choice([1, 2, 127])
        eid = self.message({"role": "bashExecution", "command": cmd, "output": out,
                            "exitCode": code, "cancelled": False, "truncated": False,
                            "excludeFromContext": rng.random() < 0.2})
        if tc:
            self.record(tc, "bash.command", eid)
        if to:
            self.record(to, "bash.output", eid)

    def custom_message(self, needles: list[str]) -> None:
        text = self.p.slice("prose", self.rng.randint(200, 3000))
        tok = None
        if "custom.message" in needles:
            needles.remove("custom.message")
            tok = self.needle("custom.message")
            text = insert_token(self.rng, text, tok)
        eid = self.append("custom_message", {"customType": "enriched-prompt", "content": text,
                                             "display": False})
        if tok:
            self.record(tok, "custom.message", eid)

    def compaction(self, needles: list[str]) -> None:
        rng, p = self.rng, self.p
        summary = ("## Goal\n" + p.slice("prose", rng.randint(800, 5000)) +
                   "\n<read-files>\nsrc/a.ts\nsrc/b.ts\n</read-files>\n")
        tok = None
        if "summary.compaction" in needles:
            needles.remove("summary.compaction")
            tok = self.needle("summary.compaction")
            summary = insert_token(rng, summary, tok)
        path = self._path()
        kept = path[max(0, len(path) - rng.randint(3, 12))]
        payload: dict[str, Any] = {"summary": summary, "tokensBefore": rng.randint(50_000, 190_000)}
        if self.v1:
            payload["firstKeptEntryIndex"] = max(1, self.ordinal - rng.randint(3, 12))
        else:
            payload.update({"firstKeptEntryId": kept, "fromHook": False,
                            "details": {"readFiles": ["src/a.ts"], "modifiedFiles": ["src/b.ts"]}})
        eid = self.append("compaction", payload)
        self.g.stats["compactions"] += 1
        if tok:
            self.record(tok, "summary.compaction", eid)

    def _path(self) -> list[str]:
        out: list[str] = []
        cur = self.leaf
        while cur is not None and len(out) < 10_000:
            out.append(cur)
            cur = self.parent_of.get(cur)
        return out[::-1]

    def rewind(self, needles: list[str], summarize: bool) -> None:
        """/tree: move the leaf back to the parent of an earlier user message."""
        if self.v1 or len(self.user_ids) < 2:
            return
        target = self.rng.choice(self.user_ids[-6:-1])
        self.leaf = self.parent_of.get(target)
        self.g.stats["rewinds"] += 1
        if not summarize and "summary.branch" not in needles:
            return
        summary = ("The user explored a different approach. " +
                   self.p.slice("prose", self.rng.randint(300, 2500)))
        tok = None
        if "summary.branch" in needles:
            needles.remove("summary.branch")
            tok = self.needle("summary.branch")
            summary = insert_token(self.rng, summary, tok)
        eid = self.append("branch_summary", {"fromId": self.leaf or "root", "summary": summary,
                                             "fromHook": False})
        self.g.stats["branch_summaries"] += 1
        if tok:
            self.record(tok, "summary.branch", eid)

    def name_session(self, needles: list[str]) -> None:
        name = " ".join(self.p.words(self.rng.randint(2, 6)))
        tok = None
        if "session.name" in needles:
            needles.remove("session.name")
            tok = self.needle("session.name")
            name = f"{name} {tok}"
        eid = self.append("session_info", {"name": name})
        if tok:
            self.record(tok, "session.name", eid)

    # -- the session --------------------------------------------------------------------------
    def build(self) -> Built:
        rng = self.rng
        if self.leaf is None and not self.v1:
            self.append("model_change", {"provider": "anthropic", "modelId": "claude-sonnet-4-5"})
            self.append("thinking_level_change", {"thinkingLevel": "medium"})
        at = rng.uniform(0.0, 0.85) * self.target
        pending: list[str] = []
        planted = False
        turn = 0
        while self.bytes < self.target or not planted or pending:
            if not planted and self.bytes >= at:
                pending = list(self.plan.kinds)
                planted = True
            turn += 1
            r = rng.random()
            if pending and ("summary.branch" in pending and not self.v1 and len(self.user_ids) > 2):
                self.rewind(pending, True)
            elif r < 0.04 and turn > 3:
                self.rewind(pending, rng.random() < 0.5)
            if "session.name" in pending or (turn == 2 and rng.random() < 0.4 and not self.v1):
                self.name_session(pending)
            if "custom.message" in pending or (rng.random() < 0.04 and not self.v1):
                self.custom_message(pending)
            if "bash.command" in pending or "bash.output" in pending or rng.random() < 0.05:
                self.bash_run(pending)
            if "summary.compaction" in pending or (rng.random() < 0.015 and turn > 5):
                self.compaction(pending)
            want_user = [k for k in ("user.text",) if k in pending]
            for k in want_user:
                pending.remove(k)
            self.user(want_user)
            loops = rng.choice([0, 1, 1, 2, 2, 3, 3, 4, 5, 6, 8, 12])
            if "tool.call" in pending or "tool.result" in pending or self.plan.rare:
                loops = max(loops, 2)
            for _ in range(loops):
                self.tool_loop(pending)
                if self.bytes >= self.target and planted and not pending:
                    break
            text = self.p.slice("prose", rng.randint(60, 1800))
            tok = None
            if "assistant.text" in pending:
                pending.remove("assistant.text")
                tok = self.needle("assistant.text")
                text = insert_token(rng, text, tok)
            aid = self.assistant([], text, "stop")
            if tok:
                self.record(tok, "assistant.text", aid)
            if rng.random() < 0.03 and not self.v1:
                self.append("custom", {"customType": "agent_end",
                                       "data": {"turns": turn, "ok": True}})
            if rng.random() < 0.02 and not self.v1:
                self.append("label", {"targetId": rng.choice(self.user_ids), "label": "checkpoint"})
            if self.plan.rare and self.bytes >= self.target:
                self.tool_loop([])
        path: list[tuple[str, str | None, bytes]] = []
        if not self.v1 and self.bytes < 3 << 20:
            on_path = set(self._path())
            path = [e for e in self.order if e[0] in on_path]
        return Built(self.lines, path, self.ordinal)


class Generator:
    def __init__(self, out: Path, size: int, seed: int, live_big: int | None = None) -> None:
        self.out = out
        self.size = size
        self.seed = seed
        self.rng = random.Random(seed)
        self.pools = Pools(self.rng)
        self.needles: list[dict[str, Any]] = []
        self.rare_hits: dict[str, list[list[str]]] = {}
        self.counter = 0
        self.stats = {k: 0 for k in ("entries", "sessions", "v1", "forks", "fork_copied", "torn",
                                     "compactions", "rewinds", "branch_summaries", "bytes")}
        self.live_big = live_big if live_big is not None else min(100 << 20, size // 10)
        self.sessions_dir = out / "agent" / "sessions"

    def new_needle(self, kind: str) -> str:
        self.counter += 1
        code = kind.replace(".", "")[:6]
        return f"ndl{code}{self.counter:05d}q{self.rng.getrandbits(20):05x}"

    def record(self, token: str, kind: str, sid: str, eid: str, cwd: str, **extra: Any) -> None:
        self.needles.append({"token": token, "kind": kind, "sessionId": sid, "entryId": eid,
                             "visible": cwd.startswith(VISIBLE_ROOT + "/"), **extra})

    def uuid7(self, ms: int) -> str:
        r = self.rng.getrandbits(80)
        h = f"{ms:012x}{r:020x}"
        return f"{h[:8]}-{h[8:12]}-7{h[13:16]}-8{h[17:20]}-{h[20:32]}"

    def sizes(self, budget: int) -> list[int]:
        """Long-tailed session sizes (median ~140 KB, a few of several MB) summing to budget."""
        out: list[int] = []
        total = 0
        while total < budget:
            s = int(math.exp(self.rng.gauss(math.log(140_000), 1.25)))
            s = max(6_000, min(s, 14 << 20))
            s = min(s, budget - total) if budget - total > 6_000 else s
            out.append(s)
            total += s
        return out

    def run(self, per_kind: int = 30, rare_words: int = 10, rare_each: int = 5) -> dict[str, Any]:
        t0 = time.perf_counter()
        rng = self.rng
        live_small = min(1 << 20, self.size // 50)
        budget = self.size - self.live_big - live_small
        sizes = self.sizes(budget)
        n = len(sizes)
        nproj = max(8, int(math.sqrt(n) * 1.6))
        projects = []
        for i in range(nproj):
            private = i % 10 == 9
            base = PRIVATE_ROOT if private else VISIBLE_ROOT
            projects.append(f"{base}/{self.pools.words(1)[0]}-{i:03d}")
        pweights = [1.0 / (i + 1) ** 0.8 for i in range(nproj)]
        kinds_v1 = {"user.text", "assistant.text", "tool.call", "tool.result", "bash.command",
                    "bash.output", "summary.compaction"}
        # which sessions are v1, forks; where needles go
        meta = []
        for s in sizes:
            proj = rng.choices(range(nproj), pweights)[0]
            v1 = rng.random() < 0.03
            fork = (not v1) and rng.random() < 0.06
            meta.append({"size": s, "proj": proj, "v1": v1, "fork": fork, "plan": Plan()})
        visible = [i for i, m in enumerate(meta)
                   if not projects[m["proj"]].startswith(PRIVATE_ROOT)]
        hidden = [i for i in range(n) if i not in set(visible)]
        for kind in KINDS:
            for _ in range(per_kind):
                i = rng.choice(visible)
                while meta[i]["v1"] and kind not in kinds_v1:
                    i = rng.choice(visible)
                meta[i]["plan"].kinds.append(kind)
            for _ in range(2 if hidden else 0):
                i = rng.choice(hidden)
                if kind in kinds_v1 or not meta[i]["v1"]:
                    meta[i]["plan"].kinds.append(kind)
        words = ["".join(rng.choice("bcdfghjklmnpqrstvwxz") + rng.choice("aeiou")
                         for _ in range(5)) for _ in range(rare_words)]
        for w in words:
            for _ in range(rare_each):
                meta[rng.choice(visible)]["plan"].rare.append(w)
        for _ in range(5):
            meta[rng.choice(visible)]["plan"].mid += 1
        torn_at = set(rng.sample(range(n), min(n, max(3, n // 300))))
        start = int(datetime(2025, 10, 1, tzinfo=UTC).timestamp() * 1000)
        span = 250 * 86_400_000
        last_by_proj: dict[int, tuple[str, Built]] = {}
        torn: list[dict[str, Any]] = []
        self.sessions_dir.mkdir(parents=True, exist_ok=True)
        for i, m in enumerate(meta):
            cwd = projects[m["proj"]]
            ms = start + int(span * i / n) + rng.randint(0, 3_600_000)
            if m["v1"]:
                ms = start - rng.randint(1, 60) * 86_400_000
            sid = self.uuid7(ms)
            parent = last_by_proj.get(m["proj"]) if m["fork"] else None
            # keep the total on budget: scale this target by what is left vs what is planned
            left = budget - self.stats["bytes"]
            planned = sum(x["size"] for x in meta[i:])
            target = max(4_000, int(m["size"] * max(0.2, min(1.5, left / planned))))
            gen = SessionGen(self, cwd, sid, ms, target, None if m["v1"] else 3, m["plan"],
                             parent)
            built = gen.build()
            path = self._write(cwd, ms, sid, built.lines)
            if i in torn_at:
                tok = self.new_needle("torn")
                line = orjson.dumps({"type": "message", "id": "deadbeef", "parentId": gen.leaf,
                                     "timestamp": iso(gen.clock + 1000),
                                     "message": {"role": "user", "content": [
                                         {"type": "text", "text": f"{tok} please continue"}]}})
                with open(path, "ab") as fh:
                    fh.write(line[: len(line) * 2 // 3])
                torn.append({"token": tok, "path": str(path)})
                self.stats["torn"] += 1
            self.stats["sessions"] += 1
            self.stats["v1"] += int(m["v1"])
            self.stats["forks"] += int(parent is not None)
            if built.path_entries:
                last_by_proj[m["proj"]] = (str(path), built)
            if i % 200 == 0:
                print(f"  {i}/{n} sessions, {self.stats['bytes'] >> 20} MB, "
                      f"{time.perf_counter() - t0:.1f}s", file=sys.stderr)
        live = []
        for label, size in (("small", live_small), ("big", self.live_big)):
            cwd = f"{VISIBLE_ROOT}/live-{label}"
            ms = start + span + rng.randint(0, 1000)
            sid = self.uuid7(ms)
            gen = SessionGen(self, cwd, sid, ms, size, 3, Plan())
            built = gen.build()
            path = self._write(cwd, ms, sid, built.lines)
            live.append({"label": label, "path": str(path), "sessionId": sid, "leaf": gen.leaf,
                         "clock": gen.clock, "bytes": path.stat().st_size, "cwd": cwd})
            self.stats["sessions"] += 1
        manifest = {
            "seed": self.seed, "requested_bytes": self.size, "stats": self.stats,
            "sessions_dir": str(self.sessions_dir), "agent_dir": str(self.out / "agent"),
            "roots": [VISIBLE_ROOT], "projects": len(projects),
            "needles": self.needles, "rare": self.rare_hits, "torn": torn, "live": live,
            "generate_seconds": round(time.perf_counter() - t0, 2),
        }
        (self.out / "manifest.json").write_bytes(orjson.dumps(manifest))
        return manifest

    def _write(self, cwd: str, ms: int, sid: str, lines: list[bytes]) -> Path:
        folder = self.sessions_dir / encoded_dir(cwd)
        folder.mkdir(parents=True, exist_ok=True)
        stamp = iso(ms).replace(":", "-").replace(".", "-")
        path = folder / f"{stamp}_{sid}.jsonl"
        data = b"\n".join(lines) + b"\n"
        path.write_bytes(data)
        self.stats["bytes"] += len(data)
        self.stats["lines"] = self.stats.get("lines", 0) + len(lines) - 1
        return path


def generate(out: Path, size: int, seed: int = 7, live_big: int | None = None) -> dict[str, Any]:
    """Generate (or reuse, when a manifest for the same size and seed exists) a corpus."""
    manifest_path = out / "manifest.json"
    if manifest_path.exists():
        m: dict[str, Any] = orjson.loads(manifest_path.read_bytes())
        if m.get("requested_bytes") == size and m.get("seed") == seed and m.get("version") == 3:
            return _moved(m, out)
        import shutil

        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    m = Generator(out, size, seed, live_big).run()
    m["version"] = 3
    manifest_path.write_bytes(orjson.dumps(m))
    return m


def _moved(m: dict[str, Any], out: Path) -> dict[str, Any]:
    """A copied corpus (cp -r) keeps the original's absolute paths in its manifest: point them at
    this copy, so a bench run reads and appends to its own files, never to the original's."""
    old = str(Path(m["agent_dir"]).parent)
    new = str(out.resolve())
    if old == new:
        return m
    raw = orjson.dumps(m).replace(orjson.dumps(old)[1:-1] + b"/", orjson.dumps(new)[1:-1] + b"/")
    (out / "manifest.json").write_bytes(raw)
    moved: dict[str, Any] = orjson.loads(raw)
    return moved


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--size", default="100M", help="100M, 1G, 5G, ...")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    t0 = time.perf_counter()
    m = generate(args.out, parse_size(args.size), args.seed)
    dt = time.perf_counter() - t0
    st = m["stats"]
    print(f"{st['bytes'] / 1e6:.1f} MB, {st['sessions']} sessions, {st['lines']} entries, "
          f"{len(m['needles'])} needles in {dt:.1f}s")
    print(orjson.dumps(st).decode())


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
