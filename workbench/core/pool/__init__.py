"""The judging pool and queue: the depth-k union of systems' rankings, the outside-pool sample, an
annotator's queue and the counts it reports.

Pure: plain data in, typed results out."""
