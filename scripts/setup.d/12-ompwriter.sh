#!/usr/bin/env bash
# Installs Oh My Pi's own session writer (@oh-my-pi/pi-coding-agent and the Bun it runs on, from
# the npm package `bun`, both pinned in tests/ompwriter/package-lock.json) for the tests that write
# sessions with Oh My Pi itself (tests/ompwriter.py). Idempotent: skips `npm ci` when node_modules
# already matches the lock file.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT/tests/ompwriter"
command -v npm >/dev/null || { echo "npm not found: Oh My Pi writer tests will skip" >&2; exit 1; }
stamp="node_modules/.ompwriter-lock.sha256"
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] \
  && [ -f node_modules/@oh-my-pi/pi-coding-agent/package.json ] && [ -x node_modules/.bin/bun ]; then
  echo "ompwriter: node_modules up to date"
  exit 0
fi
# `npm install`, not `npm ci`: the lock lacks the other platforms' optional natives
# (@oh-my-pi/pi-natives-darwin-*, ...), which this registry does not hold, and npm ci refuses that.
npm install --no-audit --no-fund --no-save
echo "$want" >"$stamp"
echo "ompwriter: oh-my-pi $(node -p 'require("./node_modules/@oh-my-pi/pi-coding-agent/package.json").version'), bun $(node_modules/.bin/bun --version)"
