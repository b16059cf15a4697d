"""The routine work around the relevance set's moments: what else a real session holds.

A real Pi session is mostly routine: status checks, file reads, test and lint runs, builds,
diffs, commits, small edits, long logs. `expand(session)` puts such turns (seeded per session,
no marks, never an answer) before, between and after the scripted steps, at points where no tool
call is waiting for its result, so the set's sessions have a realistic length (about 60-150
entries, a few hundred KB each) and every query meets the common words of its own session.
Half of the routine turns stay on the session's own topic, as real sessions do: they read the
files the session's steps name, run its commands again (with routine output) and mention its
identifiers, so the words of a moment also occur elsewhere in its session. The texts are
generic otherwise; none was written with a query of the set in mind.
"""

from __future__ import annotations

import random
import re
from typing import Any

Step = tuple[Any, ...]

FILES = ["src/index.ts", "src/app.ts", "src/config.ts", "src/utils/strings.ts", "src/api/routes.ts",
         "src/db/pool.ts", "src/logger.ts", "src/http/server.ts", "tests/helpers.ts",
         "src/models/user.py", "src/services/billing.py", "app/main.py", "internal/store/store.go",
         "cmd/server/main.go", "src/lib.rs", "src/parser.rs", "README.md", "Makefile",
         "docker-compose.yml", "package.json", "pyproject.toml", "Cargo.toml", "go.mod"]
IDENTS = ["userId", "requestTimeout", "parseOptions", "handleRequest", "loadConfig", "sessionStore",
          "formatDate", "retryPolicy", "maxConnections", "buildQuery", "createClient", "toJSON",
          "pageSize", "flushBuffer", "validateInput", "cacheKey", "onMessage", "startServer",
          "readFile", "encodeBase64", "isEnabled", "getLogger", "queueLength", "batchSize"]
WORDS = ["request", "handler", "cache", "user", "session", "config", "server", "client", "queue",
         "worker", "build", "test", "value", "option", "result", "error", "timeout", "retry",
         "update", "record", "file", "path", "module", "service", "event", "token", "payload",
         "status", "response", "connection", "index", "table", "schema", "field", "route"]
ASKS = ["show me the git status", "what changed since yesterday?", "run the unit tests",
        "run the linter", "can you read {file} and summarize it?", "build it",
        "looks good, commit that", "what does {ident} do?", "rename {ident} to {ident2}",
        "add a test for {ident}", "check the logs of the last run", "any TODOs left in src?",
        "format the code", "is the docker stack up?", "show the diff", "ok, thanks",
        "let's move on", "update the changelog", "list the files in src",
        "why is {ident} called twice?"]


def _log_lines(rng: random.Random, n: int) -> str:
    lines = []
    for i in range(n):
        w = rng.sample(WORDS, 3)
        lvl = rng.choice(["INFO", "INFO", "INFO", "DEBUG", "DEBUG", "WARN"])
        lines.append(f"2026-11-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:"
                     f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{i % 1000:03d}Z {lvl} "
                     f"{w[0]}.{w[1]}: {rng.choice(['GET', 'POST', 'PUT'])} /api/{w[2]}s/"
                     f"{rng.randint(1, 9999)} {rng.choice([200, 200, 200, 201, 204, 304])} in "
                     f"{rng.randint(1, 300)}ms")
    return "\n".join(lines)


def _code(rng: random.Random, n: int) -> str:
    lines = [f"import {{ {rng.choice(IDENTS)} }} from './{rng.choice(WORDS)}';", ""]
    while len(lines) < n:
        a, b, c = rng.sample(IDENTS, 3)
        w = rng.sample(WORDS, 2)
        lines += [f"export function {a}({w[0]}: {w[1].title()}Options) {{",
                  f"  const {b} = {w[0]}.{c} ?? {rng.randint(1, 500)};",
                  f"  if (!{b}) return null;",
                  f"  // {rng.choice(WORDS)} {rng.choice(WORDS)} before the {rng.choice(WORDS)}",
                  f"  return {{ ...{w[0]}, {c}: {b} }};", "}", ""]
    return "\n".join(lines[:n])


def _test_output(rng: random.Random) -> str:
    files = rng.randint(4, 40)
    tests = files * rng.randint(3, 12)
    rows = [f" ✓ tests/{rng.choice(WORDS)}.test.ts ({rng.randint(2, 20)} tests) "
            f"{rng.randint(5, 900)}ms" for _ in range(min(files, 12))]
    return "\n".join(rows) + (f"\n\n Test Files  {files} passed ({files})\n      Tests  {tests} "
                              f"passed ({tests})\n   Duration  {rng.randint(1, 40)}.{rng.randint(10, 99)}s")


class Topic:
    """Files, commands and identifiers a session's own steps name."""

    def __init__(self, steps: list[Step]) -> None:
        files: list[str] = []
        commands: list[str] = []
        idents: list[str] = []
        for st in steps:
            texts = [str(x) for x in st[2:] if isinstance(x, str)]
            if st[0] == "c":
                for _, args in st[3]:
                    if "path" in args:
                        files.append(str(args["path"]))
                    if "command" in args:
                        commands.append(str(args["command"]))
                    texts += [str(v) for v in args.values()]
            for t in texts:
                files += re.findall(r"[\w.-]+/[\w./-]+\.[a-z]{1,5}\b", t)
                idents += [w for w in re.findall(r"\b[A-Za-z_][A-Za-z0-9_]{3,}\b", t)
                           if ("_" in w.strip("_") or re.search(r"[a-z][A-Z]", w))
                           and w not in ("oldText", "newText")]
        self.files = sorted(set(files)) or FILES
        self.commands = sorted(set(commands))
        self.idents = sorted(set(idents)) or IDENTS


def _turn(rng: random.Random, topic: Topic | None = None) -> list[Step]:
    on = topic is not None and rng.random() < 0.5
    files = topic.files if on and topic else FILES
    idents = topic.idents if on and topic and len(topic.idents) >= 2 else IDENTS
    file, (ident, ident2) = rng.choice(files), rng.sample(idents, 2)
    if on and topic and topic.commands and rng.random() < 0.3:
        cmd = rng.choice(topic.commands)
        return [("c", None, rng.choice([None, "Running it again."]),
                 [("bash", {"command": cmd}), ]),
                ("r", None, rng.choice([_test_output(rng), _log_lines(rng, rng.randint(5, 60)),
                                        "(no output)", f"exit status 0\n{ident} ok"]), False),
                ("a", None, rng.choice(["Still fine.", "Same as before.", "That passes now.",
                                        f"{ident} looks unchanged."]))]
    ask = rng.choice(ASKS).format(file=file, ident=ident, ident2=ident2)
    kind = rng.randrange(12)
    steps: list[Step] = [("u", None, ask)] if rng.random() < 0.6 else []

    def call(tool: str, args: dict[str, Any], out: str, err: bool) -> list[Step]:
        return [("c", None, rng.choice([None, None, "Let me check."]), [(tool, args)]),
                ("r", None, out, err)]

    if kind == 0:
        steps += call("bash", {"command": "git status --short"},
                      "\n".join(f" M {f}" for f in rng.sample(FILES, rng.randint(1, 5))), False)
    elif kind == 1:
        steps += call("read", {"path": file}, _code(rng, rng.randint(40, 260)), False)
    elif kind == 2:
        steps += call("bash", {"command": rng.choice(["npm test", "pnpm test", "npx vitest run",
                                                      "pytest -q", "go test ./...",
                                                      "cargo test"])}, _test_output(rng), False)
    elif kind == 3:
        steps += call("bash", {"command": rng.choice(["npm run lint", "ruff check .",
                                                      "golangci-lint run"])},
                      rng.choice(["All checks passed!", f"{file}:{rng.randint(1, 200)}:"
                                  f"{rng.randint(1, 80)}: warning  '{ident}' is assigned a value "
                                  "but never used  no-unused-vars\n\n✖ 1 problem (0 errors, 1 "
                                  "warning)"]), False)
    elif kind == 4:
        steps += call("bash", {"command": f"tail -n 400 logs/{rng.choice(WORDS)}.log"},
                      _log_lines(rng, rng.randint(80, 400)), False)
    elif kind == 5:
        steps += call("edit", {"path": file, "edits": [{"oldText": ident, "newText": ident2}]},
                      f"Successfully replaced 1 block(s) in {file}.", False)
    elif kind == 6:
        steps += call("bash", {"command": "git diff --stat"},
                      "\n".join(f" {f} | {rng.randint(1, 60)} {'+' * rng.randint(1, 9)}"
                                f"{'-' * rng.randint(0, 5)}" for f in rng.sample(FILES, 3))
                      + "\n 3 files changed", False)
    elif kind == 7:
        msg = f"{rng.choice(['fix', 'chore', 'refactor', 'test'])}: {rng.choice(WORDS)} " \
              f"{rng.choice(WORDS)}"
        steps += call("bash", {"command": f"git commit -am \"{msg}\""},
                      f"[main {rng.getrandbits(28):07x}] {msg}\n {rng.randint(1, 6)} files "
                      f"changed, {rng.randint(1, 90)} insertions(+), {rng.randint(0, 40)} "
                      "deletions(-)", False)
    elif kind == 8:
        steps += call("ls", {"path": "src"}, "\n".join(sorted({f.split("/")[-1] for f in
                                                               rng.sample(FILES, 8)})), False)
    elif kind == 9:
        steps += call("bash", {"command": "npm run build"},
                      f"> build\n> tsc -p . && vite build\n\nvite v5.4.{rng.randint(0, 9)} "
                      f"building for production...\n✓ {rng.randint(40, 900)} modules "
                      f"transformed.\ndist/index.html  0.{rng.randint(30, 99)} kB\n"
                      f"dist/assets/index-{rng.getrandbits(32):08x}.js  "
                      f"{rng.randint(80, 900)}.{rng.randint(10, 99)} kB\n✓ built in "
                      f"{rng.randint(1, 9)}.{rng.randint(10, 99)}s", False)
    elif kind == 10:
        steps += call("grep", {"pattern": "TODO", "path": "src"},
                      "\n".join(f"{rng.choice(FILES)}:{rng.randint(1, 300)}: // TODO: "
                                f"{rng.choice(WORDS)} the {rng.choice(WORDS)}" for _ in
                                range(rng.randint(1, 6))), False)
    else:
        steps.append(("a", None, f"{ident} reads the {rng.choice(WORDS)} from the "
                      f"{rng.choice(WORDS)} and passes it to {ident2}; nothing else depends on "
                      f"it. {rng.choice(['Done.', 'No change needed.', 'I left it as is.'])}"))
        return steps
    steps.append(("a", None, rng.choice(["Done.", "All good.", "That passes.",
                                         f"Updated {file}.", "Nothing unexpected there.",
                                         f"{ident} is only used in {file}."])))
    return steps


def expand(key: str, steps: list[Step]) -> list[Step]:
    """The session's steps with routine turns around them (deterministic per session key)."""
    rng = random.Random("filler:" + key)
    topic = Topic(steps)
    out: list[Step] = []
    for _ in range(rng.randint(6, 16)):
        out += _turn(rng, topic)
    pending = 0
    for st in steps:
        if pending == 0 and st[0] in ("u", "b") and out and rng.random() < 0.7:
            for _ in range(rng.randint(1, 5)):
                out += _turn(rng, topic)
        out.append(st)
        if st[0] == "c":
            pending += len(st[3])
        elif st[0] == "r":
            pending -= 1
    for _ in range(rng.randint(4, 14)):
        out += _turn(rng, topic)
    return out
