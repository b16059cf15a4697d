"""Search: the query, inflections and prefixes, ranking, hits and snippets, states as of a time; status."""
