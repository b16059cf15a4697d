"""Benchmarks of pi-event-search, one room (package) per kind of question; run from the repository
root as `.venv/bin/python -m bench.<room>.<tool>` (docs/benchmarks.md).

- `common`: what the rooms and tests/ share: the seeded corpus generator, the stdio LSP client, the
  peer engine's venv.
- `speed`: how fast: cold index, its floors and profiles, query latency, many servers, faults.
- `features`: one feature each, through the running server: file history, line origin, masking,
  document links, Pi's event_search tool.
- `relevance`: whether the right events come first: sets of queries with known answers.
- `report`: past runs (results/history.json), tables and the plot for docs/benchmarks.md.

Nothing here is a test; nothing asserts a time. Results go to bench/results/, scratch to bench/out/.
"""
