#!/usr/bin/env bash
# Installs Pi's own session writer (@mariozechner/pi-coding-agent, pinned in
# tests/piwriter/package-lock.json) for the tests that write sessions with Pi itself.
# Idempotent: skips `npm ci` when node_modules already matches the lock file.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
"$ROOT/scripts/npm-ci-once" "$ROOT/tests/piwriter" piwriter
cd "$ROOT/tests/piwriter"
node -e 'console.log("piwriter: pi-coding-agent", require("./node_modules/@mariozechner/pi-coding-agent/package.json").version)'
