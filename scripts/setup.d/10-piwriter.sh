#!/usr/bin/env bash
# Installs Pi's own session writer (@mariozechner/pi-coding-agent, pinned in
# tests/piwriter/package-lock.json) for the tests that write sessions with Pi itself.
# Idempotent: skips `npm ci` when node_modules already matches the lock file.
set -euo pipefail
cd "$(dirname "$0")/../../tests/piwriter"
command -v node >/dev/null || { echo "node not found: Pi-writer tests will skip" >&2; exit 1; }
command -v npm >/dev/null || { echo "npm not found: Pi-writer tests will skip" >&2; exit 1; }
stamp=node_modules/.piwriter-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] \
  && [ -f node_modules/@mariozechner/pi-coding-agent/package.json ]; then
  echo "piwriter: node_modules up to date"
  exit 0
fi
npm ci --no-audit --no-fund
echo "$want" >"$stamp"
node -e 'console.log("piwriter: pi-coding-agent", require("./node_modules/@mariozechner/pi-coding-agent/package.json").version)'
