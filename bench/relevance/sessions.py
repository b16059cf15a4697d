"""The sessions of the three-style relevance set (issue 37): developer work as Pi records it.

Each session is a script of steps; `bench/relevance/write.py` writes half of them with this
bench's own JSONL writer and half with Pi's own SessionManager (tests/piwriter), and returns the
entry id of every marked step. The queries (`bench/relevance/queries.py`) name their acceptable
answers by (session key, mark). The texts were written first, the queries afterwards from a
memory of them; neither was tuned to any engine's results.

Steps:
    ("u", mark, text)                  user prompt
    ("a", mark, text)                  assistant reply (text only)
    ("c", mark, text | None, calls)    assistant turn with tool calls: [(tool, args), ...]
    ("r", mark, output, is_error)      the result of the next pending call, in call order
    ("b", mark, command, output, code) a `!` bash run of the user
    ("n", mark, name)                  session name
A mark of None means the step is context, never an answer.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class Session(NamedTuple):
    key: str
    writer: str  # "py": this bench's writer; "pi": Pi's own SessionManager
    cwd: str
    day: int  # days after 2026-10-01 (the session's first timestamp)
    steps: list[tuple[Any, ...]]


W = "/bench/work"

SESSIONS: list[Session] = [
    Session("ws-sleep", "py", f"{W}/dashboard-web", 3, [
        ("u", "q", "The dashboard stops updating after my laptop wakes from sleep. The websocket "
         "in src/net/ws-client.ts never reconnects, I have to reload the page."),
        ("c", "read", "Let me look at the reconnect logic.",
         [("read", {"path": "src/net/ws-client.ts"})]),
        ("r", "read_r", "export class WsClient {\n  private retryCount = 0;\n  private socket?: "
         "WebSocket;\n  connect(): void {\n    this.socket = new WebSocket(this.url);\n    "
         "this.socket.onclose = (ev) => {\n      if (ev.code === 1000) return;\n      if "
         "(this.retryCount >= MAX_RETRIES) return;\n      this.retryCount++;\n      setTimeout(() "
         "=> this.connect(), 1000 * this.retryCount);\n    };\n  }\n}\n", False),
        ("a", "ans", "Found it: retryCount is never reset after a successful open, so after a "
         "few sleeps the client reaches MAX_RETRIES (5) and silently gives up. I'll reset it in "
         "onopen and also listen for the browser's online event."),
        ("c", None, None, [("edit", {"path": "src/net/ws-client.ts", "edits": [{
            "oldText": "this.socket = new WebSocket(this.url);",
            "newText": "this.socket = new WebSocket(this.url);\n    this.socket.onopen = () => "
                       "{ this.retryCount = 0; };"}]})]),
        ("r", None, "Successfully replaced 1 block(s) in src/net/ws-client.ts.", False),
        ("c", None, None, [("bash", {"command": "npx vitest run src/net/ws-client.test.ts"})]),
        ("r", None, " ✓ src/net/ws-client.test.ts (6 tests) 412ms\n Test Files  1 passed (1)\n"
         "      Tests  6 passed (6)", False),
        ("a", None, "The counter now resets on every successful open and the client connects "
         "again when the window fires `online`."),
        ("n", None, "websocket reconnect after sleep"),
    ]),
    Session("pnpm-lock", "pi", f"{W}/api-gateway", 6, [
        ("u", None, "CI is red on main: the build job fails at pnpm install. Did someone change "
         "package.json without updating the lockfile?"),
        ("c", "log", None, [("bash", {"command": "git log --oneline -3 -- package.json "
                                                 "pnpm-lock.yaml"})]),
        ("r", "log_r", "e41c9a2 chore(deps): bump fastify to 4.28.1\n7b0d3f1 feat: add rate "
         "limit plugin\n90aa6c4 chore: update lockfile", False),
        ("c", "inst", None, [("bash", {"command": "pnpm install --frozen-lockfile"})]),
        ("r", "inst_r", " ERR_PNPM_OUTDATED_LOCKFILE  Cannot install with \"frozen-lockfile\" "
         "because pnpm-lock.yaml is not up to date with package.json\n\nNote that in CI "
         "environments this setting is true by default. If you still need to run install in "
         "such cases, use \"pnpm install --no-frozen-lockfile\"\n\n  Failure reason:\n  "
         "specifiers in the lockfile ({\"fastify\":\"4.26.2\"}) don't match specs in "
         "package.json ({\"fastify\":\"4.28.1\"})", True),
        ("a", "ans", "Commit e41c9a2 bumped fastify to 4.28.1 in package.json but the lockfile "
         "still pins 4.26.2. I regenerated pnpm-lock.yaml with `pnpm install` and committed it, "
         "so the next CI run should pass."),
        ("b", None, "gh run watch", "✓ main CI · 8132456781\nTriggered via push about 2 minutes "
         "ago\n✓ install (1m12s)\n✓ test (3m40s)", 0),
    ]),
    Session("vitest-3ds", "py", f"{W}/checkout-app", 9, [
        ("u", None, "tests/e2e/payment.spec.ts is flaky in CI, roughly one run in five fails. "
         "Locally it always passes."),
        ("c", "run", None, [("bash", {"command": "npx vitest run tests/e2e/payment.spec.ts "
                                                 "--reporter=verbose"})]),
        ("r", "run_r", "FAIL tests/e2e/payment.spec.ts > payment flow > confirms the order "
         "after 3DS\nError: Test timed out in 5000ms.\nIf this is a long-running test, pass a "
         "timeout value as the last argument or configure it globally with \"testTimeout\".\n ❯ "
         "tests/e2e/payment.spec.ts:48:3", True),
        ("a", "why", "The 3DS step waits on a mocked iframe that takes up to 6 s under load, "
         "longer than the default 5000 ms. I'll raise testTimeout for the e2e project only, in "
         "vitest.config.ts, instead of per test."),
        ("c", "edit", None, [("edit", {"path": "vitest.config.ts", "edits": [{
            "oldText": "environment: 'jsdom',",
            "newText": "environment: 'jsdom',\n      testTimeout: 20_000,"}]})]),
        ("r", None, "Successfully replaced 1 block(s) in vitest.config.ts.", False),
        ("a", "done", "Done: the e2e project in vitest.config.ts now has testTimeout 20_000; "
         "unit tests keep the 5 s default."),
    ]),
    Session("knex-currency", "pi", f"{W}/billing-service", 12, [
        ("u", None, "Run the migrations against the staging database before we deploy."),
        ("c", "mig", None, [("bash", {"command": "npm run migrate -- --env staging"})]),
        ("r", "mig_r", "> billing-service@2.4.0 migrate\n> knex migrate:latest --env staging\n\n"
         "migration file \"20261118_add_invoice_currency.js\" failed\nmigration failed with "
         "error: alter table \"invoices\" add column \"currency\" varchar(3) not null default "
         "'EUR' - column \"currency\" of relation \"invoices\" already exists", True),
        ("a", "why", "The staging DB already has invoices.currency: someone added it by hand "
         "during the incident last week. I'll guard the migration with hasColumn so it can run "
         "twice."),
        ("c", "edit", None, [("edit", {"path": "migrations/20261118_add_invoice_currency.js",
                                       "edits": [{
            "oldText": "return knex.schema.alterTable('invoices', (t) => {",
            "newText": "if (await knex.schema.hasColumn('invoices', 'currency')) return;\n  "
                       "return knex.schema.alterTable('invoices', (t) => {"}]})]),
        ("r", None, "Successfully replaced 1 block(s) in "
         "migrations/20261118_add_invoice_currency.js.", False),
        ("c", None, None, [("bash", {"command": "npm run migrate -- --env staging"})]),
        ("r", None, "Batch 14 run: 2 migrations", False),
        ("a", None, "Staging is migrated (batch 14, 2 migrations)."),
    ]),
    Session("es-9200", "py", f"{W}/search-api", 14, [
        ("b", "up", "docker compose up -d", "[+] Running 2/3\n ✔ Network search-api_default  "
         "Created\n ✔ Container search-api-redis-1  Started\n ✘ Container "
         "search-api-elasticsearch-1  Error\nError response from daemon: driver failed "
         "programming external connectivity on endpoint search-api-elasticsearch-1: Bind for "
         "0.0.0.0:9200 failed: port is already allocated", 1),
        ("u", "q", "compose cannot start elasticsearch, something already holds 9200. Find out "
         "what."),
        ("c", "lsof", None, [("bash", {"command": "sudo lsof -iTCP:9200 -sTCP:LISTEN"})]),
        ("r", "lsof_r", "COMMAND   PID USER   FD   TYPE DEVICE SIZE/OFF NODE NAME\njava    "
         "48211 dev   312u  IPv6 981245      0t0  TCP *:9200 (LISTEN)", False),
        ("a", "ans", "PID 48211 is an old Elasticsearch started outside compose (java, from "
         "~/opt/elasticsearch-8.11). Stop it with `kill 48211`, or map the container to 9201 in "
         "docker-compose.override.yml."),
        ("u", None, "map it to 9201 instead"),
        ("c", None, None, [("write", {"path": "docker-compose.override.yml", "content":
                                      "services:\n  elasticsearch:\n    ports:\n      - "
                                      "\"9201:9200\"\n"})]),
        ("r", None, "Successfully wrote 64 bytes to docker-compose.override.yml", False),
    ]),
    Session("rebase-sync", "pi", f"{W}/mobile-app", 17, [
        ("u", "q", "Rebase my branch feature/offline-sync onto main, there will be conflicts in "
         "the sync queue."),
        ("c", "rb", None, [("bash", {"command": "git fetch origin && git rebase origin/main"})]),
        ("r", "rb_r", "Auto-merging src/sync/SyncQueue.kt\nCONFLICT (content): Merge conflict in "
         "src/sync/SyncQueue.kt\nerror: could not apply 5d2e8a1... Persist pending mutations to "
         "Room\nhint: Resolve all conflicts manually, mark them as resolved with\nhint: \"git "
         "add/rm <conflicted_files>\", then run \"git rebase --continue\".", True),
        ("c", None, None, [("read", {"path": "src/sync/SyncQueue.kt"})]),
        ("r", None, "<<<<<<< HEAD\n    private val pending = ArrayDeque<Mutation>()\n    fun "
         "enqueue(m: Mutation) { pending.addLast(m); flushIfOnline() }\n=======\n    private val "
         "dao: PendingMutationDao = db.pendingMutationDao()\n    suspend fun enqueue(m: Mutation) "
         "{ dao.insert(m.toEntity()); flushIfOnline() }\n>>>>>>> 5d2e8a1 (Persist pending "
         "mutations to Room)", False),
        ("a", "res", "main made enqueue call flushIfOnline, and your commit moved the queue into "
         "Room. I kept the Room-backed queue together with main's flushIfOnline call, then "
         "continued the rebase."),
        ("c", None, None, [("bash", {"command": "git add src/sync/SyncQueue.kt && "
                                                "GIT_EDITOR=true git rebase --continue"})]),
        ("r", None, "Successfully rebased and updated refs/heads/feature/offline-sync.", False),
    ]),
    Session("smtp-crashloop", "py", f"{W}/notifications", 20, [
        ("u", "q", "notifications-worker is crashlooping in prod after the deploy an hour ago"),
        ("c", "logs", None, [("bash", {"command": "kubectl logs deploy/notifications-worker -n "
                                                  "prod --previous --tail=20"})]),
        ("r", "logs_r", "2026-11-21T09:14:02Z INFO  starting notifications-worker v3.8.0\n"
         "2026-11-21T09:14:02Z ERROR config: required environment variable SMTP_RELAY_HOST is "
         "not set\npanic: invalid configuration\n\ngoroutine 1 [running]:\nmain.main()\n\t"
         "/src/cmd/worker/main.go:41 +0x2a5", False),
        ("a", "why", "The new release reads SMTP_RELAY_HOST but the prod ConfigMap only has the "
         "old SMTP_HOST key. Either add the key to k8s/prod/configmap.yaml or fall back to "
         "SMTP_HOST in internal/config/env.go."),
        ("u", "ask", "add the fallback in code, we'll clean the configmap later"),
        ("c", "edit", None, [("edit", {"path": "internal/config/env.go", "edits": [{
            "oldText": "host := os.Getenv(\"SMTP_RELAY_HOST\")",
            "newText": "host := os.Getenv(\"SMTP_RELAY_HOST\")\n\tif host == \"\" {\n\t\thost = "
                       "os.Getenv(\"SMTP_HOST\") // pre-3.8 configmaps\n\t}"}]})]),
        ("r", None, "Successfully replaced 1 block(s) in internal/config/env.go.", False),
        ("c", "roll", None, [("bash", {"command": "kubectl rollout restart "
                                                  "deploy/notifications-worker -n prod && "
                                                  "kubectl rollout status "
                                                  "deploy/notifications-worker -n prod"})]),
        ("r", "roll_r", "deployment.apps/notifications-worker restarted\nWaiting for deployment "
         "\"notifications-worker\" rollout to finish: 1 of 3 updated replicas are available...\n"
         "deployment \"notifications-worker\" successfully rolled out", False),
    ]),
    Session("rust-borrow", "pi", f"{W}/ingest-rs", 23, [
        ("u", None, "cargo build fails after my refactor of the batcher, can you fix it?"),
        ("c", "build", None, [("bash", {"command": "cargo build"})]),
        ("r", "build_r", "   Compiling ingest v0.6.0 (/bench/work/ingest-rs)\nerror[E0499]: "
         "cannot borrow `self.pending` as mutable more than once at a time\n  --> "
         "src/batcher.rs:57:25\n   |\n56 |         let first = self.pending.first_mut()"
         ".unwrap();\n   |                     ------------ first mutable borrow occurs here\n"
         "57 |         for item in self.pending.drain(..) {\n   |                     "
         "^^^^^^^^^^^^ second mutable borrow occurs here\n58 |             first.merge(&item);\n"
         "   |             ----- first borrow later used here\n\nerror: could not compile "
         "`ingest` (lib) due to 1 previous error", True),
        ("a", "fix", "The loop drains `self.pending` while `first` still borrows it. I'll take "
         "the vector out with std::mem::take, merge into its first element, and push the merged "
         "batch back."),
        ("c", "edit", None, [("edit", {"path": "src/batcher.rs", "edits": [{
            "oldText": "let first = self.pending.first_mut().unwrap();",
            "newText": "let mut items = std::mem::take(&mut self.pending);\n        let mut "
                       "first = items.remove(0);"}]})]),
        ("r", None, "Successfully replaced 1 block(s) in src/batcher.rs.", False),
        ("c", None, None, [("bash", {"command": "cargo test"})]),
        ("r", None, "running 14 tests\n..............\ntest result: ok. 14 passed; 0 failed; 0 "
         "ignored; 0 measured; 0 filtered out; finished in 0.31s", False),
    ]),
    Session("nginx-413", "py", f"{W}/media-portal", 26, [
        ("u", "q", "Users get 413 Request Entity Too Large when uploading videos over 50 MB"),
        ("c", "grep", None, [("grep", {"pattern": "client_max_body_size", "path": "deploy/"})]),
        ("r", "grep_r", "deploy/nginx/media.conf:14:    client_max_body_size 50m;", False),
        ("a", "ans", "nginx caps the body at 50m in deploy/nginx/media.conf. I'll raise it to 2g "
         "for the /upload location only, and turn proxy_request_buffering off so nginx streams "
         "the body to the app instead of spooling it to disk."),
        ("c", None, None, [("edit", {"path": "deploy/nginx/media.conf", "edits": [{
            "oldText": "    client_max_body_size 50m;",
            "newText": "    client_max_body_size 50m;\n    location /upload {\n        "
                       "client_max_body_size 2g;\n        proxy_request_buffering off;\n        "
                       "proxy_pass http://media_app;\n    }"}]})]),
        ("r", None, "Successfully replaced 1 block(s) in deploy/nginx/media.conf.", False),
        ("b", "reload", "sudo nginx -t && sudo systemctl reload nginx", "nginx: the "
         "configuration file /etc/nginx/nginx.conf syntax is ok\nnginx: configuration file "
         "/etc/nginx/nginx.conf test is successful", 0),
    ]),
    Session("etl-import", "pi", f"{W}/etl-pipeline", 29, [
        ("u", "q", "pytest crashes during collection since I moved the loaders into a package"),
        ("c", "pytest", None, [("bash", {"command": "pytest -q"})]),
        ("r", "pytest_r", "ImportError while importing test module "
         "'/bench/work/etl-pipeline/tests/test_loaders.py'.\nHint: make sure your test "
         "modules/packages have valid Python names.\nTraceback:\ntests/test_loaders.py:3: in "
         "<module>\n    from etl.loaders.csv_loader import CsvLoader\nE   ModuleNotFoundError: "
         "No module named 'etl.loaders'\n=========================== short test summary info "
         "============================\nERROR tests/test_loaders.py\n!!!!!!!!!!!!!!!!!!!! "
         "Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!", True),
        ("c", None, None, [("ls", {"path": "src/etl/loaders"})]),
        ("r", None, "csv_loader.py\nparquet_loader.py\nbase.py", False),
        ("a", "why", "src/etl/loaders has no __init__.py, and setuptools' find_packages skips "
         "directories without one, so the installed package lacks etl.loaders. Adding the "
         "__init__.py and reinstalling in editable mode fixes collection."),
        ("c", None, None, [("write", {"path": "src/etl/loaders/__init__.py", "content":
                                      "from .base import Loader\nfrom .csv_loader import "
                                      "CsvLoader\nfrom .parquet_loader import ParquetLoader\n"})]),
        ("r", None, "Successfully wrote 108 bytes to src/etl/loaders/__init__.py", False),
        ("c", None, None, [("bash", {"command": "pip install -e . && pytest -q"})]),
        ("r", None, "........................................ [ 85%]\n.......           "
         "                       [100%]\n47 passed in 2.84s", False),
    ]),
    Session("redis-oom", "py", f"{W}/session-cache", 31, [
        ("u", "q", "Redis in staging hit maxmemory overnight and logins started failing with "
         "OOM command not allowed"),
        ("c", "info", None, [("bash", {"command": "redis-cli -h redis-staging INFO memory | "
                                                  "grep -E 'used_memory_human|maxmemory_human|"
                                                  "maxmemory_policy'"})]),
        ("r", "info_r", "used_memory_human:1.98G\nmaxmemory_human:2.00G\n"
         "maxmemory_policy:noeviction", False),
        ("a", "ans", "With maxmemory_policy noeviction Redis refuses writes once it is full, "
         "which is the OOM error on login. Session keys are written without a TTL in "
         "src/session/store.ts (SET without EX), so they never expire. Two fixes: volatile-lru "
         "as the policy, and EX 86400 on every session write."),
        ("c", "edit", None, [("edit", {"path": "src/session/store.ts", "edits": [{
            "oldText": "await redis.set(`sess:${id}`, payload);",
            "newText": "await redis.set(`sess:${id}`, payload, 'EX', SESSION_TTL_SECONDS);"}]})]),
        ("r", None, "Successfully replaced 1 block(s) in src/session/store.ts.", False),
    ]),
    Session("ts-variant", "pi", f"{W}/design-system", 34, [
        ("u", "q", "After upgrading TypeScript to 5.6 the Button component no longer compiles"),
        ("c", "tsc", None, [("bash", {"command": "npx tsc --noEmit -p packages/ui"})]),
        ("r", "tsc_r", "packages/ui/src/Button/Button.tsx(23,5): error TS2322: Type '\"ghost\" | "
         "\"primary\" | \"danger\"' is not assignable to type 'ButtonVariant'.\n  Type "
         "'\"ghost\"' is not assignable to type 'ButtonVariant'.\n\nFound 1 error in "
         "packages/ui/src/Button/Button.tsx:23", True),
        ("a", "why", "ButtonVariant in packages/ui/src/tokens.ts lists only primary and danger; "
         "ghost was added to the props but not to the union. Adding it to ButtonVariant fixes "
         "the type error."),
        ("c", "edit", None, [("edit", {"path": "packages/ui/src/tokens.ts", "edits": [{
            "oldText": "export type ButtonVariant = 'primary' | 'danger';",
            "newText": "export type ButtonVariant = 'primary' | 'danger' | 'ghost';"}]})]),
        ("r", None, "Successfully replaced 1 block(s) in packages/ui/src/tokens.ts.", False),
    ]),
    Session("gha-matrix", "py", f"{W}/cli-tool", 37, [
        ("u", "q", "Set up a GitHub Actions workflow that runs lint and tests on Node 20 and 22 "
         "for every pull request"),
        ("c", "write", None, [("write", {"path": ".github/workflows/ci.yml", "content":
                                         "name: ci\non:\n  pull_request:\n  push:\n    branches: "
                                         "[main]\njobs:\n  test:\n    runs-on: ubuntu-latest\n   "
                                         " strategy:\n      matrix:\n        node: [20, 22]\n    "
                                         "steps:\n      - uses: actions/checkout@v4\n      - "
                                         "uses: actions/setup-node@v4\n        with:\n          "
                                         "node-version: ${{ matrix.node }}\n          cache: npm\n"
                                         "      - run: npm ci\n      - run: npm run lint\n      "
                                         "- run: npm test\n"})]),
        ("r", None, "Successfully wrote 388 bytes to .github/workflows/ci.yml", False),
        ("a", "done", "Added .github/workflows/ci.yml: a matrix over Node 20 and 22, the npm "
         "cache through setup-node, lint then tests on every pull request and on pushes to "
         "main."),
        ("u", "q2", "the Node 22 job fails, what is it"),
        ("c", "log", None, [("bash", {"command": "gh run view --log-failed | tail -n 15"})]),
        ("r", "log_r", "test (22)  Run npm test  > cli-tool@1.3.0 test\ntest (22)  Run npm test  "
         "> node --test test/\ntest (22)  Run npm test  ✖ parses --config relative to cwd "
         "(3.1ms)\ntest (22)  Run npm test    TypeError [ERR_IMPORT_ATTRIBUTE_MISSING]: Module "
         "\"file:///home/runner/work/cli-tool/cli-tool/package.json\" needs an import attribute "
         "of \"type: json\"\ntest (22)  Run npm test  ℹ tests 38\ntest (22)  Run npm test  ℹ "
         "pass 37\ntest (22)  Run npm test  ℹ fail 1", False),
        ("a", "ans2", "Node 22 requires `with { type: 'json' }` on JSON imports. src/version.ts "
         "imports package.json with the old `assert` syntax; switching to `with` works on both "
         "20 and 22."),
    ]),
    Session("go-race", "pi", f"{W}/ratelimiter", 40, [
        ("u", "q", "go test -race reports a data race in the limiter, please look"),
        ("c", "race", None, [("bash", {"command": "go test -race ./limiter/..."})]),
        ("r", "race_r", "==================\nWARNING: DATA RACE\nWrite at 0x00c0000b4018 by "
         "goroutine 9:\n  github.com/acme/ratelimiter/limiter.(*TokenBucket).refill()\n      "
         "/bench/work/ratelimiter/limiter/bucket.go:44 +0x84\nPrevious read at 0x00c0000b4018 by "
         "goroutine 8:\n  github.com/acme/ratelimiter/limiter.(*TokenBucket).Allow()\n      "
         "/bench/work/ratelimiter/limiter/bucket.go:29 +0x3c\n==================\n--- FAIL: "
         "TestConcurrentAllow (0.02s)\n    testing.go:1465: race detected during execution of "
         "test\nFAIL\tgithub.com/acme/ratelimiter/limiter\t0.412s", True),
        ("a", "fix", "refill() writes tokens and lastRefill without the mutex while Allow() "
         "reads them under it. I moved the refill call inside the locked section of Allow and "
         "renamed it refillLocked, since it now assumes the lock is held."),
        ("c", None, None, [("edit", {"path": "limiter/bucket.go", "edits": [{
            "oldText": "\tb.refill()\n\tb.mu.Lock()",
            "newText": "\tb.mu.Lock()\n\tb.refillLocked()"}]})]),
        ("r", None, "Successfully replaced 1 block(s) in limiter/bucket.go.", False),
        ("c", None, None, [("bash", {"command": "go test -race ./limiter/..."})]),
        ("r", None, "ok  \tgithub.com/acme/ratelimiter/limiter\t1.207s", False),
    ]),
    Session("fly-health", "py", f"{W}/booking-api", 43, [
        ("u", "q", "The deploy to production is stuck, the new machines never pass the health "
         "check"),
        ("c", "deploy", None, [("bash", {"command": "fly deploy --app booking-api-prod "
                                                    "--strategy rolling"})]),
        ("r", "deploy_r", "==> Monitoring deployment\n\n 1 desired, 1 placed, 0 healthy, 1 "
         "unhealthy [health checks: 1 total, 1 critical]\nFailed Instances\n\nFailure #1\n\n"
         "Instance  ORIGIN  PROBE        STATUS   REGION\n3d8e17a   app     http_check   critical "
         "ams\n\nRecent Events\nTIMESTAMP            TYPE            MESSAGE\n"
         "2026-11-12T16:02:11Z Health check    GET /health -> connect: connection refused\n"
         "***v42 failed - Failed due to unhealthy allocations - rolling back to job version 41",
         True),
        ("a", "why", "The app listens on 3000 since the Express upgrade (PORT is no longer "
         "read), but fly.toml's internal_port is 8080, so the probe gets connection refused and "
         "the release rolls back to v41. I'll make src/server.ts read process.env.PORT again."),
        ("c", None, None, [("edit", {"path": "src/server.ts", "edits": [{
            "oldText": "app.listen(3000", "newText": "app.listen(Number(process.env.PORT ?? "
                                                     "8080)"}]})]),
        ("r", None, "Successfully replaced 1 block(s) in src/server.ts.", False),
        ("c", None, None, [("bash", {"command": "fly deploy --app booking-api-prod --strategy "
                                                "rolling"})]),
        ("r", None, "v43 deployed successfully\n 1 desired, 1 placed, 1 healthy, 0 unhealthy "
         "[health checks: 1 total, 1 passing]", False),
    ]),
    Session("vite-env", "pi", f"{W}/admin-ui", 45, [
        ("u", "q", "We migrated from webpack to Vite and now every API call goes to "
         "undefined/api/..."),
        ("a", "ans", "Vite only exposes variables prefixed with VITE_ on import.meta.env; "
         "process.env.REACT_APP_API_URL is undefined in the browser bundle. Rename the variable "
         "to VITE_API_URL in .env.production and read import.meta.env.VITE_API_URL in "
         "src/api/client.ts."),
        ("c", "grep", None, [("grep", {"pattern": "REACT_APP_", "path": "src"})]),
        ("r", "grep_r", "src/api/client.ts:3:const BASE = process.env.REACT_APP_API_URL;\n"
         "src/analytics.ts:8:  key: process.env.REACT_APP_SEGMENT_KEY,", False),
        ("c", None, None, [("edit", {"path": "src/api/client.ts", "edits": [{
            "oldText": "const BASE = process.env.REACT_APP_API_URL;",
            "newText": "const BASE = import.meta.env.VITE_API_URL;"}]})]),
        ("r", None, "Successfully replaced 1 block(s) in src/api/client.ts.", False),
        ("a", None, "client.ts and analytics.ts now read import.meta.env; .env.production "
         "defines VITE_API_URL and VITE_SEGMENT_KEY."),
    ]),
    Session("ledger-index", "py", f"{W}/analytics-api", 48, [
        ("u", "q", "The /reports/monthly endpoint takes 12 seconds, can you find out why?"),
        ("c", "explain", None, [("bash", {"command": "psql $DATABASE_URL -c \"EXPLAIN ANALYZE "
                                                     "SELECT account_id, sum(amount) FROM "
                                                     "ledger_entries WHERE booked_at >= "
                                                     "'2026-10-01' GROUP BY account_id\""})]),
        ("r", "explain_r", "HashAggregate  (cost=412877.10..412879.60 rows=200 width=40) (actual "
         "time=11843.2..11843.9 rows=184 loops=1)\n  ->  Seq Scan on ledger_entries  "
         "(cost=0.00..398211.00 rows=2933220 width=14) (actual time=0.02..10377.5 rows=2912004 "
         "loops=1)\n        Filter: (booked_at >= '2026-10-01'::date)\n        Rows Removed by "
         "Filter: 14820113\nPlanning Time: 0.2 ms\nExecution Time: 11844.6 ms", False),
        ("a", "why", "A sequential scan over 17.7M ledger_entries rows: there is no index on "
         "booked_at. An index on (booked_at, account_id) INCLUDE (amount) lets Postgres answer "
         "from the index alone."),
        ("c", "write", None, [("write", {"path": "migrations/0042_ledger_booked_at_idx.sql",
                                         "content": "CREATE INDEX CONCURRENTLY "
                                                    "ledger_entries_booked_at_idx ON "
                                                    "ledger_entries (booked_at, account_id) "
                                                    "INCLUDE (amount);\n"})]),
        ("r", None, "Successfully wrote 121 bytes to migrations/0042_ledger_booked_at_idx.sql",
         False),
        ("a", "done", "With the index the endpoint answers in 180 ms (Index Only Scan)."),
    ]),
    Session("certbot-404", "pi", f"{W}/infra", 50, [
        ("u", "q", "Monitoring says the api.acme.dev certificate expires in 2 days, why didn't "
         "certbot renew it?"),
        ("c", "renew", None, [("bash", {"command": "sudo certbot renew --dry-run"})]),
        ("r", "renew_r", "Processing /etc/letsencrypt/renewal/api.acme.dev.conf\nCertbot failed "
         "to authenticate some domains (authenticator: webroot). The Certificate Authority "
         "reported these problems:\n  Domain: api.acme.dev\n  Type:   unauthorized\n  Detail: "
         "203.0.113.7: Invalid response from "
         "http://api.acme.dev/.well-known/acme-challenge/Xk2nP0q: 404\n\nHint: The Certificate "
         "Authority failed to download the temporary challenge files created by Certbot. Ensure "
         "that the listed domains serve their content from the provided --webroot-path/-w and "
         "that files created there can be downloaded from the internet.", True),
        ("a", "ans", "The HTTP-01 challenge returns 404: since the nginx refactor, port 80 "
         "redirects everything to HTTPS, including /.well-known/acme-challenge/, and the HTTPS "
         "vhost has a different root. Add a location for /.well-known/acme-challenge/ with root "
         "/var/www/certbot to the port 80 server block."),
        ("c", None, None, [("edit", {"path": "/etc/nginx/sites-available/api.acme.dev",
                                     "edits": [{
            "oldText": "    return 301 https://$host$request_uri;",
            "newText": "    location /.well-known/acme-challenge/ { root /var/www/certbot; }\n    "
                       "location / { return 301 https://$host$request_uri; }"}]})]),
        ("r", None, "Successfully replaced 1 block(s) in /etc/nginx/sites-available/api.acme.dev.",
         False),
        ("b", None, "sudo certbot renew --force-renewal", "Congratulations, all renewals "
         "succeeded:\n  /etc/letsencrypt/live/api.acme.dev/fullchain.pem (success)", 0),
    ]),
    Session("hub-listeners", "py", f"{W}/realtime-hub", 52, [
        ("u", "q", "The hub logs MaxListenersExceededWarning and its memory grows until the "
         "container gets OOM-killed every few hours"),
        ("c", "grep", None, [("bash", {"command": "grep -n \"MaxListeners\" "
                                                  "logs/hub-2026-11-19.log | head -3"})]),
        ("r", "grep_r", "1822:(node:1) MaxListenersExceededWarning: Possible EventEmitter "
         "memory leak detected. 11 message listeners added to [Redis]. Use "
         "emitter.setMaxListeners() to increase limit\n4410:(node:1) "
         "MaxListenersExceededWarning: Possible EventEmitter memory leak detected. 11 message "
         "listeners added to [Redis]. Use emitter.setMaxListeners() to increase limit", False),
        ("c", "read", None, [("read", {"path": "src/rooms/subscribe.ts"})]),
        ("r", "read_r", "export function joinRoom(socket: Socket, room: string) {\n  "
         "redisSub.subscribe(`room:${room}`);\n  redisSub.on('message', (channel, msg) => {\n    "
         "if (channel === `room:${room}`) socket.emit('msg', JSON.parse(msg));\n  });\n}\n",
         False),
        ("a", "why", "Every joinRoom adds a new 'message' listener on the shared Redis "
         "subscriber and nothing removes it when the socket disconnects, so listeners and their "
         "closures pile up. I'll keep one listener that dispatches by channel to a Map of room "
         "to sockets, and remove the socket on disconnect."),
    ]),
    Session("bisect-fonts", "pi", f"{W}/pdf-renderer", 55, [
        ("u", "q", "Rendering invoices got 3x slower somewhere between v2.3.0 and v2.5.0, bisect "
         "it"),
        ("c", "bisect", None, [("bash", {"command": "git bisect start v2.5.0 v2.3.0 && git "
                                                    "bisect run node scripts/bench-render.js "
                                                    "--max-ms 400"})]),
        ("r", "bisect_r", "running 'node' 'scripts/bench-render.js' '--max-ms' '400'\nrender "
         "p50 1210 ms (limit 400)\n8c41f0e9b2d7a3c5e1f6048d9b7a2c3e4f5a6b7c is the first bad "
         "commit\ncommit 8c41f0e9b2d7a3c5e1f6048d9b7a2c3e4f5a6b7c\nAuthor: Dana Ruiz "
         "<dana@acme.dev>\nDate:   Tue Oct 14 11:02:37 2026 +0200\n\n    fonts: embed full font "
         "files instead of subsets\n\n src/fonts/embed.ts | 12 ++++--------\n 1 file changed, 4 "
         "insertions(+), 8 deletions(-)\nbisect found first bad commit", False),
        ("a", "why", "The first bad commit is 8c41f0e (\"fonts: embed full font files instead "
         "of subsets\"): each invoice now embeds the whole Noto Sans file (4.1 MB) instead of a "
         "subset. Turning subsetting back on with fontkit's createSubset brings rendering back "
         "to about 380 ms."),
        ("c", None, None, [("bash", {"command": "git bisect reset"})]),
        ("r", None, "Previous HEAD position was 8c41f0e fonts: embed full font files instead of "
         "subsets\nSwitched to branch 'main'", False),
    ]),
    Session("poetry-pydantic", "py", f"{W}/ml-service", 58, [
        ("u", "q", "poetry lock fails after adding pydantic 2, can you untangle the versions?"),
        ("c", "add", None, [("bash", {"command": "poetry add pydantic@^2.7"})]),
        ("r", "add_r", "Updating dependencies\nResolving dependencies... (4.2s)\n\nBecause "
         "fastapi (0.95.2) depends on pydantic (>=1.6.2,!=1.7,!=1.7.1,!=1.7.2,!=1.7.3,!=1.8,"
         "!=1.8.1,<2.0.0)\n and no versions of fastapi match >0.95.2,<0.96.0, fastapi "
         "(>=0.95.2,<0.96.0) requires pydantic (>=1.6.2,<2.0.0).\nSo, because ml-service "
         "depends on both fastapi (^0.95.2) and pydantic (^2.7), version solving failed.",
         True),
        ("a", "why", "fastapi 0.95 caps pydantic below 2. FastAPI supports pydantic 2 from "
         "0.100; bumping fastapi to ^0.111 together with pydantic ^2.7 resolves. BaseSettings "
         "moved to the pydantic-settings package, so src/config.py needs that import too."),
        ("c", "add2", None, [("bash", {"command": "poetry add fastapi@^0.111 pydantic@^2.7 "
                                                  "pydantic-settings"})]),
        ("r", "add2_r", "Updating dependencies\nResolving dependencies... (6.8s)\n\nPackage "
         "operations: 3 installs, 4 updates, 0 removals\n  - Updating pydantic (1.10.13 -> "
         "2.7.4)\n  - Installing pydantic-core (2.18.4)\n  - Installing pydantic-settings "
         "(2.3.3)\n  - Updating fastapi (0.95.2 -> 0.111.0)\n\nWriting lock file", False),
    ]),
    Session("cors-space", "pi", f"{W}/storefront", 60, [
        ("u", "q", "The browser console says: Access to fetch at 'https://api.shop.test/cart' "
         "from origin 'https://shop.test' has been blocked by CORS policy: Response to preflight "
         "request doesn't pass access control check: No 'Access-Control-Allow-Origin' header is "
         "present on the requested resource."),
        ("c", "read", None, [("read", {"path": "api/src/middleware/cors.ts"})]),
        ("r", "read_r", "const ALLOWED = (process.env.CORS_ORIGINS ?? '').split(',');\nexport "
         "const cors = (req, res, next) => {\n  const origin = req.headers.origin;\n  if "
         "(ALLOWED.includes(origin)) {\n    res.setHeader('Access-Control-Allow-Origin', "
         "origin);\n    res.setHeader('Vary', 'Origin');\n  }\n  if (req.method === 'OPTIONS') "
         "return res.status(204).end();\n  next();\n};\n", False),
        ("a", "ans", "The preflight fails because CORS_ORIGINS in the API's .env is "
         "'https://shop.test ,https://admin.shop.test' with a space, so includes() never "
         "matches. I trimmed the entries, and preflights now also answer with "
         "Access-Control-Allow-Methods and Access-Control-Allow-Headers."),
    ]),
    Session("journal-full", "py", f"{W}/ops-scripts", 63, [
        ("b", "df", "df -h /var", "Filesystem      Size  Used Avail Use% Mounted on\n"
         "/dev/nvme0n1p3   40G   40G     0 100% /var", 0),
        ("u", "q", "The VM's /var is full again, what is eating the space?"),
        ("c", "du", None, [("bash", {"command": "sudo du -xh /var --max-depth=3 | sort -rh | "
                                               "head -5"})]),
        ("r", "du_r", "39G\t/var\n37G\t/var/log\n36G\t/var/log/journal\n36G\t"
         "/var/log/journal/8f2c0e1d4b6a4e0f9d3c2b1a0e9f8d7c\n1.1G\t/var/lib", False),
        ("a", "ans", "systemd-journald keeps 36G of logs because journald.conf sets no "
         "SystemMaxUse. I vacuumed it to 2G and set SystemMaxUse=2G in "
         "/etc/systemd/journald.conf.d/size.conf."),
        ("c", "vac", None, [("bash", {"command": "sudo journalctl --vacuum-size=2G"})]),
        ("r", "vac_r", "Vacuuming done, freed 34.1G of archived journals from "
         "/var/log/journal/8f2c0e1d4b6a4e0f9d3c2b1a0e9f8d7c.", False),
    ]),
    Session("hydration-price", "pi", f"{W}/marketing-site", 66, [
        ("u", "q", "Next.js shows 'Text content does not match server-rendered HTML' on the "
         "pricing page"),
        ("c", "read", None, [("read", {"path": "app/pricing/PriceTag.tsx"})]),
        ("r", "read_r", "export function PriceTag({ cents }: { cents: number }) {\n  return "
         "<span>{new Intl.NumberFormat(undefined, { style: 'currency', currency: 'EUR' })"
         ".format(cents / 100)}</span>;\n}\n", False),
        ("a", "ans", "Intl.NumberFormat(undefined) uses the server's locale (en-US: €49.00) "
         "during SSR and the browser's (de-DE: 49,00 €) on hydration, so the text differs. I "
         "pass the locale from the route params to PriceTag so both sides format the same "
         "way."),
        ("c", None, None, [("edit", {"path": "app/pricing/PriceTag.tsx", "edits": [{
            "oldText": "new Intl.NumberFormat(undefined,",
            "newText": "new Intl.NumberFormat(locale,"}]})]),
        ("r", None, "Successfully replaced 1 block(s) in app/pricing/PriceTag.tsx.", False),
    ]),
    Session("kafka-poll", "py", f"{W}/order-events", 69, [
        ("u", "q", "Consumer lag on the orders topic keeps growing, the consumer group "
         "rebalances every few minutes"),
        ("c", "desc", None, [("bash", {"command": "kafka-consumer-groups.sh "
                                                  "--bootstrap-server kafka:9092 --describe "
                                                  "--group order-projector"})]),
        ("r", "desc_r", "GROUP           TOPIC   PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG "
         "    CONSUMER-ID\norder-projector orders  0          1184220         1302977         "
         "118757  -\norder-projector orders  1          1190012         1301554         111542  "
         "-\norder-projector orders  2          1179980         1299318         119338  -\n\n"
         "Consumer group 'order-projector' has no active members.", False),
        ("a", "why", "Processing a batch takes longer than max.poll.interval.ms (300000), so "
         "the broker evicts the consumer and the group rebalances before offsets are committed. "
         "I lowered max.poll.records from 500 to 50 in config/consumer.properties, so each poll "
         "finishes well within the interval."),
    ]),
    Session("tf-lock", "pi", f"{W}/platform-tf", 72, [
        ("u", "q", "terraform apply says the state is locked, but nobody else is running it"),
        ("c", "apply", None, [("bash", {"command": "terraform apply -auto-approve"})]),
        ("r", "apply_r", "Acquiring state lock. This may take a few moments...\n╷\n│ Error: "
         "Error acquiring the state lock\n│ \n│ Error message: ConditionalCheckFailedException: "
         "The conditional request failed\n│ Lock Info:\n│   ID:        "
         "6f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b\n│   Path:      "
         "acme-tfstate/platform/prod.tfstate\n│   Operation: OperationTypeApply\n│   Who:       "
         "runner@gha-7f9c\n│   Version:   1.9.5\n│   Created:   2026-11-20 22:41:07 UTC\n╵",
         True),
        ("a", "why", "The lock was taken by a GitHub Actions runner (runner@gha-7f9c) whose job "
         "was cancelled yesterday at 22:41, so it never released it. Once you confirm no "
         "pipeline is running, `terraform force-unlock 6f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b` "
         "releases it."),
        ("u", "ok", "confirmed, nothing is running, unlock it"),
        ("c", "unlock", None, [("bash", {"command": "terraform force-unlock -force "
                                                    "6f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b"})]),
        ("r", "unlock_r", "Terraform state has been successfully unlocked!", False),
    ]),
    Session("kotlin-meta", "py", f"{W}/fitness-android", 75, [
        ("u", "q", "The Android build broke after Android Studio updated the Kotlin plugin"),
        ("c", "gradle", None, [("bash", {"command": "./gradlew :app:assembleDebug"})]),
        ("r", "gradle_r", "e: file:///bench/work/fitness-android/app/src/main/java/dev/acme/fit/"
         "WorkoutViewModel.kt:12:8 Class 'kotlinx.coroutines.flow.StateFlow' was compiled with "
         "an incompatible version of Kotlin. The binary version of its metadata is 2.0.0, "
         "expected version is 1.8.0.\n\nFAILURE: Build failed with an exception.\n\n* What went "
         "wrong:\nExecution failed for task ':app:compileDebugKotlin'.", True),
        ("a", "why", "kotlinx-coroutines 1.9 was compiled with Kotlin 2.0 but the project still "
         "applies the Kotlin Gradle plugin 1.8.22. Bumping org.jetbrains.kotlin.android to "
         "2.0.21 in gradle/libs.versions.toml, with the compose compiler plugin, fixes the "
         "metadata mismatch."),
    ]),
    Session("dark-mode", "pi", f"{W}/notes-app", 78, [
        ("u", "q", "Add a dark mode toggle to the settings page that defaults to the system "
         "preference"),
        ("a", "plan", "I'll store the choice in localStorage under 'theme' ('light' | 'dark' | "
         "'system'), resolve 'system' with matchMedia('(prefers-color-scheme: dark)'), and set "
         "data-theme on <html> before first paint from an inline script in index.html, to avoid "
         "a flash of the light theme."),
        ("c", None, None, [("write", {"path": "src/theme.ts", "content":
                                      "export type Theme = 'light' | 'dark' | 'system';\nexport "
                                      "function resolveTheme(t: Theme): 'light' | 'dark' {\n  if "
                                      "(t !== 'system') return t;\n  return matchMedia('(prefers-"
                                      "color-scheme: dark)').matches ? 'dark' : 'light';\n}\n"})]),
        ("r", None, "Successfully wrote 214 bytes to src/theme.ts", False),
        ("a", None, "Done: src/theme.ts, the toggle in SettingsPage.tsx, and the inline script "
         "in index.html."),
        ("n", "name", "dark mode toggle with system preference"),
    ]),
]
