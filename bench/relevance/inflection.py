"""The relevance set: events a person would look for, and the queries they would type for them.

Each item is one planted event (its shape and text) and the natural queries that should find it:
inflected words ("build failing" for "the build fails"), two- and three-word queries, file names,
error messages, identifiers, and a few quoted phrases. Every query word occurs in the event's text,
exactly or as another English inflection (fail/fails/failed/failing), inside one searchable
fragment of it. `bench/relevance/legacy.py` plants the events into a corpus and measures MRR@10 and
recall@10 through the server.

Shapes: ("user", text) user prompt; ("assistant", text) assistant reply; ("result", tool, args,
output) tool result of a call; ("bash", command, output) a `!` bash run (the queries here target
one of its two fragments); ("name", text) a session name.
"""

from __future__ import annotations

from typing import Any

# category of a query: inflected | words | file | error | identifier | phrase
Q = tuple[str, str]

ITEMS: list[tuple[tuple[Any, ...], list[Q]]] = [
    (("user", "The build fails on CI since the lockfile update. Can you check why pnpm install "
      "breaks?"),
     [("build failing since lockfile", "inflected"), ("pnpm install breaks", "words")]),
    (("assistant", "I updated the lockfile and pinned esbuild to 0.19.2, the CI build passes "
      "again."),
     [("updating lockfile esbuild", "inflected"), ("pinned esbuild", "words")]),
    (("result", "bash", {"command": "npx vitest run tests/session_parser.test.ts"},
      "FAIL tests/session_parser.test.ts > parses a torn last line\nAssertionError: expected 3 "
      "to equal 2\n Test Files  1 failed (1)\n      Tests  1 failed | 41 passed (42)"),
     [("session_parser.test.ts", "file"), ("parsing torn lines fails", "inflected")]),
    (("user", "Rename getUserById to findUserById everywhere, including the tests in "
      "src/users/repository.test.ts"),
     [("getUserById", "identifier"), ("rename getUserById findUserById", "words"),
      ("repository.test.ts", "file")]),
    (("bash", "git rebase origin/main",
      "CONFLICT (content): Merge conflict in src/server/router.ts\nerror: could not apply "
      "3f9c2ab... Add rate limiter to router"),
     [("merge conflict router.ts", "file"), ("conflicts applying rate limiter", "inflected")]),
    (("result", "bash", {"command": "node scripts/migrate.js"},
      "Error: ECONNRESET: socket hang up\n    at TLSSocket.socketOnEnd (node:_http_client:524:23)"
      "\nmigration 20260114_add_sessions_index aborted"),
     [("ECONNRESET socket hang up", "error"), ("migrations aborted socket", "inflected"),
      ('"socket hang up"', "phrase")]),
    (("assistant", "The flaky test in websocket.spec.ts times out because the reconnect backoff "
      "doubles without a cap; I capped it at 30 seconds."),
     [("flaky websocket test", "words"), ("capping reconnect backoff", "inflected"),
      ("websocket.spec.ts", "file")]),
    (("user", "Deploying to staging failed with a 502 from the load balancer, the health check on "
      "/healthz keeps timing out"),
     [("deploy staging 502", "inflected"), ("healthz timing out", "words")]),
    (("result", "bash", {"command": "cargo build --release"},
      "error[E0502]: cannot borrow `self.buffer` as mutable because it is also borrowed as "
      "immutable\n  --> src/ring_buffer.rs:88:9"),
     [("cannot borrow as mutable", "error"), ("ring_buffer.rs", "file"), ("E0502", "identifier")]),
    (("user", "Add a --dry-run flag to the cleanup command so it only prints the files it would "
      "delete"),
     [("dry-run flag cleanup", "words"), ("deleting files dry run", "inflected")]),
    (("assistant", "Postgres rejected the migration because the column user_email already exists; "
      "I made the migration idempotent with IF NOT EXISTS."),
     [("column already exists migration", "error"), ("rejects migration postgres", "inflected"),
      ("user_email idempotent", "identifier")]),
    (("result", "bash", {"command": "npm run typecheck"},
      "src/api/handlers/upload.ts(41,7): error TS2345: Argument of type 'string | undefined' is "
      "not assignable to parameter of type 'string'."),
     [("TS2345", "identifier"), ("not assignable to parameter", "error"),
      ("upload.ts assignable", "file")]),
    (("user", "Why is the memory usage growing every hour? I suspect the LRU cache in the image "
      "resizer never evicts entries"),
     [("memory grows every hour", "inflected"), ("resizer cache evicting", "inflected")]),
    (("name", "Fix OAuth callback redirect loop"),
     [("oauth redirect loop", "words"), ("fixing oauth callback", "inflected")]),
    (("bash", "docker compose up -d postgres",
      "Error response from daemon: driver failed programming external connectivity on endpoint "
      "db: Bind for 0.0.0.0:5432 failed: port is already allocated"),
     [("port is already allocated", "error"), ("5432 already allocated", "identifier"),
      ("port already allocated failing", "inflected"), ('"port is already allocated"', "phrase")]),
    (("assistant", "The tokenizer splits camelCase identifiers, so searching parseHeaderLine now "
      "finds the definition in src/jsonl/header.ts."),
     [("parseHeaderLine", "identifier"), ("tokenizer splitting camelCase", "inflected")]),
    (("result", "read", {"path": "src/config/defaults.ts"},
      "export const DEFAULT_TIMEOUT_MS = 15_000;\nexport const MAX_RETRIES = 5;\nexport const "
      "RETRY_JITTER = 0.2;"),
     [("DEFAULT_TIMEOUT_MS", "identifier"), ("MAX_RETRIES jitter", "identifier")]),
    (("user", "Tests pass locally but fail on the GitHub runner with ENOSPC: no space left on "
      "device"),
     [("ENOSPC no space left", "error"), ("tests failing on runner", "inflected"),
      ("passing locally", "inflected")]),
    (("assistant", "I rewrote the retry loop so it retries only idempotent requests and stops "
      "after three attempts."),
     [("retrying idempotent requests", "inflected"), ("stop after three attempts", "inflected")]),
    (("result", "grep", {"pattern": "TODO(perf)", "path": "src"},
      "src/search/ranker.py:112: # TODO(perf): bm25 over the whole candidate window\n"
      "src/search/snippets.py:40: # TODO(perf): decompress incrementally"),
     [("ranker.py", "file"), ("TODO perf decompress", "words"),
      ("decompressing incrementally", "inflected")]),
    (("user", "Please bump the Node version to 22 in .nvmrc and the Dockerfile, and update the "
      "engines field in package.json"),
     [(".nvmrc", "file"), ("bumping node version dockerfile", "inflected"),
      ("engines field package.json", "file")]),
    (("bash", "pytest -x tests/test_billing.py -k proration",
      "FAILED tests/test_billing.py::test_proration_rounds_down - assert Decimal('10.33') == "
      "Decimal('10.34')\n1 failed, 57 passed in 3.21s"),
     [("test_billing.py proration", "file"), ("proration rounding", "inflected"),
      ("test_proration_rounds_down", "identifier")]),
    (("assistant", "The segfault comes from freeing the parser arena twice when an include fails; "
      "the second free is now guarded."),
     [("segfault parser arena", "words"), ("include failing arena", "inflected")]),
    (("user", "Can you profile why the search endpoint is slow? p95 went from 40 ms to 900 ms "
      "after we added the permissions join"),
     [("search endpoint slow permissions", "words"), ("profiling slow search endpoint",
                                                      "inflected"),
      ("permission join slow", "inflected")]),
    (("result", "bash", {"command": "kubectl get pods -n payments"},
      "NAME                          READY   STATUS             RESTARTS   AGE\n"
      "payments-api-7d9f8b6c5-x2x9z  0/1     CrashLoopBackOff   14         47m"),
     [("CrashLoopBackOff payments", "error"), ("payments restarting", "inflected")]),
    (("assistant", "I split the 1,400-line handlers.py into handlers/search.py, handlers/read.py "
      "and handlers/trace.py; imports are unchanged for callers."),
     [("split handlers.py", "file"), ("splitting handlers imports unchanged", "inflected")]),
    (("user", "The CSV export drops rows with a comma inside quoted fields"),
     [("csv export dropping rows", "inflected"), ("comma inside quoted fields", "words")]),
    (("result", "bash", {"command": "terraform plan"},
      "Error: Invalid provider configuration\n  Provider \"registry.terraform.io/hashicorp/aws\" "
      "requires explicit configuration. Add a provider block to the root module"),
     [("invalid provider configuration", "error"), ("terraform aws provider block", "words")]),
    (("user", "Add rate limiting to the login endpoint: five attempts per minute per IP, then a "
      "429"),
     [("rate limit login", "inflected"), ("429 login attempts", "words")]),
    (("assistant", "Fixed: the date picker showed yesterday for users east of UTC because we "
      "parsed the ISO date as local time."),
     [("date picker yesterday", "words"), ("parsing iso date local time", "inflected"),
      ("fixes date picker utc", "inflected")]),
    (("name", "Migrate auth from JWT sessions to cookies"),
     [("migrating auth cookies", "inflected"), ("jwt cookies", "words")]),
    (("bash", "npm audit --production",
      "lodash  <4.17.21\nSeverity: high\nPrototype Pollution in lodash - "
      "https://github.com/advisories/GHSA-p6mc-m468-83gw\nfix available via `npm audit fix`"),
     [("prototype pollution lodash", "error"), ("GHSA-p6mc-m468-83gw", "identifier"),
      ("auditing lodash severity", "inflected")]),
    (("user", "The mobile app crashes on launch on Android 14 when notifications permission is "
      "denied"),
     [("app crashing on launch android", "inflected"),
      ("notifications permission denied android", "words")]),
    (("assistant", "The N+1 query in OrderSerializer came from loading line items lazily; "
      "prefetch_related('items') brings it down to two queries."),
     [("OrderSerializer", "identifier"), ("prefetch_related", "identifier"),
      ("loads line items lazily", "inflected")]),
    (("result", "bash", {"command": "git log --oneline -5"},
      "a1b2c3d Revert \"Enable HTTP/2 push\"\n9f8e7d6 Enable HTTP/2 push for static assets\n"
      "5e4d3c2 Bump undici to 6.6.2"),
     [("reverted http push static assets", "inflected"),
      ("enabling push static assets", "inflected")]),
    (("user", "Rotate the Stripe webhook secret and make the old one valid for 24 hours during "
      "the rollover"),
     [("rotating stripe webhook secret", "inflected"), ("webhook secret rollover", "words")]),
    (("result", "bash", {"command": "go test ./..."},
      "--- FAIL: TestQueueDrainOnShutdown (2.00s)\n    queue_test.go:77: drain did not "
      "complete: 3 jobs still in flight\nFAIL\tgithub.com/acme/worker/queue\t2.114s"),
     [("TestQueueDrainOnShutdown", "identifier"), ("queue_test.go", "file"),
      ("jobs still in flight", "error"), ("queue draining failed", "inflected")]),
    (("assistant", "Switching the session store from Redis to SQLite removed the network hop; "
      "reads are now 0.3 ms at p99."),
     [("session store redis sqlite", "words"), ("switched redis to sqlite", "inflected")]),
    (("user", "Logs are full of 'Deprecation warning: Buffer() is deprecated' from the pdf "
      "library; silence it or upgrade the lib"),
     [("buffer deprecation warning pdf", "error"), ("upgrading pdf library", "inflected")]),
    (("bash", "psql -c 'VACUUM ANALYZE events'",
      "VACUUM\nWARNING:  skipping \"events_archive\" --- only table or database owner can "
      "vacuum it"),
     [("only table or database owner can vacuum", "error"), ("vacuum analyze events", "words")]),
    (("assistant", "Uploads over 100 MB failed because nginx's client_max_body_size was 10m; I "
      "raised it to 200m in deploy/nginx.conf."),
     [("client_max_body_size", "identifier"), ("nginx.conf", "file"),
      ("upload fails nginx", "inflected")]),
    (("user", "Write a migration that backfills the tenant_id column on invoices from the "
      "customers table"),
     [("backfill tenant_id invoices", "inflected"), ("tenant_id customers", "identifier")]),
    (("result", "bash", {"command": "python manage.py check"},
      "SystemCheckError: System check identified some issues:\nERRORS:\n?: (corsheaders.E013) "
      "Origin 'localhost:3000' in CORS_ALLOWED_ORIGINS is missing scheme or netloc"),
     [("CORS_ALLOWED_ORIGINS", "identifier"), ("origin missing scheme netloc", "error"),
      ("cors origins missing", "words")]),
    (("user", "Replace moment.js with date-fns, we only use format and addDays"),
     [("moment.js date-fns", "file"), ("replacing moment with date-fns", "inflected")]),
    (("assistant", "The websocket closes with code 1006 because the proxy idles out after 60 s; "
      "the client now sends a ping every 25 s."),
     [("websocket 1006", "identifier"), ("sending ping every 25", "inflected"),
      ("proxy idling websocket", "inflected")]),
    (("result", "bash", {"command": "eslint src --max-warnings 0"},
      "src/components/Checkout.tsx\n  88:5  error  React Hook useEffect has a missing "
      "dependency: 'cartId'  react-hooks/exhaustive-deps"),
     [("Checkout.tsx", "file"), ("useEffect missing dependency", "error"),
      ("exhaustive-deps", "identifier")]),
    (("user", "Our S3 bucket costs doubled last month; find which prefix is growing and whether "
      "lifecycle rules expire old logs"),
     [("s3 costs doubling", "inflected"), ("lifecycle rules expiring logs", "inflected")]),
    (("assistant", "I added an index on orders(customer_id, created_at); the dashboard query "
      "dropped from 2.1 s to 40 ms."),
     [("index customer_id created_at", "identifier"), ("dashboard query drops", "inflected"),
      ("adding index orders", "inflected")]),
    (("name", "Investigate flaky e2e checkout tests"),
     [("flaky checkout test", "inflected"), ("investigating flaky checkout", "inflected")]),
    (("bash", "./gradlew assembleRelease",
      "FAILURE: Build failed with an exception.\n* What went wrong:\nExecution failed for task "
      "':app:mergeReleaseResources'.\n> Android resource linking failed"),
     [("mergeReleaseResources", "identifier"), ("android resource linking failed", "error"),
      ("build failing android resource", "inflected")]),
    (("user", "Sort the search results by date when the query is empty instead of by relevance"),
     [("sorting results by date empty query", "inflected"), ("empty query relevance", "words")]),
    (("result", "bash", {"command": "curl -i https://api.internal/v2/orders"},
      "HTTP/1.1 401 Unauthorized\nWWW-Authenticate: Bearer error=\"invalid_token\", "
      "error_description=\"The access token expired\""),
     [("401 invalid_token", "identifier"), ("access token expired", "error"),
      ("expiring access token", "inflected")]),
    (("assistant", "The worker pool deadlocked because both jobs took the locks in opposite "
      "order; locks are now always taken account-first."),
     [("worker pool deadlock", "inflected"), ("locks taken opposite order", "words")]),
    (("user", "The nightly backup job silently skips tables with uppercase names"),
     [("backup skipping uppercase tables", "inflected"), ("nightly backup job", "words")]),
    (("result", "bash", {"command": "make lint"},
      "ruff check server tests\nserver/pi_event_search/query/search.py:88:5: F841 Local variable "
      "`rows` is assigned to but never used"),
     [("F841 rows never used", "identifier"), ("variable assigned but never used", "error")]),
    (("assistant", "Renamed the feature flag new_checkout_flow to checkout_v2 and removed the dead "
      "branch behind it."),
     [("new_checkout_flow", "identifier"), ("renaming feature flag", "inflected"),
      ("removing dead branch flag", "inflected")]),
    (("user", "The PDF invoices render the euro sign as a question mark; probably the font subset "
      "is missing the glyph"),
     [("euro sign question mark", "words"), ("invoice rendering euro", "inflected")]),
    (("bash", "openssl s_client -connect api.example.com:443",
      "verify error:num=20:unable to get local issuer certificate\nverify return:1"),
     [("unable to get local issuer certificate", "error"), ("openssl s_client", "identifier")]),
    (("assistant", "Memoizing the filtered list with useMemo stopped the table from re-rendering "
      "on every keystroke."),
     [("memoize filtered list", "inflected"), ("table rendering every keystroke", "words")]),
    (("user", "Our Sentry quota ran out on Tuesday; sample transactions at 10% and drop "
      "health-check spans"),
     [("sentry quota", "words"), ("sampling transactions sentry", "inflected")]),
]


def queries() -> list[dict[str, Any]]:
    """Flat list: one row per query, with the index of the item (event) it should find."""
    return [{"query": q, "category": cat, "item": i}
            for i, (_, qs) in enumerate(ITEMS) for q, cat in qs]
