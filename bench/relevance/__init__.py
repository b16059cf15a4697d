"""The relevance bench: sets of queries with known answers, the engines that answer them, scores.

- `inflection`: the older inflection set, planted in a generated corpus (`legacy`; bench/run.py).
- `sessions`, `queries`, `filler`, `write`, `history`: the three-style set of issue 37, written from
  scripts, and the generated history around it.
- `realset`, `real`: the set of real Pi sessions from public repositories (issue 46).
- `styles`: corpora, engines (ours over the LSP, ripgrep, mnemo-search, the OR-ed bm25 floor) and
  the scores per style, shared by both three-style sets.

    .venv/bin/python -m bench.relevance --help
"""

import sys
from pathlib import Path

# The flat bench modules (corpus, lspclient, peer) are imported by name, as the scripts beside them do.
_BENCH = str(Path(__file__).resolve().parent.parent)
if _BENCH not in sys.path:
    sys.path.insert(0, _BENCH)
