"""The SQLite index: schema, connections, a session as rows, and the indexer that keeps it current."""
