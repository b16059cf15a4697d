"""A bulk load (a first index, a rebuild): what its pass owns beyond rows, and lets go of in one place."""
