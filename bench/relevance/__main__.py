"""`python -m bench.relevance`: the three-style run (`--set scripted`, the default, or `--set real`),
or the inflection set with `--legacy CORPUS INDEX`."""

from .legacy import main

main()
