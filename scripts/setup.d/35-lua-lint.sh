#!/usr/bin/env bash
# Lua lint tools for scripts/lint-lua: stylua from npm (the package ships the binary) into the
# gitignored tools dir, luacheck from Debian (lua-check). lua-language-server and selene are on no
# registry this project reaches, so they are not installed (scripts/lint-lua runs LuaLS if on PATH).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TOOLS="${PI_EVENT_SEARCH_TOOLS:-$ROOT/.tools}"
STYLUA_VERSION=2.5.2
failed=0

dest="$TOOLS/lua-lint"
if [ -x "$dest/node_modules/.bin/stylua" ] && "$dest/node_modules/.bin/stylua" --version | grep -q "$STYLUA_VERSION"; then
  echo "stylua $STYLUA_VERSION: present in $dest"
elif command -v npm >/dev/null; then
  mkdir -p "$dest"
  npm install --prefix "$dest" --no-audit --no-fund --no-save "@johnnymorganz/stylua-bin@$STYLUA_VERSION" \
    || { echo "npm install of stylua failed: stylua will be skipped" >&2; failed=1; }
else
  echo "npm not found: stylua will be skipped" >&2; failed=1
fi

if command -v luacheck >/dev/null; then
  echo "luacheck: $(luacheck --version | head -1)"
else
  "$(dirname "$0")/../apt-install" "the Lua lint" lua-check \
    || { echo "luacheck will be skipped" >&2; failed=1; }
fi
exit $failed
