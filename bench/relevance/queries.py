"""Queries of the three-style relevance set (issue 37), over bench/relevance/sessions.py.

Styles (the issue's):
    copied  words copied from the event
    memory  typed from memory days later: 2-5 plain words, exactly one not in the event (a
            synonym, a word of the surrounding turn, a part of an identifier)
    agent   an agent's keyword query: 3-6 keywords, at most one not in the event
Each query names 1-4 acceptable answers as (session key, mark): a call and its result, a
question and its answer. They were written after the sessions, from a memory of them, before
any engine answered one; `relevance_set_check` (python -m bench.relevance --check) verifies the word
rules above against the answers' own text (FTS5 porter tokens, no identifier splitting), so a
style cannot drift towards what an engine happens to find.
"""

from __future__ import annotations

A = tuple[str, str]

# (session key, [answer marks], copied, memory, agent)
MOMENTS: list[tuple[str, list[str], str, str, str]] = [
    ("ws-sleep", ["q", "ans"], "retryCount never reset",
     "websocket reconnect bug after sleep", "websocket reconnect retry counter reset"),
    ("ws-sleep", ["read", "read_r"], "onclose MAX_RETRIES retryCount",
     "websocket client reconnect file", "ws-client.ts retryCount onclose setTimeout backoff"),
    ("pnpm-lock", ["inst", "inst_r"], "ERR_PNPM_OUTDATED_LOCKFILE frozen-lockfile",
     "pnpm lockfile stale", "pnpm install frozen lockfile error CI"),
    ("pnpm-lock", ["ans"], "regenerated pnpm-lock.yaml fastify",
     "fastify bump broke lockfile", "fastify lockfile pins regenerate pnpm-lock.yaml"),
    ("vitest-3ds", ["run", "run_r"], "Test timed out in 5000ms",
     "payment test timeout flaky", "vitest payment.spec.ts timed out 3DS"),
    ("vitest-3ds", ["edit", "done"], "testTimeout 20_000 vitest.config.ts",
     "vitest e2e timeout config", "vitest.config.ts testTimeout e2e increase"),
    ("knex-currency", ["mig", "mig_r"], "column currency of relation invoices already exists",
     "staging migration duplicate currency column", "knex migrate invoices currency already exists"),
    ("knex-currency", ["why", "edit"], "hasColumn invoices currency",
     "guard migration idempotent currency", "knex hasColumn guard migration currency"),
    ("es-9200", ["up"], "Bind for 0.0.0.0:9200 failed",
     "elasticsearch port 9200 taken", "docker compose elasticsearch 9200 port allocated"),
    ("es-9200", ["lsof", "lsof_r", "ans"], "lsof -iTCP:9200 -sTCP:LISTEN",
     "old elasticsearch process 9200", "lsof 9200 elasticsearch pid kill"),
    ("rebase-sync", ["rb", "rb_r"], "Merge conflict in src/sync/SyncQueue.kt",
     "rebase conflict sync queue", "git rebase conflict SyncQueue.kt offline-sync"),
    ("rebase-sync", ["res"], "kept the Room-backed queue",
     "rebase conflict room queue", "rebase Room queue flushIfOnline enqueue resolve"),
    ("smtp-crashloop", ["logs", "logs_r"],
     "required environment variable SMTP_RELAY_HOST is not set",
     "notifications worker smtp variable crash",
     "kubectl logs notifications-worker SMTP_RELAY_HOST panic"),
    ("smtp-crashloop", ["ask", "edit"], "add the fallback in code",
     "smtp host fallback old config", "env.go SMTP_HOST fallback Getenv"),
    ("rust-borrow", ["build", "build_r"], "cannot borrow self.pending as mutable more than once",
     "batcher borrow checker error", "cargo build E0499 batcher.rs mutable borrow"),
    ("rust-borrow", ["fix", "edit"], "take the vector out with std::mem::take",
     "borrow fix mem take", "batcher mem::take borrow drain fix"),
    ("nginx-413", ["q", "ans", "grep", "grep_r"], "413 Request Entity Too Large",
     "nginx upload limit 413", "nginx 413 upload client_max_body_size raise"),
    ("nginx-413", ["reload"], "nginx -t syntax is ok",
     "nginx config test reload", "nginx -t systemctl reload syntax"),
    ("etl-import", ["pytest", "pytest_r"], "No module named 'etl.loaders'",
     "pytest collection fails loaders", "pytest ModuleNotFoundError etl.loaders collection"),
    ("etl-import", ["why"], "find_packages skips directories",
     "loaders package missing init", "etl loaders __init__.py find_packages setuptools"),
    ("redis-oom", ["info", "info_r"], "maxmemory_policy:noeviction",
     "redis memory full staging", "redis-cli INFO memory maxmemory policy"),
    ("redis-oom", ["q", "ans"], "OOM command not allowed",
     "redis session ttl missing", "redis noeviction OOM login session TTL"),
    ("ts-variant", ["tsc", "tsc_r"], "error TS2322 ButtonVariant",
     "button ghost variant error", "tsc TS2322 Button.tsx ghost not assignable"),
    ("ts-variant", ["why", "edit"], "ButtonVariant lists only primary and danger",
     "ghost variant union type", "ButtonVariant ghost union tokens.ts"),
    ("gha-matrix", ["write", "done"], "matrix over Node 20 and 22",
     "github pipeline node matrix", "github actions workflow matrix node setup-node"),
    ("gha-matrix", ["log", "log_r", "ans2"], "needs an import attribute of type: json",
     "node 22 json import broken",
     "ERR_IMPORT_ATTRIBUTE_MISSING node 22 package.json assert"),
    ("go-race", ["race", "race_r"], "WARNING: DATA RACE",
     "data race limiter refill mutex", "go test -race TokenBucket refill Allow"),
    ("go-race", ["fix"], "renamed it refillLocked",
     "refill under lock race", "refillLocked mutex Allow race"),
    ("fly-health", ["deploy", "deploy_r"], "Failed due to unhealthy allocations",
     "fly deploy rollback health check", "fly deploy health check connection refused"),
    ("fly-health", ["why"], "fly.toml's internal_port is 8080",
     "app wrong port fly", "internal_port 8080 PORT listen 3000"),
    ("vite-env", ["q", "ans"], "Vite only exposes variables prefixed with VITE_",
     "vite env variables broken",
     "vite import.meta.env VITE_API_URL REACT_APP_API_URL undefined"),
    ("vite-env", ["grep", "grep_r"], "process.env.REACT_APP_SEGMENT_KEY",
     "react app env usages", "REACT_APP_ client.ts analytics.ts process.env"),
    ("ledger-index", ["explain", "explain_r"], "Seq Scan on ledger_entries",
     "ledger entries full scan", "EXPLAIN ANALYZE ledger_entries booked_at seq scan"),
    ("ledger-index", ["write", "done"], "CREATE INDEX CONCURRENTLY ledger_entries_booked_at_idx",
     "booked at index faster", "create index concurrently ledger_entries booked_at include"),
    ("certbot-404", ["renew", "renew_r"], "Certbot failed to authenticate some domains",
     "certbot renewal challenge broken", "certbot renew dry-run acme-challenge 404 unauthorized"),
    ("certbot-404", ["q", "ans"], "port 80 redirects everything to HTTPS",
     "cert renewal redirect https", "certbot http-01 challenge 404 redirect location"),
    ("hub-listeners", ["grep", "grep_r"], "Possible EventEmitter memory leak detected",
     "redis listeners leak warning hub",
     "MaxListenersExceededWarning EventEmitter leak Redis listeners"),
    ("hub-listeners", ["read", "read_r", "why"], "Every joinRoom adds a new 'message' listener",
     "room listener disconnect cleanup", "joinRoom redisSub message listener disconnect"),
    ("bisect-fonts", ["bisect", "bisect_r"], "is the first bad commit",
     "bisect render regression fonts", "git bisect bench-render first bad commit"),
    ("bisect-fonts", ["why"], "embed full font files instead of subsets",
     "invoice font subset fix", "8c41f0e fonts subset createSubset fontkit"),
    ("poetry-pydantic", ["add", "add_r"], "version solving failed",
     "poetry fastapi pydantic conflict", "poetry pydantic fastapi version solving"),
    ("poetry-pydantic", ["why"], "BaseSettings moved to the pydantic-settings package",
     "fastapi pydantic 2 upgrade", "fastapi pydantic BaseSettings pydantic-settings bump"),
    ("cors-space", ["q", "ans"], "blocked by CORS policy",
     "cors error shop origin", "CORS preflight Access-Control-Allow-Origin CORS_ORIGINS space"),
    ("cors-space", ["read", "read_r"], "ALLOWED.includes(origin)",
     "cors middleware origin list", "cors.ts middleware CORS_ORIGINS split"),
    ("journal-full", ["df"], "df -h /var",
     "var partition 100 used", "df /var 100% nvme0n1p3"),
    ("journal-full", ["du", "du_r", "ans"], "systemd-journald keeps 36G of logs",
     "journald logs huge var", "du /var/log/journal SystemMaxUse journald"),
    ("hydration-price", ["q", "ans"], "Text content does not match server-rendered HTML",
     "hydration error pricing page", "Next.js hydration Intl.NumberFormat locale PriceTag"),
    ("hydration-price", ["read", "read_r"], "NumberFormat undefined currency EUR",
     "pricetag currency format component", "PriceTag.tsx Intl.NumberFormat currency EUR"),
    ("kafka-poll", ["desc", "desc_r"], "has no active members",
     "kafka consumer lag growing", "kafka-consumer-groups describe order-projector lag"),
    ("kafka-poll", ["why"], "max.poll.records from 500 to 50",
     "kafka rebalance poll interval", "max.poll.interval.ms max.poll.records rebalance consumer"),
    ("tf-lock", ["apply", "apply_r"], "Error acquiring the state lock",
     "terraform state stuck lock", "terraform apply state lock ConditionalCheckFailedException"),
    ("tf-lock", ["unlock", "unlock_r"], "Terraform state has been successfully unlocked",
     "force unlock terraform stale", "terraform force-unlock state unlocked"),
    ("kotlin-meta", ["gradle", "gradle_r"], "compiled with an incompatible version of Kotlin",
     "android build kotlin mismatch", "gradle assembleDebug kotlin metadata incompatible"),
    ("kotlin-meta", ["why"], "Bumping org.jetbrains.kotlin.android to 2.0.21",
     "upgrade kotlin plugin version", "kotlin gradle plugin 2.0.21 libs.versions.toml coroutines"),
    ("dark-mode", ["q", "plan"], "prefers-color-scheme: dark",
     "dark mode os preference", "dark mode toggle localStorage matchMedia flash"),
    ("dark-mode", ["name"], "dark mode toggle",
     "dark theme toggle", "dark mode toggle system preference"),
]

STYLES = ("copied", "memory", "agent")


def style_queries() -> list[dict[str, object]]:
    """One row per query: {query, style, moment, answers: [(session key, mark), ...]}."""
    rows: list[dict[str, object]] = []
    for i, (key, marks, *texts) in enumerate(MOMENTS):
        for style, text in zip(STYLES, texts, strict=True):
            rows.append({"query": text, "style": style, "moment": i,
                         "answers": [(key, m) for m in marks]})
    return rows
