"""A large developer history of other templates, to put around the relevance set.

    .venv/bin/python -m bench.relevance.history OUT --size 250M [--seed 37]

bench/common/corpus.py's history is word salad over ~250 common words plus synthetic ones: the set's
distinctive words (nginx, lockfile, certbot, kafka ...) never occur in it, so it hides nothing
(measured: the OR-ed bm25 ranking keeps R@10 0.96 on from-memory queries inside 250 MB of it).
A real history is full of the same technologies in other events. This generator writes sessions
of developer work from its own templates: bug reports and their diagnoses, test, build, deploy
and infrastructure commands with realistic output, config edits, code reads, questions and
answers, over a broad vocabulary of tools, components, failure modes and error messages. No text
of the set's sessions is used (a history made from them would copy their words and bury every
answer under its copies); the vocabulary is the field's, so a query's common words meet many
other events and its rare ones some.

Sessions are written with the set's own JSONL writer (bench/relevance/write.py), into
OUT/agent/sessions under /bench/work/<project>, and OUT/manifest.json records size and seed.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path
from typing import Any

import orjson

from bench.common.corpus import parse_size

from .sessions import Session
from .write import _write_py

HERE = Path(__file__).resolve().parent

VERSION = 1
Step = tuple[Any, ...]

PROJECTS = ["orders-service", "web-client", "payments", "infra-live", "docs-site", "mobile-ios",
            "data-jobs", "auth-service", "search-indexer", "admin-panel", "chat-server",
            "video-transcoder", "feature-flags", "email-sender", "geo-api", "inventory",
            "crm-sync", "ml-training", "edge-proxy", "status-page", "desktop-app", "sdk-js",
            "sdk-python", "warehouse-etl", "game-backend", "ci-images", "helm-charts",
            "observability", "scheduler", "billing-ui"]
TECH = ["websocket", "redis", "postgres", "mysql", "nginx", "docker", "kubernetes", "kafka",
        "terraform", "vite", "webpack", "vitest", "jest", "pytest", "cargo", "gradle", "kotlin",
        "fastapi", "django", "express", "fastify", "next.js", "react", "graphql", "grpc", "s3",
        "cloudfront", "certbot", "systemd", "journald", "github actions", "poetry", "pnpm", "npm",
        "yarn", "eslint", "prettier", "typescript", "go", "rust", "elasticsearch", "rabbitmq",
        "celery", "sentry", "prometheus", "grafana", "helm", "ansible", "sqlite", "mongodb",
        "playwright", "cypress", "storybook", "tailwind", "swift", "xcode", "android studio",
        "node", "deno", "bun", "java", "spring", "maven", "flask", "sqlalchemy", "alembic",
        "knex", "prisma", "typeorm", "openssl", "letsencrypt", "cloudflare", "fly.io", "heroku",
        "vercel", "aws lambda", "ecs", "fargate", "gcp", "azure", "consul", "vault", "istio"]
COMP = ["client", "server", "worker", "queue", "cache", "session", "config", "router", "handler",
        "middleware", "migration", "schema", "pipeline", "consumer", "producer", "scheduler",
        "uploader", "parser", "renderer", "limiter", "auth", "login", "checkout", "payment",
        "invoice", "report", "dashboard", "notification", "webhook", "search", "index", "build",
        "deploy", "release", "test", "lint", "theme", "settings", "socket", "connection", "pool",
        "retry", "backoff", "timeout", "lockfile", "container", "volume", "certificate", "proxy",
        "gateway", "token", "cookie", "cors", "upload", "download", "export", "import", "sync",
        "state", "store", "reducer", "hook", "component", "page", "layout", "font", "image",
        "thumbnail", "job", "cron", "batch", "stream", "topic", "partition", "offset", "lag",
        "replica", "shard", "backup", "restore", "log", "metric", "trace", "alert", "disk",
        "memory", "cpu", "thread", "lock", "mutex", "channel", "listener", "emitter", "event"]
ISSUES = ["times out", "fails intermittently", "returns 500", "leaks memory", "is slow",
          "crashes on startup", "drops messages", "retries forever", "never reconnects",
          "logs a warning on every request", "hangs", "uses too much CPU", "returns stale data",
          "rejects valid input", "double-counts", "loses the session", "breaks on Windows",
          "fails in CI only", "throws on empty input", "deadlocks under load",
          "ignores the config", "does not start after the upgrade", "is flaky",
          "stops after a while", "fills the disk", "sends duplicate emails",
          "shows the wrong timezone", "returns 404 after the deploy", "loses updates",
          "blocks the event loop", "spikes latency at midnight", "reports the wrong version"]
WHEN = ["since yesterday", "after the last deploy", "on staging", "in production",
        "only on my machine", "after the dependency bump", "when the network drops",
        "under load", "on the first request", "after a restart", "every few hours",
        "since we moved to the new cluster", "on Mondays", "in the nightly job", ""]
CAUSES = ["{ident} is never reset", "the timeout is shorter than the slowest call",
          "the config still points to the old host", "a race between {ident} and {ident2}",
          "the cache key ignores the {comp}", "the retry loop has no backoff",
          "the index on {table}.{col} is missing", "{ENV} is not set in that environment",
          "the lockfile is out of sync with the manifest", "the worker pool is too small",
          "the {comp} is created per request instead of once", "an exception is swallowed in "
          "{file}", "the connection is not returned to the pool on error",
          "the listener is added again on every {comp}", "two versions of {pkg} are installed",
          "the healthcheck hits a route that needs auth", "the buffer grows without a limit",
          "the migration runs before the schema exists", "daylight saving shifts the cron",
          "the {comp} reads the env at import time", "the proxy strips the header"]
FIXES = ["added a guard in {file}", "raised the limit to {n}", "moved {ident} into {file}",
         "pinned {pkg} to {ver}", "added the missing index in a migration",
         "reset {ident} on every {comp}", "added exponential backoff with jitter",
         "made the handler idempotent", "removed the listener on close",
         "set {ENV} in the deployment manifest", "switched to a shared {comp}",
         "added a test that reproduces it", "bumped {pkg} to {ver} and regenerated the lockfile",
         "moved the work to a background {comp}", "capped the buffer at {n} entries",
         "read the setting lazily", "returned the connection in a finally block"]
ERRORS = ["Error: connect ECONNREFUSED 127.0.0.1:{port}",
          "TypeError: Cannot read properties of undefined (reading '{ident}')",
          "error: failed to push some refs to 'origin'",
          "ModuleNotFoundError: No module named '{mod}'",
          "Error: ENOENT: no such file or directory, open '{file}'",
          "Error: listen EADDRINUSE: address already in use :::{port}",
          "FATAL: password authentication failed for user \"{user}\"",
          "Killed (exit code 137, OOMKilled)", "SyntaxError: Unexpected token '<'",
          "npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree",
          "ERROR: Could not find a version that satisfies the requirement {pkg}=={ver}",
          "panic: runtime error: index out of range [3] with length 3",
          "error[E0308]: mismatched types\n  --> {file}:{n}:9", "Segmentation fault (core dumped)",
          "x509: certificate signed by unknown authority", "read: connection reset by peer",
          "context deadline exceeded", "accept: too many open files",
          "HTTP 429 Too Many Requests", "502 Bad Gateway", "Back-off restarting failed container",
          "Failed to pull image \"{pkg}:{ver}\": ImagePullBackOff",
          "git@github.com: Permission denied (publickey).",
          "fatal: refusing to merge unrelated histories",
          "CONFLICT (content): Merge conflict in {file}",
          "AssertionError: expected {n} to equal {n2}", "Error: Timeout of 2000ms exceeded.",
          "ERROR:  deadlock detected", "ERROR:  duplicate key value violates unique constraint "
          "\"{table}_pkey\"", "ERROR:  relation \"{table}\" does not exist",
          "npm WARN deprecated {pkg}@{ver}: this version is no longer supported",
          "Warning: Each child in a list should have a unique \"key\" prop.",
          "RuntimeError: Event loop is closed", "redis.exceptions.ConnectionError: Error 111 "
          "connecting to {host}:6379. Connection refused.",
          "WebSocket connection to 'wss://{host}/ws' failed: Error during WebSocket handshake",
          "java.lang.OutOfMemoryError: Java heap space",
          "Could not resolve all files for configuration ':app:debugRuntimeClasspath'.",
          "error TS2339: Property '{ident}' does not exist on type '{Type}'.",
          "error TS7006: Parameter '{ident}' implicitly has an 'any' type.",
          "E   assert {n} == {n2}", "FAILED tests/test_{comp}.py::test_{comp2} - {exc}",
          "Error: Invalid value for variable \"{ident}\"", "Error: cycle detected in {comp}",
          "kafka: client has run out of available brokers to talk to",
          "ssl.SSLCertVerificationError: certificate verify failed: certificate has expired",
          "OSError: [Errno 28] No space left on device", "Exceeded max retries ({n})"]
EXC = ["AssertionError", "KeyError: 'id'", "TimeoutError", "ValueError: invalid literal",
       "AttributeError: 'NoneType' object has no attribute 'get'", "ConnectionError"]
CMDS = ["npm test", "npm run build", "npm run lint", "pnpm install", "pnpm test", "yarn build",
        "npx vitest run", "npx jest --runInBand", "npx playwright test", "npx tsc --noEmit",
        "pytest -q", "pytest -x tests/test_{comp}.py", "python manage.py migrate",
        "alembic upgrade head", "poetry install", "pip install -r requirements.txt",
        "go test ./...", "go build ./cmd/{comp}", "cargo build --release", "cargo test",
        "cargo clippy", "./gradlew build", "./gradlew test", "mvn -q package",
        "docker build -t {proj}:{ver} .", "docker compose up -d", "docker compose logs {comp}",
        "docker ps", "kubectl get pods -n {env}", "kubectl describe pod {proj}-{hex}",
        "kubectl logs deploy/{proj} -n {env}", "helm upgrade --install {proj} charts/{proj}",
        "terraform plan", "terraform apply", "terraform init -upgrade", "ansible-playbook "
        "site.yml -l {env}", "git status", "git pull --rebase", "git push origin HEAD",
        "git log --oneline -10", "git merge origin/main", "git cherry-pick {hex}",
        "gh pr create --fill", "gh run list --limit 5", "curl -sS https://{host}/health",
        "curl -I https://{host}/", "psql -c 'select count(*) from {table}'",
        "redis-cli INFO stats", "systemctl status {proj}", "journalctl -u {proj} --since today",
        "df -h", "free -m", "top -bn1 | head -20", "openssl s_client -connect {host}:443",
        "nslookup {host}", "make", "make test", "make deploy ENV={env}"]
TABLES = ["users", "orders", "events", "sessions", "payments", "invoices", "accounts",
          "products", "jobs", "audit_log", "messages", "subscriptions", "teams", "files"]
COLS = ["created_at", "updated_at", "user_id", "account_id", "status", "email", "tenant_id",
        "external_id", "deleted_at", "type"]
PKGS = ["axios", "lodash", "react-dom", "express", "zod", "prisma", "requests", "urllib3",
        "pydantic", "sqlalchemy", "tokio", "serde", "reqwest", "gin", "cobra", "okhttp",
        "retrofit", "typescript", "esbuild", "vite", "jest", "webpack", "ws", "socket.io",
        "ioredis", "pg", "mysql2", "boto3", "celery", "uvicorn", "gunicorn", "date-fns"]
ENVS = ["staging", "prod", "dev", "qa", "preview"]
ENV_VARS = ["DATABASE_URL", "REDIS_URL", "API_BASE_URL", "JWT_SECRET_NAME", "LOG_LEVEL",
            "SENTRY_DSN_NAME", "S3_BUCKET", "FEATURE_FLAGS", "PORT", "NODE_ENV", "WORKERS",
            "KAFKA_BROKERS", "SMTP_PORT", "CACHE_TTL", "TZ"]
STATES = ["started", "stopped", "flushed", "connected", "retrying", "ready", "evicted",
          "rebalanced", "committed"]
LEVELS = ["INFO", "INFO", "INFO", "DEBUG", "DEBUG", "WARN", "ERROR"]


class Vocab:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def ident(self) -> str:
        a, b = self.rng.sample(COMP, 2)
        style = self.rng.randrange(3)
        if style == 0:
            return a + b.title()
        if style == 1:
            return f"{a}_{b}"
        return self.rng.choice(["get", "set", "load", "handle", "create", "parse", "flush",
                                "on", "is", "build"]) + a.title() + b.title()

    def file(self) -> str:
        a, b = self.rng.sample(COMP, 2)
        return self.rng.choice([f"src/{a}/{b}.ts", f"src/{a}/{b}.tsx", f"app/{a}/{b}.py",
                                f"internal/{a}/{b}.go", f"src/{a}_{b}.rs", f"lib/{a}/{b}.js",
                                f"tests/{a}.test.ts", f"tests/test_{a}_{b}.py",
                                f"config/{a}.yaml", f"deploy/{a}.conf", f"k8s/{a}.yaml",
                                f"src/main/kotlin/{a}/{b.title()}.kt"])

    def fill(self, template: str) -> str:
        r = self.rng
        slots = {
            "ident": self.ident(), "ident2": self.ident(), "file": self.file(),
            "comp": r.choice(COMP), "comp2": r.choice(COMP), "tech": r.choice(TECH),
            "table": r.choice(TABLES), "col": r.choice(COLS), "pkg": r.choice(PKGS),
            "ver": f"{r.randint(0, 9)}.{r.randint(0, 30)}.{r.randint(0, 12)}",
            "n": str(r.choice([3, 5, 10, 30, 50, 100, 250, 1000, 4096])),
            "n2": str(r.randint(0, 99)), "port": str(r.choice([3000, 5432, 6379, 8080, 9092,
                                                              5672, 27017, 8000, 4000])),
            "ENV": r.choice(ENV_VARS), "env": r.choice(ENVS), "proj": r.choice(PROJECTS),
            "host": f"{r.choice(COMP)}.{r.choice(['internal', 'example.com', 'acme.io'])}",
            "user": r.choice(["app", "postgres", "deploy", "ci"]), "mod": r.choice(COMP),
            "hex": f"{r.getrandbits(28):07x}", "Type": r.choice(COMP).title() + "Props",
            "exc": r.choice(EXC),
        }
        return template.format(**slots)

    def log(self, n: int) -> str:
        r = self.rng
        out = []
        for i in range(n):
            comp, comp2 = r.choice(COMP), r.choice(COMP)
            lvl = r.choice(LEVELS)
            if lvl in ("WARN", "ERROR") and r.random() < 0.5:
                msg = self.fill(r.choice(ERRORS)).split("\n")[0]
            else:
                msg = (f"{r.choice(['GET', 'POST', 'PUT', 'DELETE'])} /api/{comp}s/"
                       f"{r.randint(1, 99999)} {r.choice([200, 200, 201, 204, 304, 400, 404])} "
                       f"in {r.randint(1, 900)}ms" if r.random() < 0.5 else
                       f"{comp} {r.choice(STATES)} "
                       f"{comp2}={r.randint(0, 5000)}")
            out.append(f"2026-{r.randint(6, 12):02d}-{r.randint(1, 28):02d}T{r.randint(0, 23):02d}:"
                       f"{r.randint(0, 59):02d}:{r.randint(0, 59):02d}.{i % 1000:03d}Z {lvl:5} "
                       f"[{comp}] {msg}")
        return "\n".join(out)

    def code(self, n: int) -> str:
        r = self.rng
        lines: list[str] = []
        while len(lines) < n:
            a, b, c = self.ident(), self.ident(), self.ident()
            t = r.choice(TECH)
            lines += [f"// {r.choice(COMP)} {r.choice(['for', 'over', 'with', 'before'])} the "
                      f"{r.choice(COMP)} ({t})",
                      f"export async function {a}({r.choice(COMP)}: {r.choice(COMP).title()}) {{",
                      f"  const {b} = await {c}({r.choice(COMP)}, {{ timeout: "
                      f"{r.choice([1000, 5000, 30000])} }});",
                      f"  if (!{b}) throw new Error('{r.choice(COMP)} {r.choice(ISSUES)}');",
                      f"  return {b}.{r.choice(COMP)};", "}", ""]
        return "\n".join(lines[:n])

    def tests(self, fail: bool) -> str:
        r = self.rng
        rows = [f" {'✓' if not fail or i else '✗'} tests/{r.choice(COMP)}.test.ts "
                f"({r.randint(2, 30)} tests) {r.randint(5, 1500)}ms" for i in range(r.randint(3, 14))]
        if fail:
            rows.append(f"\n FAIL tests/{r.choice(COMP)}.test.ts > {r.choice(COMP)} "
                        f"{r.choice(ISSUES)}\n{self.fill(r.choice(ERRORS))}")
        total = r.randint(20, 600)
        failed = r.randint(1, 4) if fail else 0
        rows.append(f"\n Tests  {failed} failed | {total} passed ({total + failed})" if fail else
                    f"\n Tests  {total} passed ({total})")
        return "\n".join(rows)


def _turn(v: Vocab) -> list[Step]:
    r = v.rng
    k = r.randrange(10)
    tech, comp = r.choice(TECH), r.choice(COMP)
    if k == 0:  # a bug report, an investigation, a diagnosis
        cmd = v.fill(r.choice(CMDS))
        return [("u", None, v.fill(f"The {tech} {{comp}} {r.choice(ISSUES)} {r.choice(WHEN)}. "
                                   "Can you look into it?")),
                ("c", None, r.choice([None, "Let me reproduce it first."]),
                 [("bash", {"command": cmd})]),
                ("r", None, v.log(r.randint(3, 20)) + "\n" + v.fill(r.choice(ERRORS)),
                 r.random() < 0.6),
                ("a", None, v.fill(f"The {comp} {r.choice(ISSUES)} because "
                                   f"{r.choice(CAUSES)}. I {r.choice(FIXES)}."))]
    if k == 1:  # a command with routine output
        cmd = v.fill(r.choice(CMDS))
        out = r.choice([v.tests(False), v.tests(True), v.log(r.randint(10, 300)),
                        f"exit status 0\n{comp} ok", v.fill(r.choice(ERRORS))])
        return [("c", None, None, [("bash", {"command": cmd})]), ("r", None, out, False),
                ("a", None, r.choice(["Done.", "That passes.", "Same failure as before.",
                                      v.fill("The {comp} is fine now."), "Still red."]))]
    if k == 2:  # a file read
        f = v.file()
        return [("c", None, None, [("read", {"path": f})]),
                ("r", None, v.code(r.randint(30, 400)), False)]
    if k == 3:  # a config or code edit
        f = v.file()
        a, b = v.ident(), v.ident()
        return [("c", None, v.fill(f"I'll change the {comp} in {{file}}."),
                 [("edit", {"path": f, "edits": [{"oldText": f"{a} = {r.randint(1, 99)}",
                                                  "newText": f"{b} = {r.randint(100, 9999)}"}]})]),
                ("r", None, f"Successfully replaced 1 block(s) in {f}.", False)]
    if k == 4:  # a question and its answer
        return [("u", None, v.fill(r.choice([
                    "How do we configure the {comp} for {tech}?",
                    "Why does the {comp} use {ident}?", "What is the difference between "
                    "{ident} and {ident2}?", "Should the {comp} retry on {ENV} errors?",
                    "Where is the {comp} timeout set?", "Can we drop {pkg}?",
                    "How do I run the {comp} tests locally?"]))),
                ("a", None, v.fill(r.choice([
                    "The {comp} reads {ENV} at startup; set it in the {env} manifest and "
                    "restart. {ident} falls back to {n} when it is missing.",
                    "{ident} wraps {ident2} so the {comp} can be retried without side effects; "
                    "see {file}.", "Run `{cmd}` from the repository root; it starts {tech} in "
                    "docker first.", "Yes: {pkg} is only used by {file}, and {tech} covers it.",
                    "The timeout is {n} ms in {file}; the {comp} overrides it per request."
                ]).replace("{cmd}", r.choice(CMDS))))]
    if k == 5:  # a write
        f = v.file()
        body = v.code(r.randint(10, 80))
        return [("c", None, None, [("write", {"path": f, "content": body})]),
                ("r", None, f"Successfully wrote {len(body)} bytes to {f}", False)]
    if k == 6:  # grep
        pat = v.ident()
        hits = "\n".join(f"{v.file()}:{r.randint(1, 400)}:  {pat}({r.choice(COMP)})"
                         for _ in range(r.randint(1, 12)))
        return [("c", None, None, [("grep", {"pattern": pat, "path": "src"})]),
                ("r", None, hits, False)]
    if k == 7:  # a user's own bash run
        cmd = v.fill(r.choice(CMDS))
        return [("b", None, cmd, r.choice([v.log(r.randint(2, 40)), v.tests(r.random() < 0.3),
                                           v.fill(r.choice(ERRORS))]), r.choice([0, 0, 1]))]
    if k == 8:  # an explanation after work
        verb = r.choice(["retries", "caches", "batches", "streams", "validates", "logs"])
        return [("a", None, v.fill(f"Summary: the {comp} now {verb} "
                                   f"{{comp2}} through {{ident}}; {r.choice(FIXES)}. The {tech} "
                                   "tests pass."))]
    return [("u", None, v.fill(r.choice(["run the tests", "commit it", "deploy to {env}",
                                         "open a PR", "ok", "thanks", "revert that",
                                         "check the logs", "bump {pkg}", "try again"]))),
            ("a", None, r.choice(["Done.", "Committed.", "Opened the pull request.",
                                  "Deployed.", "Reverted."]))]


def generate(out: Path, size: int, seed: int = 37) -> dict[str, Any]:
    """Generate (or reuse, for the same size, seed and version) the history under out/agent."""
    manifest = out / "manifest.json"
    if manifest.exists():
        m: dict[str, Any] = orjson.loads(manifest.read_bytes())
        if m.get("size") == size and m.get("seed") == seed and m.get("version") == VERSION:
            return m
    import shutil

    shutil.rmtree(out, ignore_errors=True)
    sessions = out / "agent" / "sessions"
    sessions.mkdir(parents=True)
    rng = random.Random(seed)
    v = Vocab(rng)
    total = n = 0
    t0 = time.perf_counter()
    while total < size:
        steps: list[Step] = []
        for _ in range(int(rng.lognormvariate(3.4, 0.8)) + 3):
            steps += _turn(v)
        s = Session(f"hist-{n:05d}", "py", f"/bench/work/{rng.choice(PROJECTS)}",
                    rng.randrange(-150, 100), steps)
        path = Path(_write_py(s, sessions, routine=False)["path"])
        total += path.stat().st_size
        n += 1
    m = {"size": size, "seed": seed, "version": VERSION, "sessions": n, "bytes": total,
         "agent_dir": str((out / "agent").resolve()), "seconds": round(time.perf_counter() - t0)}
    manifest.write_bytes(orjson.dumps(m))
    return m


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--size", default="250M")
    ap.add_argument("--seed", type=int, default=37)
    args = ap.parse_args()
    m = generate(args.out, parse_size(args.size), args.seed)
    print(f"{m['bytes'] / 1e6:.1f} MB, {m['sessions']} sessions in {m['seconds']} s")


if __name__ == "__main__":
    main()
