"""The relevance bench: sets of queries with known answers, the engines that answer them, scores.

- `inflection`: the older inflection set, planted in a generated corpus (`legacy`; bench/speed/run.py).
- `sessions`, `queries`, `filler`, `write`, `history`: the three-style set of issue 37, written from
  scripts, and the generated history around it.
- `realset`, `real`: the set of real Pi sessions from public repositories (issue 46).
- `styles`: corpora, engines (ours over the LSP, ripgrep, mnemo-search, the OR-ed bm25 floor) and
  the scores per style, shared by both three-style sets.

    .venv/bin/python -m bench.relevance --help
"""
