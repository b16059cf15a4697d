"""The MCP server (`pi-event-search mcp`, the `mcp` extra): the Pi tools for any agent."""
