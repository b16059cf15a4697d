#!/usr/bin/env bash
# Installs the Pi extension's npm dependencies (clients/pi/package-lock.json): Pi itself
# (@mariozechner/pi-coding-agent 0.73.1, pinned) for the end-to-end tests in tests/pi; TypeScript,
# typescript-eslint and jiti for its type check, lint and unit tests. Idempotent: skips `npm ci`
# when node_modules already matches the lock file. A failure makes tests/pi skip, saying why.
set -euo pipefail
cd "$(dirname "$0")/../../clients/pi"
command -v node >/dev/null || { echo "node not found: Pi extension tests will skip" >&2; exit 1; }
command -v npm >/dev/null || { echo "npm not found: Pi extension tests will skip" >&2; exit 1; }
stamp=node_modules/.pi-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] \
  && [ -f node_modules/@mariozechner/pi-coding-agent/package.json ]; then
  echo "clients/pi: node_modules up to date"
  exit 0
fi
npm ci --no-audit --no-fund
echo "$want" >"$stamp"
version=$(node -p 'require("./node_modules/@mariozechner/pi-coding-agent/package.json").version')
[ "$version" = "0.73.1" ] || { echo "expected Pi 0.73.1, npm installed $version" >&2; exit 1; }
echo "clients/pi: Pi $version installed"
