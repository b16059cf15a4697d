#!/usr/bin/env bash
# Installs Pi 1.6 (@earendil-works/pi-coding-agent 1.6.0, pinned by tests/mcpserver/pi16/package-lock.json)
# for tests/mcpserver/test_mcp_pi.py: a real Pi turn that calls `pi-event-search mcp` through `pi mcp add`.
# Pi 1.6 needs Node >= 22.19: 15-node22.sh's node comes first on PATH. Idempotent (a stamp of the
# lock's hash); a failure makes that test skip, saying why.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TOOLS=${PI_EVENT_SEARCH_TOOLS:-$ROOT/.tools}
[ -x "$TOOLS/node22/bin/node" ] && export PATH="$TOOLS/node22/bin:$PATH"
cd "$ROOT/tests/mcpserver/pi16"
command -v npm >/dev/null || { echo "npm not found: the MCP Pi test will skip" >&2; exit 1; }
stamp=node_modules/.mcp-pi16-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
pkg=node_modules/@earendil-works/pi-coding-agent/package.json
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f "$pkg" ]; then
  echo "mcp-pi16: node_modules up to date"
  exit 0
fi
npm ci --no-audit --no-fund
echo "$want" >"$stamp"
version=$(node -p "require('./$pkg').version")
[ "$version" = "1.6.0" ] || { echo "expected Pi 1.6.0, npm installed $version" >&2; exit 1; }
echo "tests/mcpserver/pi16: Pi $version installed"
