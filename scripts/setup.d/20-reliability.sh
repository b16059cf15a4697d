#!/usr/bin/env bash
# The read-only check of tests/reliability runs the CLI and the server under strace; without it
# that one test skips, saying why.
set -uo pipefail
if command -v strace >/dev/null; then strace -V | head -1; exit 0; fi
[ "$(id -u)" = 0 ] || { echo "strace missing and not root: the strace check will skip" >&2; exit 1; }
(apt-get update -qq && apt-get install -y -qq strace) >/dev/null && strace -V | head -1
