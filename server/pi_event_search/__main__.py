"""`python -m pi_event_search` runs the CLI (`serve` when given no command)."""

import sys

from pi_event_search.cli.main import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["serve"]))
