"""File evidence: the files events touched, a file's history, and the origin of a line."""
