"""Retrieval measures: the registry (each measure with its table header and format), a ranking
reduced once per query or per run table, the bounds of a scoring call's options, paired
significance tests, and the chunking-invariant text figures.

Pure: plain data in, typed results out."""
