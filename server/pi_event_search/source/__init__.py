"""Reading Pi's session files: JSONL lines, discovery of sessions, projection of entries, the entry tree."""
