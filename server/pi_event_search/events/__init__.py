"""One event and its surroundings: read, branch neighbours, trace, the event at a source location."""
