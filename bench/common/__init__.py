"""What the bench rooms and tests/ share: the seeded corpus generator (`corpus`), the stdio LSP client
(`lspclient`), the peer engine's venv (`peer`)."""
