"""Many sessions with random-ish content, for the grouping by session and the sessions list
(issue 32): several projects (some outside the roots the tests use), v3, v2, v1 and legacy
shapes, forks, names, long first prompts, and words common enough that a query's matches span
several ranking tiers, plus inflections (`failing` finds `failed`).

`expected(path)` reads a session file back on its own (not through the index): what the sessions
list must say of it.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from builder import BASE_TIME, SessionBuilder

PROJECTS = ("alpha", "alpha/api", "alpha/web", "beta", "gamma")  # under a base directory
VISIBLE = "alpha"  # the project the tests authorize (with its subdirectories)
COMMON = ["socket", "retry", "cache", "deploy", "parser", "timeout", "error", "build", "queue",
          "worker", "the", "and", "config", "schema", "index", "branch"]
RARE = ["zanzibar", "quokka", "marmot", "tapir", "okapi"]
INFLECTED = ["failing", "failed", "fails", "fail"]
V1_HEADER = {"provider": "anthropic", "modelId": "claude-sonnet-4-5", "thinkingLevel": "off"}


def words(rng: random.Random, n: int) -> str:
    pool = COMMON * 4 + RARE + INFLECTED
    return " ".join(rng.choice(pool) for _ in range(n))


@dataclass
class Corpus:
    base: str
    sessions: list[SessionBuilder]

    @property
    def root(self) -> str:
        return f"{self.base}/{VISIBLE}"

    def under(self, root: str) -> list[SessionBuilder]:
        return [s for s in self.sessions if s.cwd == root or s.cwd.startswith(root + "/")]

    def visible(self) -> list[SessionBuilder]:
        return self.under(self.root)


def build(sessions_dir: Path, base: str, rng: random.Random, count: int = 120) -> Corpus:
    """`count` sessions (and a few forks) in projects under `base`."""
    out: list[SessionBuilder] = []
    for n in range(count):
        cwd = f"{base}/{rng.choice(PROJECTS)}"
        shape = rng.choice(["v3"] * 6 + ["v2", "v1", "legacy"])
        start = BASE_TIME + timedelta(minutes=rng.randrange(0, 60 * 24 * 30))
        if shape == "v1":
            sb = SessionBuilder(sessions_dir, cwd, version=None, header_extra=V1_HEADER, start=start)
        elif shape == "legacy":  # v1, `branchedFrom` (before parentSession), string contents
            parent = rng.choice(out).path if out else None
            sb = SessionBuilder(sessions_dir, cwd, version=None, start=start,
                                header_extra={**V1_HEADER, "branchedFrom": str(parent)}
                                if parent else V1_HEADER)
        else:
            sb = SessionBuilder(sessions_dir, cwd, version=3 if shape == "v3" else 2, start=start)
        _fill(sb, rng, n, legacy=shape == "legacy")
        out.append(sb)
        if shape == "v3" and rng.random() < 0.1 and len(sb.ids) > 4:
            child = sb.fork(sessions_dir, upto=sb.ids[len(sb.ids) // 2])
            child.user(words(rng, 6))
            child.assistant(words(rng, 8))
            out.append(child)
    return Corpus(base, out)


def _fill(sb: SessionBuilder, rng: random.Random, n: int, *, legacy: bool) -> None:
    if rng.random() < 0.5:
        sb.model_change()
    if rng.random() < 0.15:  # a first message that is an image only: the first prompt is the next
        sb.user("", images=[("image/png", b"\x89PNG fake")])
    first = words(rng, rng.choice([4, 12, 80]))
    sb.user(first.replace(" ", rng.choice([" ", "\n", "  \t"]), 3), as_string=legacy)
    turns = rng.randrange(3, 12)
    for t in range(turns):
        call = f"call_{n}_{t}"
        tool = rng.choice(["bash", "read", "edit"])
        sb.assistant(words(rng, rng.randrange(3, 15)),
                     tool_calls=[(call, tool, {"command": words(rng, 3)} if tool == "bash"
                                  else {"path": f"src/{rng.choice(RARE)}.ts"})])
        sb.tool_result(call, tool, words(rng, rng.randrange(5, 40)),
                       is_error=rng.random() < 0.2)
        if rng.random() < 0.3:
            sb.bash(words(rng, 3), words(rng, 10), exit_code=rng.choice([0, 0, 1]))
        if rng.random() < 0.3:
            sb.user(words(rng, rng.randrange(3, 20)), as_string=legacy)
        if legacy and rng.random() < 0.2:
            sb.message({"role": "hookMessage", "customType": "hook", "content": words(rng, 5)})
    if rng.random() < 0.4:
        sb.session_info(words(rng, 3))
        if rng.random() < 0.3:
            sb.assistant(words(rng, 5))
            sb.session_info(words(rng, 2))  # renamed: the current name is the last one


@dataclass
class Expected:
    session_id: str
    cwd: str
    name: str | None
    first_prompt: str | None
    started: str
    updated: str
    events: int
    first_entry: str
    user_texts: int
    parent: str | None  # the header's parentSession (or a legacy file's branchedFrom)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return " ".join(b["text"] for b in content if isinstance(b, dict) and b.get("type") == "text")


def expected(path: Path) -> Expected:
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    header, entries = lines[0], lines[1:]
    prompts = [_text(e["message"]["content"]) for e in entries
               if e["type"] == "message" and e["message"]["role"] == "user"]
    prompts = [p for p in prompts if p.strip()]
    names = [e["name"] for e in entries if e["type"] == "session_info"]
    prompt = " ".join(prompts[0].split()) if prompts else None
    if prompt is not None and len(prompt) > 200:
        prompt = prompt[:199] + "…"
    return Expected(header["id"], header["cwd"], " ".join(names[-1].split()) if names else None,
                    prompt, header["timestamp"], max(e["timestamp"] for e in entries),
                    len(entries), entries[0].get("id", "v1~1"), len(prompts),
                    header.get("parentSession") or header.get("branchedFrom"))
