"""The command line: `pi-event-search index|search|read|trace|status|serve|file`, text rendering, the demo."""
