#!/usr/bin/env bash
# The read-only check of tests/reliability runs the CLI and the server under strace; without it
# that one test skips, saying why.
set -uo pipefail
if command -v strace >/dev/null; then strace -V | head -1; exit 0; fi
"$(dirname "$0")/../apt-install" "the read-only check of tests/reliability" strace >/dev/null \
  && strace -V | head -1
