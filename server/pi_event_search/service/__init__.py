"""The engine the LSP and the CLI call: one index, its connections and its refresh, and the watcher."""
