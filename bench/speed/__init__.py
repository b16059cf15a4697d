"""How fast: cold index against ripgrep and the peer (`run`, the main bench), what a cold index
cannot spend less on (`floors`), profiles (`hotspots`, `query_profile`, `relax_profile`), two engines
side by side (`query_ab`), per-request overhead (`roundtrip`), many servers on one index
(`multiproc`), faults (`faults`), the authorization predicate's cost (`found_in`), and a digest to show
an indexer change left every row as it was (`indexdigest`)."""
