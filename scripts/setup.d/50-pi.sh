#!/usr/bin/env bash
# Installs the Pi extension's npm dependencies (clients/pi/package-lock.json): Pi itself, pinned,
# for the end-to-end tests in tests/pi (Pi 1.6.0, @earendil-works/pi-coding-agent, run on Node 22;
# and the oldest supported Pi, 0.73.1, @mariozechner/pi-coding-agent, in one test); TypeScript,
# typescript-eslint and jiti for its type check, lint and unit tests. Idempotent: skips `npm ci`
# when node_modules already matches the lock file. A failure makes tests/pi skip, saying why.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TOOLS=${PI_EVENT_SEARCH_TOOLS:-$ROOT/.tools}
[ -x "$TOOLS/node22/bin/node" ] && export PATH="$TOOLS/node22/bin:$PATH"
"$ROOT/scripts/npm-ci-once" "$ROOT/clients/pi" pi \
  @earendil-works/pi-coding-agent @mariozechner/pi-coding-agent
cd "$ROOT/clients/pi"
for want in "@earendil-works/pi-coding-agent 1.6.0" "@mariozechner/pi-coding-agent 0.73.1"; do
  set -- $want
  version=$(node -p "require('./node_modules/$1/package.json').version")
  [ "$version" = "$2" ] || { echo "expected $1 $2, npm installed $version" >&2; exit 1; }
  echo "clients/pi: $1 $version installed"
done
