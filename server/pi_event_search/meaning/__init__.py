"""Meaning: a text as a vector (a small sentence-embedding model on the CPU), and the vectors read."""
