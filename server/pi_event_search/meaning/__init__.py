"""What a text means, as a vector: a small sentence-embedding model run on the CPU, so that a query
typed from memory finds the event that says the same thing in other words."""
