#!/usr/bin/env bash
# Installs Pi's own session writer for the tests that write sessions with Pi itself: Pi 1.6
# (@earendil-works/pi-coding-agent, the reference) and the oldest supported Pi, 0.73.1
# (@mariozechner/pi-coding-agent), both pinned in tests/piwriter/package-lock.json. Pi 1.x runs on
# Node >= 22.19 (15-node22.sh, which on a first run comes after this script: npm installs Pi 1.x
# under Node 20 as well, with an engines warning); npm runs under it when it is there.
# Idempotent: skips `npm ci` when node_modules already matches the lock file.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TOOLS=${PI_EVENT_SEARCH_TOOLS:-$ROOT/.tools}
[ -x "$TOOLS/node22/bin/node" ] && export PATH="$TOOLS/node22/bin:$PATH"
"$ROOT/scripts/npm-ci-once" "$ROOT/tests/piwriter" piwriter \
  @earendil-works/pi-coding-agent @mariozechner/pi-coding-agent
cd "$ROOT/tests/piwriter"
node -e 'for (const p of ["@earendil-works", "@mariozechner"]) console.log("piwriter:", p,
  require(`./node_modules/${p}/pi-coding-agent/package.json`).version)'
