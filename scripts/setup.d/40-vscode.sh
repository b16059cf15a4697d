#!/usr/bin/env bash
# VS Code extension (clients/vscode): build, type-check and package the .vsix (with the bootstrap and
# this machine's wheelhouse it installs the server from when none is found: scripts/package,
# Python from $PYTHON, else the repository's .venv, else python3; dependency wheels cached in
# $PI_EVENT_SEARCH_TOOLS/wheel-cache); install what its
# end-to-end test needs (Debian chromium, code-server 4.100.3 = VS Code 1.100.3). Each missing
# piece makes only the tests that need it skip (tests/vscode/), saying why.
# Idempotent: npm ci runs only when package-lock.json changed; code-server only when absent.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TOOLS="${PI_EVENT_SEARCH_TOOLS:-$ROOT/.tools}"
EXT="$ROOT/clients/vscode"
CS="$TOOLS/code-server"
CS_VERSION=4.100.3
failed=0

command -v node >/dev/null && command -v npm >/dev/null || { echo "node/npm not found: VS Code tests will skip" >&2; exit 1; }

# node-gyp builds code-server's native modules against Node's headers. Unless an npm config names
# them (nodedir), it downloads them from nodejs.org, which a fresh HOME behind a firewall cannot:
# give it the system's headers when Node was installed with them (Debian: /usr/include/node).
if [ -z "${npm_config_nodedir:-}" ]; then
  node_prefix=$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")
  if [ -f "$node_prefix/include/node/common.gypi" ]; then
    export npm_config_nodedir="$node_prefix"
    echo "node-gyp: Node's headers from $node_prefix/include/node"
  fi
fi

echo "== apt: chromium, fonts, libkrb5-dev (code-server's kerberos module), ripgrep"
missing=()
command -v chromium >/dev/null || missing+=(chromium)
[ -d /usr/share/fonts/truetype/liberation ] || missing+=(fonts-liberation)
dpkg -s libkrb5-dev >/dev/null 2>&1 || missing+=(libkrb5-dev)
command -v rg >/dev/null || missing+=(ripgrep)
if [ ${#missing[@]} -gt 0 ]; then
  "$ROOT/scripts/apt-install" "the VS Code end-to-end tests" "${missing[@]}" || failed=1
fi

echo "== extension: npm ci, esbuild, tsc, wheelhouse, vsce package"
if [ -z "${PYTHON:-}" ] && [ -x "$ROOT/.venv/bin/python" ]; then export PYTHON="$ROOT/.venv/bin/python"; fi
(
  set -e
  cd "$EXT"
  stamp=node_modules/.lock.sha256
  want=$(sha256sum package-lock.json | cut -d' ' -f1)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    echo "node_modules up to date"
  else
    npm ci --no-audit --no-fund
    echo "$want" >"$stamp"
  fi
  start=$(date +%s%N)
  npm run -s build
  npx tsc --noEmit
  rm -f pi-event-search.vsix
  npm run -s package
  end=$(date +%s%N)
  echo "build+typecheck+package: $(( (end - start) / 1000000 )) ms; vsix $(stat -c %s pi-event-search.vsix) bytes"
) || { echo "extension build failed" >&2; failed=1; }

echo "== code-server $CS_VERSION into $CS"
if [ -f "$CS/node_modules/code-server/package.json" ] \
  && [ "$(node -p "require('$CS/node_modules/code-server/package.json').version")" = "$CS_VERSION" ]; then
  echo "code-server $CS_VERSION already installed"
else
  (
    set -e
    mkdir -p "$CS/tmp"
    cd "$CS"
    [ -f package.json ] || npm init -y >/dev/null
    # @vscode/ripgrep downloads rg from GitHub in its postinstall; seed its cache with Debian's rg
    # (version and asset name pinned by code-server 4.100.3's npm-shrinkwrap.json).
    if command -v rg >/dev/null; then
      mkdir -p rgcache tmp/vscode-ripgrep-cache-1.15.11
      cp "$(command -v rg)" rgcache/rg
      tar czf tmp/vscode-ripgrep-cache-1.15.11/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz -C rgcache rg
    fi
    # unsafe_perm: its postinstall refuses to run as root without it; yes: node-pty's npx node-gyp.
    TMPDIR="$CS/tmp" npm_config_yes=true npm_config_unsafe_perm=true \
      npm install --no-audit --no-fund "code-server@$CS_VERSION"
  ) || { echo "code-server install failed" >&2; failed=1; }
fi
exit $failed
