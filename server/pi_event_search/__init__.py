"""pi-event-search: a local, read-only retrieval layer over Pi session history."""

__version__ = "0.1.0"
