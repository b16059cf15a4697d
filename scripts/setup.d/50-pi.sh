#!/usr/bin/env bash
# Installs the Pi extension's npm dependencies (clients/pi/package-lock.json): Pi itself
# (@mariozechner/pi-coding-agent 0.73.1, pinned) for the end-to-end tests in tests/pi; TypeScript,
# typescript-eslint and jiti for its type check, lint and unit tests. Idempotent: skips `npm ci`
# when node_modules already matches the lock file. A failure makes tests/pi skip, saying why.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
"$ROOT/scripts/npm-ci-once" "$ROOT/clients/pi" pi
cd "$ROOT/clients/pi"
version=$(node -p 'require("./node_modules/@mariozechner/pi-coding-agent/package.json").version')
[ "$version" = "0.73.1" ] || { echo "expected Pi 0.73.1, npm installed $version" >&2; exit 1; }
echo "clients/pi: Pi $version installed"
